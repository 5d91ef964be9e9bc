#!/usr/bin/env python3
"""Exports a BERT-base-sized encoder (12 layers, d_model 768, 12 heads, FFN 3072, GELU,
sequence 128) from torch.nn with random weights, for the CPU speed benchmark.
Each layer has its own weights (distinct_layers): 85 M parameters, as BERT-base has.
usage: export_bert_base.py OUT.onnx"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
from distinct_layers import distinct_layers  # noqa: E402

torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072,
                                         activation="gelu", batch_first=True)
model = distinct_layers(torch, torch.nn.TransformerEncoder(layer, num_layers=12)).eval()
# Grad stays enabled: torch 1.13's no_grad fast path has no ONNX export.
torch.onnx.export(model, (torch.randn(1, 128, 768),), sys.argv[1], opset_version=17,
                  input_names=["input"], output_names=["output"])
