#!/usr/bin/env python3
"""Exports torchvision's detection and optical-flow models to ONNX, by hand (not in CI: 14-180 MB
each, and their outputs are sets of boxes, which the element-wise checks of
check_real_models.py cannot compare).

usage: export_detection.py CACHE_DIR [NAME...]

NAMEs: ssdlite, ssd300, retinanet, fcos, fasterrcnn_mnv3, maskrcnn, keypointrcnn, raft_small
(all by default). Images are 320 x 320 (SSD300: 300 x 300; RAFT: two 128 x 128 frames), the
exports torchvision's own (opset 17, one image as [3, H, W]). torchvision's random
initialisation leaves these heads dead (SSDlite scores every class 1/91, Faster R-CNN keeps no
box), so every convolution, norm and linear layer gets spread weights first: scores differ
and the order of boxes is decided by values, not ties. Next to each model go the reference
input (NAME.input.npy; RAFT: NAME.image1.npy, NAME.image2.npy, which bench_vs_ort.sh feeds
both runtimes) and PyTorch's outputs (NAME.out.KEY.npy). PyTorch and the exported graphs
differ for the R-CNN family (ONNX Runtime agrees with fusescope there, not with PyTorch);
compare those against ONNX Runtime.
"""
import os
import sys
import time

import numpy as np
import torch
import torchvision
from torchvision.models import detection

CACHE = sys.argv[1]
NAMES = sys.argv[2:] or ["ssdlite", "ssd300", "retinanet", "fcos", "fasterrcnn_mnv3", "maskrcnn", "keypointrcnn",
                         "raft_small"]
SMALL = dict(weights=None, weights_backbone=None, min_size=320, max_size=320)
MODELS = {
    "ssdlite": (lambda: detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None), 320),
    "ssd300": (lambda: detection.ssd300_vgg16(weights=None, weights_backbone=None), 300),
    "retinanet": (lambda: detection.retinanet_resnet50_fpn(**SMALL), 320),
    "fcos": (lambda: detection.fcos_resnet50_fpn(**SMALL), 320),
    # Thresholds at 0 so that random weights still leave proposals and boxes.
    "fasterrcnn_mnv3": (lambda: detection.fasterrcnn_mobilenet_v3_large_320_fpn(
        weights=None, weights_backbone=None, box_score_thresh=0.0, rpn_score_thresh=0.0), 320),
    "maskrcnn": (lambda: detection.maskrcnn_resnet50_fpn(**SMALL), 320),
    "keypointrcnn": (lambda: detection.keypointrcnn_resnet50_fpn(**SMALL), 320),
    "raft_small": (lambda: torchvision.models.optical_flow.raft_small(weights=None), 128),
}


def spread_weights(model):
    g = torch.Generator().manual_seed(1)
    for mod in model.modules():
        if isinstance(mod, torch.nn.Conv2d):
            fan_in = mod.in_channels // mod.groups * mod.kernel_size[0] * mod.kernel_size[1]
            mod.weight.data = torch.randn(mod.weight.shape, generator=g) * (1.0 / fan_in) ** 0.5
            if mod.bias is not None:
                mod.bias.data = torch.randn(mod.bias.shape, generator=g) * 0.05
        elif isinstance(mod, torch.nn.BatchNorm2d):
            mod.weight.data = torch.rand(mod.weight.shape, generator=g) + 0.5
            mod.bias.data = torch.randn(mod.bias.shape, generator=g) * 0.1
            mod.running_mean.data = torch.randn(mod.running_mean.shape, generator=g) * 0.1
            mod.running_var.data = torch.rand(mod.running_var.shape, generator=g) + 0.5
        elif isinstance(mod, torch.nn.Linear):
            mod.weight.data = torch.randn(mod.weight.shape, generator=g) * (1.0 / mod.in_features) ** 0.5
            if mod.bias is not None:
                mod.bias.data = torch.randn(mod.bias.shape, generator=g) * 0.05


os.makedirs(CACHE, exist_ok=True)
for name in NAMES:
    make, size = MODELS[name]
    torch.manual_seed(0)
    model = make()
    spread_weights(model)
    model.eval()
    path = os.path.join(CACHE, name + ".onnx")
    start = time.time()
    torch.manual_seed(1)
    if name == "raft_small":
        frames = (torch.rand(1, 3, size, size) * 2 - 1, torch.rand(1, 3, size, size) * 2 - 1)
        torch.onnx.export(model, frames, path, opset_version=17, input_names=["image1", "image2"])
        with torch.no_grad():
            flow = model(*frames)[-1]
        np.save(os.path.join(CACHE, name + ".image1.npy"), frames[0].numpy())
        np.save(os.path.join(CACHE, name + ".image2.npy"), frames[1].numpy())
        np.save(os.path.join(CACHE, name + ".out.flow.npy"), flow.numpy())
    else:
        image = torch.rand(3, size, size)
        torch.onnx.export(model, ([image],), path, opset_version=17, input_names=["image"])
        with torch.no_grad():
            found = model([image])[0]
        np.save(os.path.join(CACHE, name + ".input.npy"), image.numpy())
        for key, value in found.items():
            np.save(os.path.join(CACHE, f"{name}.out.{key}.npy"), value.numpy())
    print(f"{name}: exported in {time.time() - start:.1f} s ({os.path.getsize(path) / 1e6:.1f} MB)")
