#!/usr/bin/env python3
"""Exports a BERT-base-sized encoder (12 layers, d_model 768, 12 heads, FFN 3072, GELU,
sequence 128) from torch.nn with random weights, for the CPU speed benchmark.
usage: export_bert_base.py OUT.onnx"""
import sys

import torch

torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072,
                                         activation="gelu", batch_first=True)
model = torch.nn.TransformerEncoder(layer, num_layers=12).eval()
# Grad stays enabled: torch 1.13's no_grad fast path has no ONNX export.
torch.onnx.export(model, (torch.randn(1, 128, 768),), sys.argv[1], opset_version=17,
                  input_names=["input"], output_names=["output"])
