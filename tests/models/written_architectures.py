"""Architectures torchvision does not ship, written out as their papers and public code define
them, small enough for the test suite: a LLaMA-style decoder, GPT-2 as Hugging Face writes it, a
wav2vec 2.0-style audio encoder, a diffusion-style U-Net, a WaveNet and PointNet. Each brings idioms the torchvision models lack: RMSNorm through
torch.rsqrt, rotary embeddings (Slice, Neg, Concat), SwiGLU; Conv1d feature extraction with
GroupNorm (InstanceNormalization in the export) and a grouped positional convolution; GroupNorm
with SiLU, nearest upsampling by constant scales and skip Concats; causal dilated Conv1d behind
pads computed in the graph, gated tanh x sigmoid halves of one product; Conv1d over points, a
learned 3 x 3 transform by bmm, a max over the points. Every layer is built on its own, so each
has its own weights.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from distinct_layers import distinct_layers


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(d))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, d, heads, hidden):
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.attn_norm, self.mlp_norm = RMSNorm(d), RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(d, hidden, bias=False), nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, d = x.shape
        y = self.attn_norm(x)
        q, k, v = (p(y).view(b, s, self.heads, self.head_dim).transpose(1, 2) for p in (self.q, self.k, self.v))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
        x = x + self.o(torch.matmul(scores.softmax(-1), v).transpose(1, 2).reshape(b, s, d))
        y = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class Llama(nn.Module):
    """Token ids [batch, 128] -> logits [batch, 128, 8000]: 4 layers, width 512, 8 heads."""

    def __init__(self, vocab=8000, d=512, heads=8, layers=4, hidden=1376, seq=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([LlamaBlock(d, heads, hidden) for _ in range(layers)])
        self.norm, self.head = RMSNorm(d), nn.Linear(d, vocab, bias=False)
        half = d // heads // 2
        inverse = 1.0 / (10000 ** (torch.arange(half).float() / half))
        angles = torch.outer(torch.arange(seq).float(), inverse).repeat(1, 2)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), float("-inf")), 1))

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x, self.cos, self.sin, self.mask)
        return self.head(self.norm(x))


class Conv1D(nn.Module):
    """Hugging Face's GPT-2 linear layer: x @ W + b through addmm on the rows, W stored [in, out]."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(0.02 * torch.randn(d_in, d_out))
        self.bias = nn.Parameter(0.02 * torch.randn(d_out))

    def forward(self, x):
        rows = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return rows.view(x.size()[:-1] + (self.weight.size(1),))


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Gpt2Block(nn.Module):
    def __init__(self, d, heads, context):
        super().__init__()
        self.d, self.heads = d, heads
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        with torch.no_grad():
            for norm in (self.ln_1, self.ln_2):
                norm.weight.normal_(1.0, 0.02)
        self.c_attn, self.attn_proj = Conv1D(d, 3 * d), Conv1D(d, d)
        self.c_fc, self.mlp_proj = Conv1D(d, 4 * d), Conv1D(4 * d, d)
        self.register_buffer("bias", torch.tril(torch.ones(context, context, dtype=torch.bool)).view(1, 1, context, context))

    def heads_of(self, t):
        return t.view(t.size()[:-1] + (self.heads, self.d // self.heads)).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.c_attn(self.ln_1(x)).split(self.d, dim=2)
        q, k, v = self.heads_of(q), self.heads_of(k), self.heads_of(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], v.size(-1) ** 0.5, dtype=q.dtype)
        q_len, k_len = q.size(-2), k.size(-2)
        causal = self.bias[:, :, k_len - q_len:k_len, :k_len]
        w = torch.where(causal, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype)).softmax(-1)
        a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        x = x + self.attn_proj(a.view(a.size()[:-2] + (self.d,)))
        return x + self.mlp_proj(gelu_new(self.c_fc(self.ln_2(x))))


class Gpt2(nn.Module):
    """GPT-2 as Hugging Face's modeling_gpt2 writes it (Conv1D's addmm, split, a causal-mask
    buffer sliced by the lengths, gelu_new, tied embeddings): token ids [batch, 128] -> logits
    [batch, 128, 8000]; 4 layers, width 256, 4 heads, a context of 256."""

    def __init__(self, vocab=8000, d=256, heads=4, layers=4, context=256):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.h = nn.ModuleList([Gpt2Block(d, heads, context) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)

    def forward(self, ids):
        positions = torch.arange(0, ids.size(-1), dtype=torch.long).unsqueeze(0)
        x = self.wte(ids) + self.wpe(positions)
        for block in self.h:
            x = block(x)
        return torch.matmul(self.ln_f(x), self.wte.weight.t())


class Wav2Vec(nn.Module):
    """One second of 16 kHz audio [batch, 16000] -> features [batch, 49, 384]."""

    def __init__(self, d=384, layers=4):
        super().__init__()
        convs, channels = [], 1
        for i, (kernel, stride) in enumerate([(10, 5)] + [(3, 2)] * 4 + [(2, 2)] * 2):
            convs.append(nn.Conv1d(channels, 256, kernel, stride, bias=False))
            if i == 0:
                convs.append(nn.GroupNorm(256, 256))
            convs.append(nn.GELU())
            channels = 256
        self.features = nn.Sequential(*convs)
        self.feature_norm, self.project = nn.LayerNorm(256), nn.Linear(256, d)
        self.position = nn.Conv1d(d, d, 128, padding=64, groups=16)
        layer = nn.TransformerEncoderLayer(d, 6, 4 * d, batch_first=True, activation="gelu")
        self.encoder = distinct_layers(torch, nn.TransformerEncoder(layer, layers))
        self.out_norm = nn.LayerNorm(d)

    def forward(self, audio):
        x = self.project(self.feature_norm(self.features(audio.unsqueeze(1)).transpose(1, 2)))
        position = F.gelu(self.position(x.transpose(1, 2))[:, :, :-1]).transpose(1, 2)
        return self.out_norm(self.encoder(x + position))


class ResBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.norm2, self.conv2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        y = self.conv1(F.silu(self.norm1(x)))
        return self.skip(x) + self.conv2(F.silu(self.norm2(y)))


class SpatialAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm, self.qkv, self.out = nn.GroupNorm(32, c), nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, c, h * w).unbind(1)
        weights = torch.softmax(q.transpose(1, 2) @ k / math.sqrt(c), -1)
        return x + self.out((v @ weights.transpose(1, 2)).reshape(b, c, h, w))


