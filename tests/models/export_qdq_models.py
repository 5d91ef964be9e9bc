#!/usr/bin/env python3
"""torchvision's quantizable CNNs quantized by PyTorch's eager-mode static quantization (fbgemm:
uint8 activations, per-channel int8 weights) and exported in the QDQ form, as quantized models
come from PyTorch and from ONNX Runtime's quantize_static (not in CI). Batch norm statistics
come from a few random batches in training mode first, as a trained model has them; the
observers calibrate on four more. Each architecture brings its own quantized patterns:
MobileNetV2 residual Adds, ResNet-18 MaxPool and add_relu, MobileNetV3 hardswish and
squeeze-and-excitation, GoogLeNet branch Concats, Inception-v3 (299 x 299) AveragePool branches.

usage: export_qdq_models.py CACHE_DIR [NAME...]   (NAME: mnv2_q, resnet18_q, mnv3_q, googlenet_q, inception_q;
       default mnv2_q; writes NAME.onnx, .input.npy, .output.npy)
"""
import sys

import numpy as np
import torch
import torchvision
from torch.ao.quantization import get_default_qconfig

ARCHITECTURES = {
    'mnv2_q': lambda: torchvision.models.quantization.mobilenet_v2(weights=None, quantize=False),
    'resnet18_q': lambda: torchvision.models.quantization.resnet18(weights=None, quantize=False),
    'mnv3_q': lambda: torchvision.models.quantization.mobilenet_v3_large(weights=None, quantize=False),
    'googlenet_q': lambda: torchvision.models.quantization.googlenet(weights=None, quantize=False, init_weights=True),
    'inception_q': lambda: torchvision.models.quantization.inception_v3(weights=None, quantize=False, init_weights=True),
}
SIZES = {'inception_q': 299}


def export(name, out):
    torch.manual_seed(0)
    m = ARCHITECTURES[name]()
    size = SIZES.get(name, 224)
    m.train()
    with torch.no_grad():  # batch norm statistics of real activations, as a trained model has
        for _ in range(3):
            m(torch.randn(8, 3, size, size))
    m.eval()
    m.fuse_model()
    m.qconfig = get_default_qconfig('fbgemm')
    torch.ao.quantization.prepare(m, inplace=True)
    with torch.no_grad():
        for _ in range(4):
            m(torch.randn(2, 3, size, size))
    torch.ao.quantization.convert(m, inplace=True)
    x = torch.randn(1, 3, size, size)
    with torch.no_grad():
        y = m(x)
    torch.onnx.export(m, x, out + name + '.onnx', opset_version=13, input_names=['input'], output_names=['output'])
    np.save(out + name + '.input.npy', x.numpy())
    np.save(out + name + '.output.npy', y.numpy())


if __name__ == '__main__':
    cache = sys.argv[1].rstrip('/') + '/'
    for model in sys.argv[2:] or ['mnv2_q']:
        export(model, cache)
