#!/usr/bin/env python3
"""Transformer encoders exported from PyTorch and quantized as ONNX Runtime's quantize_dynamic
writes them (quantize_dynamic_matmuls.py), for the checks and the CPU benchmark.

usage: export_dynamic_quantized.py NAME OUT.onnx [--float] [quantize_dynamic_matmuls.py options]

NAMEs:
  dq_blocks     4 Hugging Face-style blocks (separate query, key, value Linears), d_model 256,
                4 heads, 32 tokens
  dq_encoder    torch.nn.TransformerEncoder, 2 layers (a packed QKV projection), d_model 256
  distilbert_dq DistilBERT's size in the Hugging Face layout: 6 blocks, d_model 768, 12 heads,
                FFN 3072, GELU, 128 tokens
Every layer has its own random weights (distinct_layers for nn.TransformerEncoder). With
--float the float model is written as it is, unquantized.
"""
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from distinct_layers import distinct_layers  # noqa: E402


class Block(torch.nn.Module):
    """A BERT layer as Hugging Face writes it: separate Q, K, V projections, post-norm."""

    def __init__(self, d, heads):
        super().__init__()
        self.d, self.heads = d, heads
        self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d) for _ in range(4))
        self.up, self.down = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)
        self.norm1, self.norm2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)

    def forward(self, x):
        b, s, d = x.shape
        split = lambda t: t.view(b, s, self.heads, d // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        a = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, dim=-1) @ v
        x = self.norm1(x + self.o(a.transpose(1, 2).reshape(b, s, d)))
        return self.norm2(x + self.down(torch.nn.functional.gelu(self.up(x))))


def model_of(name):
    torch.manual_seed(5)
    if name == "dq_blocks":
        return torch.nn.Sequential(*(Block(256, 4) for _ in range(4))), (1, 32, 256)
    if name == "dq_encoder":
        layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, batch_first=True)
        return distinct_layers(torch, torch.nn.TransformerEncoder(layer, num_layers=2)), (1, 32, 256)
    if name == "distilbert_dq":
        return torch.nn.Sequential(*(Block(768, 12) for _ in range(6))), (1, 128, 768)
    raise SystemExit(f"unknown model {name}")


def main():
    name, out = sys.argv[1], sys.argv[2]
    options = [a for a in sys.argv[3:] if a != "--float"]
    model, shape = model_of(name)
    target = out if "--float" in sys.argv[3:] else out + ".float.onnx"
    # Grad stays enabled: torch 1.13's no_grad fast path has no ONNX export.
    torch.onnx.export(model.eval(), (torch.randn(*shape),), target, opset_version=17, input_names=["input"],
                      output_names=["output"])
    if target != out:
        subprocess.run([sys.executable, os.path.join(HERE, "quantize_dynamic_matmuls.py"), target, out, *options],
                       check=True)
        os.remove(target)


if __name__ == "__main__":
    main()