class UNet(nn.Module):
    """An image [batch, 3, 64, 64] -> [batch, 3, 64, 64]: two levels down and up, attention at the bottom."""

    def __init__(self, widths=(64, 128, 256)):
        super().__init__()
        a, b, c = widths
        self.stem = nn.Conv2d(3, a, 3, padding=1)
        self.down1, self.pool1 = ResBlock(a, a), nn.Conv2d(a, a, 3, 2, 1)
        self.down2, self.pool2 = ResBlock(a, b), nn.Conv2d(b, b, 3, 2, 1)
        self.middle = nn.Sequential(ResBlock(b, c), SpatialAttention(c), ResBlock(c, c))
        self.up2, self.up1 = ResBlock(c + b, b), ResBlock(b + a, a)
        self.head = nn.Sequential(nn.GroupNorm(32, a), nn.SiLU(), nn.Conv2d(a, 3, 3, padding=1))

    def forward(self, x):
        skip1 = self.down1(self.stem(x))
        skip2 = self.down2(self.pool1(skip1))
        y = self.middle(self.pool2(skip2))
        y = self.up2(torch.cat([F.interpolate(y, scale_factor=2.0, mode="nearest"), skip2], 1))
        y = self.up1(torch.cat([F.interpolate(y, scale_factor=2.0, mode="nearest"), skip1], 1))
        return self.head(y)


class WaveNet(nn.Module):
    """WaveNet-style on one second of 16 kHz audio: two stacks of ten causal dilated Conv1d (kernel 2) with
    gated tanh x sigmoid units, residual and skip 1 x 1 convolutions."""

    def __init__(self, channels=64, skip=128, stacks=2, layers=10):
        super().__init__()
        self.input = nn.Conv1d(1, channels, 1)
        self.dilations = [2 ** i for _ in range(stacks) for i in range(layers)]
        self.gates = nn.ModuleList(nn.Conv1d(channels, 2 * channels, 2, dilation=d) for d in self.dilations)
        self.residuals = nn.ModuleList(nn.Conv1d(channels, channels, 1) for _ in self.dilations)
        self.skips = nn.ModuleList(nn.Conv1d(channels, skip, 1) for _ in self.dilations)
        self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(skip, skip, 1), nn.ReLU(), nn.Conv1d(skip, 256, 1))

    def forward(self, audio):  # [b, 1, samples]
        x, total = self.input(audio), 0
        for d, gate, residual, skip in zip(self.dilations, self.gates, self.residuals, self.skips):
            filt, g = gate(F.pad(x, (d, 0))).chunk(2, 1)
            y = torch.tanh(filt) * torch.sigmoid(g)
            x, total = x + residual(y), total + skip(y)
        return self.out(total)


class PointNet(nn.Module):
    """PointNet classification on 1,024 points: a learned 3 x 3 input transform, shared MLPs as Conv1d with
    BatchNorm, a max over the points, 40 classes."""

    def __init__(self, classes=40):
        super().__init__()
        def mlp(*widths):
            layers = []
            for i, o in zip(widths, widths[1:]):
                layers += [nn.Conv1d(i, o, 1), nn.BatchNorm1d(o), nn.ReLU()]
            return nn.Sequential(*layers)
        self.tnet, self.tnet_head = mlp(3, 64, 128, 1024), nn.Sequential(nn.Linear(1024, 256), nn.ReLU(), nn.Linear(256, 9))
        self.features = mlp(3, 64, 64, 128, 1024)
        self.head = nn.Sequential(nn.Linear(1024, 512), nn.BatchNorm1d(512), nn.ReLU(), nn.Linear(512, 256),
                                  nn.BatchNorm1d(256), nn.ReLU(), nn.Linear(256, classes))

    def forward(self, points):  # [b, 3, n]
        transform = self.tnet_head(self.tnet(points).amax(2)).reshape(-1, 3, 3) + torch.eye(3)
        x = torch.bmm(transform.transpose(1, 2), points)
        return self.head(self.features(x).amax(2))
