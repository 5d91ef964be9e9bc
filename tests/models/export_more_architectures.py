#!/usr/bin/env python3
"""Architectures exported by hand to find what the speed work was not tuned for (not in CI:
each is checked against PyTorch by its reference output, and timed with bench_vs_ort.sh).

usage: export_more_architectures.py CACHE_DIR [NAME...]

NAMEs: clip_text (CLIP's text tower: QuickGELU, a causal mask, EOT pooling by argmax),
whisper_enc (Whisper-tiny's audio encoder on 10 s: Conv1d and GELU, sinusoidal positions),
mobilevit_xs (MobileViT-XS at 256 x 256: inverted residuals, unfolding into patches for
transformers and folding back), speech_gru (DeepSpeech2-style: 2-D convolutions over a
spectrogram, three bidirectional GRUs), lstm_lm (a 2-layer LSTM language model of 768),
yolov8n (YOLOv8n's layout at 320 x 320: C2f blocks, SPPF, a PAN neck, anchor-free heads with
DFL decoding), conformer (Conformer-S-style: macaron feed-forwards, a depthwise Conv1d of 31
taps, GLU, BatchNorm1d), t5_encoder (T5-small's encoder: relative position buckets computed
in the graph, RMSNorm without centring), gpt2 (written_architectures.Gpt2 at GPT-2's 124M size,
batch and sequence dynamic), mlp_mixer (Mixer-S/16: MLPs across the 196 tokens between
transposes, and across the channels), convmixer (ConvMixer-512/12: 9 x 9 depthwise convolutions
with GELU and BatchNorm after each, patches of 7), detr (DETR at 512 x 512: ResNet-50, a 6 + 6
layer nn.Transformer with sine positions computed in the graph, 100 queries Tiled by the batch),
wavenet (written_architectures.WaveNet on one second at 16 kHz: causal dilated Conv1d), crnn
(CRNN text recognition: VGG-style convolutions, (2, 1) pools, two bidirectional LSTMs). The
models label exports a smaller WaveNet and PointNet itself. Every layer is built on its own, so each has its own
weights, and every weight matrix gets a spread normal initialisation. Next to each model go
NAME.input.npy and PyTorch's NAME.output.npy.
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import written_architectures  # noqa: E402


class QuickGELU(nn.Module):
    def forward(self, x): return x * torch.sigmoid(1.702 * x)

class ClipLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), QuickGELU(), nn.Linear(4 * d, d))
    def forward(self, x, mask):
        y = self.ln1(x)
        x = x + self.attn(y, y, y, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))

class ClipText(nn.Module):
    """CLIP's text tower: 77 tokens, width 512, 8 heads, 6 layers, causal, EOT pooling."""
    def __init__(self, vocab=49408, d=512, heads=8, layers=6, ctx=77):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(0.01 * torch.randn(ctx, d))
        self.layers = nn.ModuleList(ClipLayer(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.proj = nn.Parameter(torch.randn(d, 512) / math.sqrt(d))
        self.register_buffer('mask', torch.full((ctx, ctx), float('-inf')).triu(1))
    def forward(self, text):
        x = self.tok(text) + self.pos
        for layer in self.layers: x = layer(x, self.mask)
        x = self.ln(x)
        return x[torch.arange(x.shape[0]), text.argmax(-1)] @ self.proj

class WhisperLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = nn.Linear(d, d), nn.Linear(d, d, bias=False), nn.Linear(d, d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
    def forward(self, x):
        b, s, d = x.shape
        h = self.heads
        y = self.ln1(x)
        scale = (d // h) ** -0.25
        q = self.q(y).view(b, s, h, -1).permute(0, 2, 1, 3) * scale
        k = self.k(y).view(b, s, h, -1).permute(0, 2, 3, 1) * scale
        v = self.v(y).view(b, s, h, -1).permute(0, 2, 1, 3)
        w = (q @ k).float().softmax(-1)
        x = x + self.o((w @ v).permute(0, 2, 1, 3).flatten(2))
        return x + self.mlp(self.ln2(x))

class WhisperEncoder(nn.Module):
    """Whisper-tiny's audio encoder on 10 s: 80 mel bins x 1000 frames -> 500 tokens of 384."""
    def __init__(self, d=384, heads=6, layers=4, frames=1000):
        super().__init__()
        self.conv1 = nn.Conv1d(80, d, 3, padding=1)
        self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
        t = torch.arange(frames // 2).float()[:, None] * torch.exp(-math.log(10000) * torch.arange(d // 2).float() / (d // 2 - 1))[None]
        self.register_buffer('pos', torch.cat([t.sin(), t.cos()], 1))
        self.layers = nn.ModuleList(WhisperLayer(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
    def forward(self, mel):
        x = F.gelu(self.conv1(mel))
        x = F.gelu(self.conv2(x)).permute(0, 2, 1)
        x = x + self.pos
        for layer in self.layers: x = layer(x)
        return self.ln(x)

class ConvBN(nn.Sequential):
    def __init__(self, i, o, k=3, s=1, g=1, act=True):
        super().__init__(nn.Conv2d(i, o, k, s, k // 2, groups=g, bias=False), nn.BatchNorm2d(o), *( [nn.SiLU()] if act else []))

class MV2(nn.Module):
    def __init__(self, i, o, s, e=4):
        super().__init__()
        self.body = nn.Sequential(ConvBN(i, i * e, 1), ConvBN(i * e, i * e, 3, s, i * e), ConvBN(i * e, o, 1, act=False))
        self.res = s == 1 and i == o
    def forward(self, x):
        return x + self.body(x) if self.res else self.body(x)

class MobileViTBlock(nn.Module):
    def __init__(self, c, d, depth, p=2):
        super().__init__()
        self.p = p
        self.local = nn.Sequential(ConvBN(c, c, 3), nn.Conv2d(c, d, 1, bias=False))
        layer = lambda: nn.TransformerEncoderLayer(d, 4, 2 * d, 0.0, activation=F.silu, batch_first=True, norm_first=True)
        self.transformer = nn.Sequential(*(layer() for _ in range(depth)))
        self.norm = nn.LayerNorm(d)
        self.proj = ConvBN(d, c, 1)
        self.fuse = ConvBN(2 * c, c, 3)
    def forward(self, x):
        y = self.local(x)
        b, d, h, w = y.shape
        p = self.p
        # unfold: [b, d, h, w] -> [b * p * p, (h / p) * (w / p), d]
        y = y.reshape(b, d, h // p, p, w // p, p).permute(0, 3, 5, 2, 4, 1).reshape(b * p * p, (h // p) * (w // p), d)
        y = self.norm(self.transformer(y))
        y = y.reshape(b, p, p, h // p, w // p, d).permute(0, 5, 3, 1, 4, 2).reshape(b, d, h, w)
        return self.fuse(torch.cat([x, self.proj(y)], 1))

class MobileViT(nn.Module):
    """MobileViT-XS at 256 x 256."""
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            ConvBN(3, 16, 3, 2), MV2(16, 32, 1),
            MV2(32, 48, 2), MV2(48, 48, 1), MV2(48, 48, 1),
            MV2(48, 64, 2), MobileViTBlock(64, 96, 2),
            MV2(64, 80, 2), MobileViTBlock(80, 120, 4),
            MV2(80, 96, 2), MobileViTBlock(96, 144, 3),
            ConvBN(96, 384, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(384, 1000))
    def forward(self, x): return self.net(x)

class SpeechGRU(nn.Module):
    """DeepSpeech2-style: two 2-D convolutions over a spectrogram, three bidirectional GRUs."""
    def __init__(self, mels=80, hidden=256):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 32, (11, 41), (2, 2), (5, 20)), nn.BatchNorm2d(32), nn.Hardtanh(0, 20),
                                  nn.Conv2d(32, 32, (11, 21), (1, 2), (5, 10)), nn.BatchNorm2d(32), nn.Hardtanh(0, 20))
        self.gru = nn.GRU(32 * (mels // 2), hidden, num_layers=3, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, 29)
    def forward(self, spec):  # [b, 1, mels, frames]
        x = self.conv(spec)
        b, c, f, t = x.shape
        x = x.reshape(b, c * f, t).transpose(1, 2)
        return self.fc(self.gru(x)[0]).log_softmax(-1)

class LstmLM(nn.Module):
    """An LSTM language model: 2 layers of 768, 10,000-token vocabulary, 64 tokens."""
    def __init__(self, vocab=10000, d=512, hidden=768):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, vocab)
    def forward(self, tokens):
        return self.head(self.lstm(self.emb(tokens))[0])

class CBS(nn.Sequential):
    def __init__(self, i, o, k=1, s=1):
        super().__init__(nn.Conv2d(i, o, k, s, k // 2, bias=False), nn.BatchNorm2d(o), nn.SiLU())

class Bottleneck(nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1, self.cv2, self.add = CBS(c, c, 3), CBS(c, c, 3), shortcut
    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y

class C2f(nn.Module):
    def __init__(self, i, o, n=1, shortcut=True):
        super().__init__()
        self.c = o // 2
        self.cv1, self.cv2 = CBS(i, 2 * self.c), CBS((2 + n) * self.c, o)
        self.m = nn.ModuleList(Bottleneck(self.c, shortcut) for _ in range(n))
    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        y.extend(m(y[-1]) for m in self.m)
        return self.cv2(torch.cat(y, 1))

class SPPF(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.cv1, self.cv2, self.m = CBS(i, i // 2), CBS(i * 2, o), nn.MaxPool2d(5, 1, 2)
    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x); y2 = self.m(y1)
        return self.cv2(torch.cat([x, y1, y2, self.m(y2)], 1))

class YoloV8n(nn.Module):
    """YOLOv8n's layout at 320 x 320: C2f backbone, SPPF, PAN neck, anchor-free heads with DFL decoding."""
    def __init__(self, nc=80, reg=16):
        super().__init__()
        self.reg, self.nc = reg, nc
        self.b0, self.b1, self.b2 = CBS(3, 16, 3, 2), CBS(16, 32, 3, 2), C2f(32, 32, 1)
        self.b3, self.b4 = CBS(32, 64, 3, 2), C2f(64, 64, 2)
        self.b5, self.b6 = CBS(64, 128, 3, 2), C2f(128, 128, 2)
        self.b7, self.b8, self.b9 = CBS(128, 256, 3, 2), C2f(256, 256, 1), SPPF(256, 256)
        self.n12, self.n15 = C2f(384, 128, 1, False), C2f(192, 64, 1, False)
        self.n16, self.n18 = CBS(64, 64, 3, 2), C2f(192, 128, 1, False)
        self.n19, self.n21 = CBS(128, 128, 3, 2), C2f(384, 256, 1, False)
        self.box = nn.ModuleList(nn.Sequential(CBS(c, 64, 3), CBS(64, 64, 3), nn.Conv2d(64, 4 * reg, 1)) for c in (64, 128, 256))
        self.cls = nn.ModuleList(nn.Sequential(CBS(c, 80, 3), CBS(80, 80, 3), nn.Conv2d(80, nc, 1)) for c in (64, 128, 256))
        self.register_buffer('proj', torch.arange(reg).float())
    def forward(self, x):
        x = self.b2(self.b1(self.b0(x)))
        p3 = self.b4(self.b3(x))
        p4 = self.b6(self.b5(p3))
        p5 = self.b9(self.b8(self.b7(p4)))
        up = lambda t: F.interpolate(t, scale_factor=2.0, mode='nearest')
        n4 = self.n12(torch.cat([up(p5), p4], 1))
        n3 = self.n15(torch.cat([up(n4), p3], 1))
        n4 = self.n18(torch.cat([self.n16(n3), n4], 1))
        n5 = self.n21(torch.cat([self.n19(n4), p5], 1))
        boxes, scores, anchors, strides = [], [], [], []
        for i, (f, s) in enumerate(zip((n3, n4, n5), (8, 16, 32))):
            b, _, h, w = f.shape
            d = self.box[i](f).view(b, 4, self.reg, h * w).softmax(2)
            boxes.append((d * self.proj.view(1, 1, -1, 1)).sum(2))
            scores.append(self.cls[i](f).view(b, self.nc, h * w))
            sy, sx = torch.meshgrid(torch.arange(h).float() + 0.5, torch.arange(w).float() + 0.5, indexing='ij')
            anchors.append(torch.stack([sx.flatten(), sy.flatten()], 0))
            strides.append(torch.full((1, h * w), float(s)))
        dist, a, st = torch.cat(boxes, 2), torch.cat(anchors, 1).unsqueeze(0), torch.cat(strides, 1)
        lt, rb = dist.chunk(2, 1)
        xy = torch.cat([(a - lt + a + rb) / 2, rb + lt], 1) * st
        return torch.cat([xy, torch.cat(scores, 2).sigmoid()], 1)

class ConformerBlock(nn.Module):
    def __init__(self, d, heads, kernel=31):
        super().__init__()
        ff = lambda: nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
        self.ff1, self.ff2 = ff(), ff()
        self.attn_norm = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.conv_norm = nn.LayerNorm(d)
        self.pw1, self.dw = nn.Conv1d(d, 2 * d, 1), nn.Conv1d(d, d, kernel, padding=kernel // 2, groups=d)
        self.bn, self.pw2 = nn.BatchNorm1d(d), nn.Conv1d(d, d, 1)
        self.out_norm = nn.LayerNorm(d)
    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        y = self.attn_norm(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        y = self.conv_norm(x).transpose(1, 2)
        y = F.glu(self.pw1(y), dim=1)
        y = self.pw2(F.silu(self.bn(self.dw(y))))
        x = x + y.transpose(1, 2)
        x = x + 0.5 * self.ff2(x)
        return self.out_norm(x)

class Conformer(nn.Module):
    """A Conformer-S-style encoder: 80 mel x 400 frames, 4x subsampling by two convolutions, 6 blocks of 256."""
    def __init__(self, d=256, heads=4, layers=6):
        super().__init__()
        self.sub = nn.Sequential(nn.Conv2d(1, d, 3, 2), nn.ReLU(), nn.Conv2d(d, d, 3, 2), nn.ReLU())
        self.proj = nn.Linear(d * 19, d)
        self.blocks = nn.ModuleList(ConformerBlock(d, heads) for _ in range(layers))
    def forward(self, mel):  # [b, 1, 80, frames]
        x = self.sub(mel)
        b, c, f, t = x.shape
        x = self.proj(x.permute(0, 3, 1, 2).reshape(b, t, c * f))
        for blk in self.blocks: x = blk(x)
        return x

class T5Layer(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = RMS(d), RMS(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.wi, self.wo = nn.Linear(d, ff, bias=False), nn.Linear(ff, d, bias=False)
    def forward(self, x, bias):
        b, s, d = x.shape
        y = self.n1(x)
        q, k, v = (p(y).view(b, s, self.heads, -1).transpose(1, 2) for p in (self.q, self.k, self.v))
        w = (q @ k.transpose(-1, -2) + bias).softmax(-1)
        x = x + self.o((w @ v).transpose(1, 2).reshape(b, s, d))
        return x + self.wo(F.relu(self.wi(self.n2(x))))

class RMS(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(d))
    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))

class T5Encoder(nn.Module):
    """T5-small's encoder: 6 layers of 512, 8 heads, relative position buckets computed in the graph, 128 tokens."""
    def __init__(self, vocab=32128, d=512, heads=8, ff=2048, layers=6, buckets=32, max_distance=128):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.rel = nn.Embedding(buckets, heads)
        self.buckets, self.max_distance = buckets, max_distance
        self.layers = nn.ModuleList(T5Layer(d, heads, ff) for _ in range(layers))
        self.norm = RMS(d)
    def bucket(self, rel):
        n = self.buckets // 2
        ret = (rel > 0).long() * n
        rel = rel.abs()
        exact = n // 2
        large = exact + (torch.log(rel.float() / exact + 1e-6) / math.log(self.max_distance / exact) * (n - exact)).long()
        large = torch.min(large, torch.full_like(large, n - 1))
        return ret + torch.where(rel < exact, rel, large)
    def forward(self, tokens):
        s = tokens.shape[1]
        pos = torch.arange(s)
        bias = self.rel(self.bucket(pos[None, :] - pos[:, None])).permute(2, 0, 1).unsqueeze(0)
        x = self.emb(tokens)
        for layer in self.layers: x = layer(x, bias)
        return self.norm(x)


class MixerLayer(nn.Module):
    def __init__(self, tokens, d, token_hidden, channel_hidden):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.token_mlp = nn.Sequential(nn.Linear(tokens, token_hidden), nn.GELU(), nn.Linear(token_hidden, tokens))
        self.channel_mlp = nn.Sequential(nn.Linear(d, channel_hidden), nn.GELU(), nn.Linear(channel_hidden, d))

    def forward(self, x):  # [b, tokens, d]
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.norm2(x))


class MlpMixer(nn.Module):
    """Mixer-S/16 at 224 x 224: 196 patches of 512, MLPs across the tokens and across the channels."""

    def __init__(self, d=512, layers=8, patch=16, classes=1000):
        super().__init__()
        tokens = (224 // patch) ** 2
        self.stem = nn.Conv2d(3, d, patch, patch)
        self.layers = nn.Sequential(*[MixerLayer(tokens, d, 256, 2048) for _ in range(layers)])
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, classes)

    def forward(self, x):
        x = self.layers(self.stem(x).flatten(2).transpose(1, 2))
        return self.head(self.norm(x).mean(1))


class ConvMixer(nn.Module):
    """ConvMixer-512/12 with 9 x 9 depthwise kernels and 7 x 7 patches at 224 x 224."""

    def __init__(self, d=512, depth=12, kernel=9, patch=7, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, d, patch, patch), nn.GELU(), nn.BatchNorm2d(d))
        self.blocks = nn.ModuleList(
            nn.ModuleList([nn.Sequential(nn.Conv2d(d, d, kernel, groups=d, padding=kernel // 2), nn.GELU(), nn.BatchNorm2d(d)),
                           nn.Sequential(nn.Conv2d(d, d, 1), nn.GELU(), nn.BatchNorm2d(d))]) for _ in range(depth))
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = self.stem(x)
        for spatial, pointwise in self.blocks:
            x = pointwise(x + spatial(x))
        return self.head(x.mean((2, 3)))


class Detr(nn.Module):
    """DETR at 512 x 512: a ResNet-50 backbone, a 6 + 6 layer nn.Transformer of 256 over its 16 x 16 map with
    sine positions, 100 learned queries, class and box heads."""

    def __init__(self, d=256, queries=100, classes=92):
        super().__init__()
        import torchvision
        resnet = torchvision.models.resnet50()
        self.backbone = nn.Sequential(*list(resnet.children())[:-2])
        self.project = nn.Conv2d(2048, d, 1)
        self.transformer = nn.Transformer(d, 8, 6, 6, 2048, dropout=0.0)
        self.queries = nn.Parameter(torch.randn(queries, 1, d))
        self.classes = nn.Linear(d, classes)
        self.boxes = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))

    @staticmethod
    def sine_positions(h, w, d):
        y, x = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing='ij')
        freq = 10000 ** (torch.arange(d // 4, dtype=torch.float32) * 4 / d)
        parts = [f(c.reshape(-1, 1) / freq) for c in (y, x) for f in (torch.sin, torch.cos)]
        return torch.cat(parts, 1)  # [h * w, d]

    def forward(self, image):
        features = self.project(self.backbone(image))
        b, d, h, w = features.shape
        memory = features.flatten(2).permute(2, 0, 1) + self.sine_positions(h, w, d).unsqueeze(1)
        hidden = self.transformer(memory, self.queries.repeat(1, b, 1))
        return torch.cat([self.classes(hidden), self.boxes(hidden).sigmoid()], -1).transpose(0, 1)


class Crnn(nn.Module):
    """CRNN text recognition on a 32 x 128 grey line: VGG-style convolutions with (2, 1) pools, two
    bidirectional LSTMs of 256 over the 32 columns, 37 classes per column."""

    def __init__(self, classes=37):
        super().__init__()
        def conv(i, o, bn=False):
            return [nn.Conv2d(i, o, 3, padding=1)] + ([nn.BatchNorm2d(o)] if bn else []) + [nn.ReLU()]
        self.cnn = nn.Sequential(*conv(1, 64), nn.MaxPool2d(2), *conv(64, 128), nn.MaxPool2d(2),
                                 *conv(128, 256, True), *conv(256, 256), nn.MaxPool2d((2, 1)),
                                 *conv(256, 512, True), *conv(512, 512), nn.MaxPool2d((2, 1)),
                                 nn.Conv2d(512, 512, 2, padding=(0, 1)), nn.BatchNorm2d(512), nn.ReLU())
        self.rnn = nn.LSTM(512, 256, 2, bidirectional=True)
        self.head = nn.Linear(512, classes)

    def forward(self, image):  # [b, 1, 32, 128]
        columns = self.cnn(image).squeeze(2).permute(2, 0, 1)  # [33, b, 512]
        return self.head(self.rnn(columns)[0]).log_softmax(-1)




class EfficientAttention(nn.Module):
    """SegFormer's attention: keys and values from the tokens shrunk by a strided convolution."""

    def __init__(self, d, heads, sr):
        super().__init__()
        self.heads, self.sr = heads, sr
        self.q, self.kv, self.proj = nn.Linear(d, d), nn.Linear(d, 2 * d), nn.Linear(d, d)
        if sr > 1:
            self.reduce, self.norm = nn.Conv2d(d, d, sr, sr), nn.LayerNorm(d)

    def forward(self, x, h, w):
        b, n, d = x.shape
        q = self.q(x).reshape(b, n, self.heads, d // self.heads).transpose(1, 2)
        if self.sr > 1:
            x = self.norm(self.reduce(x.transpose(1, 2).reshape(b, d, h, w)).flatten(2).transpose(1, 2))
        k, v = self.kv(x).reshape(b, -1, 2, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // self.heads), -1)
        return self.proj((weights @ v).transpose(1, 2).reshape(b, n, d))


class MixFfn(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.fc1, self.dw, self.fc2 = nn.Linear(d, hidden), nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden), nn.Linear(hidden, d)

    def forward(self, x, h, w):
        b, n, _ = x.shape
        x = self.fc1(x)
        x = self.dw(x.transpose(1, 2).reshape(b, -1, h, w)).flatten(2).transpose(1, 2)
        return self.fc2(F.gelu(x))


class MitBlock(nn.Module):
    def __init__(self, d, heads, sr):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(d), EfficientAttention(d, heads, sr)
        self.norm2, self.ffn = nn.LayerNorm(d), MixFfn(d, 4 * d)

    def forward(self, x, h, w):
        x = x + self.attn(self.norm1(x), h, w)
        return x + self.ffn(self.norm2(x), h, w)


class SegFormer(nn.Module):
    """SegFormer-B0 at 512 x 512: overlapping patch embeddings, efficient attention with reduction
    ratios 8, 4, 2, 1, Mix-FFNs with depthwise 3 x 3 convolutions between token reshapes, an all-MLP
    decoder upsampling every stage to a quarter of the image."""

    def __init__(self, widths=(32, 64, 160, 256), heads=(1, 2, 5, 8), srs=(8, 4, 2, 1), depth=2, classes=150):
        super().__init__()
        self.embeds, self.stages, self.norms = nn.ModuleList(), nn.ModuleList(), nn.ModuleList()
        previous = 3
        for i, (d, hd, sr) in enumerate(zip(widths, heads, srs)):
            k, s = (7, 4) if i == 0 else (3, 2)
            self.embeds.append(nn.Sequential(nn.Conv2d(previous, d, k, s, k // 2)))
            self.stages.append(nn.ModuleList(MitBlock(d, hd, sr) for _ in range(depth)))
            self.norms.append(nn.LayerNorm(d))
            previous = d
        self.embed_norms = nn.ModuleList(nn.LayerNorm(d) for d in widths)
        self.linears = nn.ModuleList(nn.Linear(d, 256) for d in widths)
        self.fuse = nn.Sequential(nn.Conv2d(4 * 256, 256, 1, bias=False), nn.BatchNorm2d(256), nn.ReLU())
        self.classify = nn.Conv2d(256, classes, 1)

    def forward(self, image):
        x, features = image, []
        for embed, embed_norm, blocks, norm in zip(self.embeds, self.embed_norms, self.stages, self.norms):
            x = embed(x)
            b, d, h, w = x.shape
            t = embed_norm(x.flatten(2).transpose(1, 2))
            for block in blocks:
                t = block(t, h, w)
            x = norm(t).transpose(1, 2).reshape(b, d, h, w)
            features.append(x)
        size = features[0].shape[2:]
        decoded = [F.interpolate(lin(f.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(f.shape[0], 256, *f.shape[2:]),
                                 size=size, mode='bilinear', align_corners=False)
                   for f, lin in zip(features, self.linears)]
        return self.classify(self.fuse(torch.cat(decoded[::-1], 1)))


class PoolFormerBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm1, self.norm2 = nn.GroupNorm(1, d), nn.GroupNorm(1, d)
        self.pool = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.mlp = nn.Sequential(nn.Conv2d(d, 4 * d, 1), nn.GELU(), nn.Conv2d(4 * d, d, 1))
        self.scale1, self.scale2 = nn.Parameter(torch.rand(d, 1, 1)), nn.Parameter(torch.rand(d, 1, 1))

    def forward(self, x):
        y = self.norm1(x)
        x = x + self.scale1 * (self.pool(y) - y)
        return x + self.scale2 * self.mlp(self.norm2(x))


class PoolFormer(nn.Module):
    """PoolFormer-S12 at 224 x 224: average pooling as the token mixer, GroupNorm of one group,
    learned per-channel scales on both branches."""

    def __init__(self, widths=(64, 128, 320, 512), depths=(2, 2, 6, 2), classes=1000):
        super().__init__()
        layers, previous = [], 3
        for i, (d, n) in enumerate(zip(widths, depths)):
            layers.append(nn.Conv2d(previous, d, 7, 4, 2) if i == 0 else nn.Conv2d(previous, d, 3, 2, 1))
            layers += [PoolFormerBlock(d) for _ in range(n)]
            previous = d
        self.body, self.norm, self.head = nn.Sequential(*layers), nn.GroupNorm(1, widths[-1]), nn.Linear(widths[-1], classes)

    def forward(self, x):
        return self.head(self.norm(self.body(x)).mean((2, 3)))


class ConvNeXtV2Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.dw, self.norm = nn.Conv2d(d, d, 7, 1, 3, groups=d), nn.LayerNorm(d, eps=1e-6)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.gamma, self.beta = nn.Parameter(torch.rand(1, 1, 1, 4 * d)), nn.Parameter(torch.rand(1, 1, 1, 4 * d))

    def forward(self, x):
        y = F.gelu(self.fc1(self.norm(self.dw(x).permute(0, 2, 3, 1))))
        # Global response normalization: each channel's L2 norm over the map, against their mean.
        g = torch.norm(y, p=2, dim=(1, 2), keepdim=True)
        y = self.gamma * (y * (g / (g.mean(-1, keepdim=True) + 1e-6))) + self.beta + y
        return x + self.fc2(y).permute(0, 3, 1, 2)


class ConvNeXtV2(nn.Module):
    """ConvNeXt V2-Atto at 224 x 224: ConvNeXt's blocks with global response normalization."""

    def __init__(self, widths=(40, 80, 160, 320), depths=(2, 2, 6, 2), classes=1000):
        super().__init__()
        layers = [nn.Conv2d(3, widths[0], 4, 4)]
        for i, (d, n) in enumerate(zip(widths, depths)):
            if i:
                layers.append(nn.Conv2d(widths[i - 1], d, 2, 2))
            layers += [ConvNeXtV2Block(d) for _ in range(n)]
        self.body, self.norm, self.head = nn.Sequential(*layers), nn.LayerNorm(widths[-1]), nn.Linear(widths[-1], classes)

    def forward(self, x):
        return self.head(self.norm(self.body(x).mean((2, 3))))



class VaeDecoder(nn.Module):
    """Stable Diffusion's VAE decoder layout at a quarter of its widths: a 4 x 32 x 32 latent to a
    256 x 256 image through GroupNorm-SiLU residual blocks, one single-head attention over the
    1,024 latent positions, nearest upsampling and convolutions."""

    def __init__(self, widths=(128, 128, 64, 32)):
        super().__init__()
        import written_architectures as wa
        self.stem = nn.Conv2d(4, widths[0], 3, padding=1)
        self.middle = nn.Sequential(wa.ResBlock(widths[0], widths[0]), wa.SpatialAttention(widths[0]), wa.ResBlock(widths[0], widths[0]))
        ups = []
        for i, (a, b) in enumerate(zip(widths, widths[1:] + (widths[-1],))):
            ups += [wa.ResBlock(a, b), wa.ResBlock(b, b)]
            if i < 3:
                ups += [nn.Upsample(scale_factor=2, mode='nearest'), nn.Conv2d(b, b, 3, padding=1)]
        self.ups = nn.Sequential(*ups)
        self.head = nn.Sequential(nn.GroupNorm(32, widths[-1]), nn.SiLU(), nn.Conv2d(widths[-1], 3, 3, padding=1))

    def forward(self, latent):
        return self.head(self.ups(self.middle(self.stem(latent))))


class Edsr(nn.Module):
    """EDSR-baseline for 2x super-resolution of a 128 x 128 image: 16 residual blocks of 64
    channels with residual scaling, a PixelShuffle upsampler."""

    def __init__(self, d=64, blocks=16):
        super().__init__()
        self.head = nn.Conv2d(3, d, 3, padding=1)
        self.body = nn.ModuleList(nn.Sequential(nn.Conv2d(d, d, 3, padding=1), nn.ReLU(), nn.Conv2d(d, d, 3, padding=1)) for _ in range(blocks))
        self.tail = nn.Sequential(nn.Conv2d(d, d, 3, padding=1))
        self.up = nn.Sequential(nn.Conv2d(d, 4 * d, 3, padding=1), nn.PixelShuffle(2), nn.Conv2d(d, 3, 3, padding=1))

    def forward(self, x):
        h = self.head(x)
        y = h
        for block in self.body:
            y = y + 0.1 * block(y)
        return self.up(self.tail(y) + h)


class GcnLayer(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.linear = nn.Linear(i, o)

    def forward(self, x, src, dst, norm):
        messages = self.linear(x)[src] * norm.unsqueeze(1)
        index = dst.unsqueeze(1).expand(-1, messages.shape[1])
        return torch.zeros(x.shape[0], messages.shape[1]).scatter_add(0, index, messages)


class Gcn(nn.Module):
    """A 3-layer graph convolutional network on a fixed random graph of 2,000 nodes and 20,000
    edges (self loops included): messages gathered along the edges, scaled by 1/sqrt(deg deg),
    summed into their targets with scatter_add (ScatterElements with add)."""

    def __init__(self, nodes=2000, edges=20000, features=128, hidden=128, classes=16):
        super().__init__()
        g = torch.Generator().manual_seed(1)
        src = torch.cat([torch.randint(0, nodes, (edges - nodes,), generator=g), torch.arange(nodes)])
        dst = torch.cat([torch.randint(0, nodes, (edges - nodes,), generator=g), torch.arange(nodes)])
        degree = torch.zeros(nodes).index_add(0, dst, torch.ones(edges))
        self.register_buffer('src', src)
        self.register_buffer('dst', dst)
        self.register_buffer('norm', degree[src].rsqrt() * degree[dst].rsqrt())
        self.layers = nn.ModuleList([GcnLayer(features, hidden), GcnLayer(hidden, hidden), GcnLayer(hidden, classes)])

    def forward(self, x):  # [nodes, features]
        for i, layer in enumerate(self.layers):
            x = layer(x, self.src, self.dst, self.norm)
            if i < len(self.layers) - 1:
                x = F.relu(x)
        return x.log_softmax(-1)


def export(name, model, example, path, dyn=None, names=('input',)):
    model = model.eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1: nn.init.normal_(p, 0, 1 / math.sqrt(p[0].numel()))
        ref = model(example)
    # outside no_grad: nn.TransformerEncoderLayer's fast path does not export
    torch.onnx.export(model, example, path, opset_version=17, input_names=list(names), output_names=['output'],
                      dynamic_axes=dyn if dyn is not None else {names[0]: {0: 'batch'}}, do_constant_folding=True)
    np.save(path.replace('.onnx', '.input.npy'), example.numpy())
    np.save(path.replace('.onnx', '.output.npy'), ref.numpy())

if __name__ == '__main__':
    torch.manual_seed(0)
    out = sys.argv[1].rstrip('/') + '/'
    models = {
        'clip_text': lambda: (ClipText(), torch.randint(0, 49408, (1, 77))),
        'whisper_enc': lambda: (WhisperEncoder(), torch.randn(1, 80, 1000)),
        'mobilevit_xs': lambda: (MobileViT(), torch.randn(1, 3, 256, 256)),
        'speech_gru': lambda: (SpeechGRU(), torch.randn(1, 1, 80, 400)),
        'lstm_lm': lambda: (LstmLM(), torch.randint(0, 10000, (1, 64))),
        'yolov8n': lambda: (YoloV8n(), torch.rand(1, 3, 320, 320)),
        'conformer': lambda: (Conformer(), torch.randn(1, 1, 80, 400)),
        't5_encoder': lambda: (T5Encoder(), torch.randint(0, 32128, (1, 128))),
        'mlp_mixer': lambda: (MlpMixer(), torch.randn(1, 3, 224, 224)),
        'convmixer': lambda: (ConvMixer(), torch.randn(1, 3, 224, 224)),
        'detr': lambda: (Detr(), torch.randn(1, 3, 512, 512)),
        'wavenet': lambda: (written_architectures.WaveNet(), torch.randn(1, 1, 16000)),
        'crnn': lambda: (Crnn(), torch.randn(1, 1, 32, 128)),
        'segformer_b0': lambda: (SegFormer(), torch.randn(1, 3, 512, 512)),
        'poolformer_s12': lambda: (PoolFormer(), torch.randn(1, 3, 224, 224)),
        'convnextv2_atto': lambda: (ConvNeXtV2(), torch.randn(1, 3, 224, 224)),
        'vae_decoder': lambda: (VaeDecoder(), torch.randn(1, 4, 32, 32)),
        'edsr': lambda: (Edsr(), torch.rand(1, 3, 128, 128)),
        'gcn': lambda: (Gcn(), torch.randn(2000, 128)),
    }
    # Hugging Face's GPT-2 (124M) as its exporter writes it: batch and sequence dynamic.
    models['gpt2'] = lambda: (written_architectures.Gpt2(vocab=50257, d=768, heads=12, layers=12, context=1024),
                              torch.randint(0, 50257, (1, 128)))
    dynamic = {'gpt2': {'input': {0: 'batch', 1: 'sequence'}, 'output': {0: 'batch', 1: 'sequence'}},
               'gcn': {}}  # one fixed graph
    for name in sys.argv[2:] or models:
        model, example = models[name]()
        export(name, model, example, out + name + '.onnx', dynamic.get(name))
        print('exported', name)
