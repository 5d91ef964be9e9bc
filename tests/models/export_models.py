#!/usr/bin/env python3
"""Exports real architectures to ONNX for the test suite, once, into a cache folder.

usage: export_models.py CACHE_DIR

torchvision (resnet50, mobilenet_v2, efficientnet_b0, vit_b_16, swin_t, densenet121, googlenet,
shufflenet_v2_x1_0, squeezenet1_1, mnasnet1_0, regnet_y_400mf, mobilenet_v3_large,
convnext_tiny, resnext50_32x4d, inception_v3, regnet_x_800mf, maxvit_t,
lraspp_mobilenet_v3_large, s3d), torch.nn (a TransformerEncoder, an LSTM) and
written_architectures.py (a LLaMA-style decoder, GPT-2 as Hugging Face writes it, a wav2vec-style audio encoder, a U-Net, a WaveNet, PointNet) with random weights from Debian's python3-torch and python3-torchvision: nothing
is downloaded. A model already in the cache from the same torch version is kept. Next to
each model go a reference input and PyTorch's output for it (NAME.input.npy,
NAME.output.npy), which check_real_models.py compares with fusescope-cli run.
"""
import os
import sys
import time

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from distinct_layers import distinct_layers  # noqa: E402
import written_architectures  # noqa: E402

CACHE = sys.argv[1]
os.makedirs(CACHE, exist_ok=True)
torch.manual_seed(0)


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, batch_first=True)
        self.encoder = distinct_layers(torch, torch.nn.TransformerEncoder(layer, num_layers=2))

    def forward(self, x):
        return self.encoder(x)


class Lstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size=32, hidden_size=64, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(64, 10)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y[:, -1])


def vit_b_16():
    # torchvision zero-initialises the classifier, which would make every output 0.
    model = torchvision.models.vit_b_16(weights=None)
    torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    return model


class SegmentationOut(torch.nn.Module):
    """torchvision's segmentation models return a dict; the export takes its "out"."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def lraspp():
    from torchvision.models.segmentation import lraspp_mobilenet_v3_large
    return SegmentationOut(lraspp_mobilenet_v3_large(weights=None, weights_backbone=None))


def image(size=224):
    return torch.randn(1, 3, size, size)


MODELS = {
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), image),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), image),
    # SiLU everywhere (x * Sigmoid(x)) and squeeze-and-excitation gates: element-wise heavy.
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None), image),
    "vit_b_16": (vit_b_16, image),
    "swin_t": (lambda: torchvision.models.swin_t(weights=None), image),
    "transformer_encoder": (Encoder, lambda: torch.randn(1, 16, 128)),
    # Families the speed work was not tuned on: dense blocks (Concat, pre-activation
    # BatchNormalization), Inception branches, channel shuffles, fire modules, NAS blocks, RegNet's
    # grouped convolutions with squeeze-and-excitation.
    "densenet121": (lambda: torchvision.models.densenet121(weights=None), image),
    "googlenet": (lambda: torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True), image),
    "shufflenet_v2_x1_0": (lambda: torchvision.models.shufflenet_v2_x1_0(weights=None), image),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None), image),
    "mnasnet1_0": (lambda: torchvision.models.mnasnet1_0(weights=None), image),
    "regnet_y_400mf": (lambda: torchvision.models.regnet_y_400mf(weights=None), image),
    # Hard-swish and hard-sigmoid squeeze-and-excitation; ConvNeXt's 7x7 depthwise convolutions
    # with LayerNorm over channels between permutes; ResNeXt's 32-group 3x3 convolutions.
    "mobilenet_v3_large": (lambda: torchvision.models.mobilenet_v3_large(weights=None), image),
    "convnext_tiny": (lambda: torchvision.models.convnext_tiny(weights=None), image),
    "resnext50_32x4d": (lambda: torchvision.models.resnext50_32x4d(weights=None), image),
    # Inception-v3's factorised 1x7 and 7x1 convolutions and average-pool branches on 299 x 299;
    # RegNetX's grouped convolutions without squeeze-and-excitation, strided on 112 x 112.
    "inception_v3": (lambda: torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=True),
                     lambda: image(299)),
    "regnet_x_800mf": (lambda: torchvision.models.regnet_x_800mf(weights=None), image),
    # MaxViT's attention is torch.einsum with spaced equations; LR-ASPP's head resizes to
    # sizes computed from two tensors' shapes (a segmentation model, 320 x 320).
    "maxvit_t": (lambda: torchvision.models.maxvit_t(weights=None), image),
    "lraspp_mobilenet_v3_large": (lraspp, lambda: image(320)),
    "lstm": (Lstm, lambda: torch.randn(1, 12, 32)),
    # S3D's separable 3-D convolutions and 3-D max pools on 16 frames; the written-out models'
    # RMSNorm, rotary embeddings, SwiGLU, Conv1d with GroupNorm, constant-scale upsampling.
    "s3d": (lambda: torchvision.models.video.s3d(weights=None), lambda: torch.randn(1, 3, 16, 224, 224)),
    "llama_small": (written_architectures.Llama, lambda: torch.randint(0, 8000, (1, 128))),
    "gpt2_small": (written_architectures.Gpt2, lambda: torch.randint(0, 8000, (1, 128))),
    # The same with the sequence dynamic too (DYNAMIC_SEQUENCE): its lengths come from Shapes.
    "gpt2_dynamic": (written_architectures.Gpt2, lambda: torch.randint(0, 8000, (1, 96))),
    "wav2vec_small": (written_architectures.Wav2Vec, lambda: torch.randn(1, 16000)),
    "unet_small": (written_architectures.UNet, lambda: image(64)),
    "wavenet_small": (written_architectures.WaveNet, lambda: torch.randn(1, 1, 4000)),
    "pointnet": (written_architectures.PointNet, lambda: torch.randn(1, 3, 1024)),
}

DYNAMIC_SEQUENCE = {"gpt2_dynamic": {"input": {0: "batch", 1: "sequence"}, "output": {0: "batch", 1: "sequence"}}}

stamp = f"torch {torch.__version__}, torchvision {torchvision.__version__}, reference io 2, distinct layers\n"
for name, (make, example) in MODELS.items():
    path = os.path.join(CACHE, name + ".onnx")
    stamp_path = path + ".stamp"
    if os.path.exists(path) and os.path.exists(stamp_path) and open(stamp_path).read() == stamp:
        print(f"{name}: cached")
        continue
    start = time.time()
    model = make().eval()
    tmp = path + ".tmp"
    # Grad stays enabled: under no_grad, torch 1.13 takes nn.MultiheadAttention's fused
    # fast path (aten::_native_multi_head_attention), which has no ONNX export.
    x = example()
    with torch.no_grad():
        y = model(x)
    np.save(path[:-5] + ".input.npy", x.numpy())
    np.save(path[:-5] + ".output.npy", y.numpy())
    torch.onnx.export(model, (x,), tmp, opset_version=17, input_names=["input"],
                      output_names=["output"], dynamic_axes=DYNAMIC_SEQUENCE.get(name, {"input": {0: "batch"}, "output": {0: "batch"}}),
                      do_constant_folding=True)
    os.replace(tmp, path)
    with open(stamp_path, "w") as f:
        f.write(stamp)
    print(f"{name}: exported in {time.time() - start:.1f} s ({os.path.getsize(path) / 1e6:.1f} MB)")
