#!/usr/bin/env python3
"""MobileNetV2 quantized by PyTorch's eager-mode static quantization (fbgemm: uint8 activations,
per-channel int8 weights) and exported in the QDQ form, as quantized models come from
PyTorch and from ONNX Runtime's quantize_static (not in CI). Batch norm statistics come from
a few random batches in training mode first, as a trained model has them; the observers
calibrate on four more.

usage: export_qdq_mobilenet.py CACHE_DIR   (writes mnv2_q.onnx, .input.npy, .output.npy)
"""
import sys

import numpy as np
import torch
import torchvision
from torch.ao.quantization import get_default_qconfig

out = sys.argv[1].rstrip('/') + '/'
torch.manual_seed(0)
m = torchvision.models.quantization.mobilenet_v2(weights=None, quantize=False)
m.train()
with torch.no_grad():  # batch norm statistics of real activations, as a trained model has
    for _ in range(3):
        m(torch.randn(8, 3, 224, 224))
m.eval()
m.fuse_model()
m.qconfig = get_default_qconfig('fbgemm')
torch.ao.quantization.prepare(m, inplace=True)
with torch.no_grad():
    for _ in range(4):
        m(torch.randn(2, 3, 224, 224))
torch.ao.quantization.convert(m, inplace=True)
x = torch.randn(1, 3, 224, 224)
with torch.no_grad():
    y = m(x)
torch.onnx.export(m, x, out + 'mnv2_q.onnx', opset_version=13, input_names=['input'], output_names=['output'])
np.save(out + 'mnv2_q.input.npy', x.numpy())
np.save(out + 'mnv2_q.output.npy', y.numpy())
