#!/usr/bin/env python3
"""Writes the TorchScript files the torchscript suite loads, made here with Debian's PyTorch
and torchvision (seeded random weights; nothing is downloaded).

    make_models.py OUTDIR [NAME ...] [--stamp FILE]

For each model NAME it writes OUTDIR/NAME.script.pt (torch.jit.script) and, for the
classifiers, OUTDIR/NAME.trace.pt (torch.jit.trace), the input it was run on
(OUTDIR/NAME.input.bin: float32, C order) and LibTorch's output on it (NAME.output.bin), and
OUTDIR/NAME.json: the input shape, the parameter count and, when torch.fx can trace the Python
model, fx's call_module nodes counted by layer type. Files already there are kept.
"""
import json
import os
import sys
import warnings
from typing import Dict, List, Optional

import torch
import torch.fx
import torchvision

warnings.filterwarnings("ignore")
torch.set_grad_enabled(False)

# The smallest input each architecture accepts (square images; batch 1).
CLASSIFIERS = {
    "resnet18": 32, "resnet50": 32, "resnext50_32x4d": 32, "mobilenet_v2": 32,
    "mobilenet_v3_large": 32, "efficientnet_b0": 32, "convnext_tiny": 32,
    "shufflenet_v2_x1_0": 32, "squeezenet1_0": 64, "vgg11": 32, "alexnet": 64,
    "googlenet": 32, "inception_v3": 75, "densenet121": 32, "vit_b_16": 224, "swin_t": 32,
}

# Segmentation models (torchvision.models.segmentation; no auxiliary head): they return a
# dict {"out": logits}.
SEGMENTERS = {"deeplabv3_mobilenet_v3_large": 64, "fcn_resnet50": 64}

# Detection models (torchvision.models.detection): the arguments to make each with, and the
# spread of the normal weights drawn for its heads (0: torchvision's own initialisation). The
# thresholds keep a few tens of detections whose scores differ, from random weights; the
# ResNet-50 ones run at 320 pixels, not 800.
DETECTORS = {
    "fasterrcnn_mobilenet_v3_large_320_fpn": (dict(box_score_thresh=0.0425), 2.0),
    "retinanet_resnet50_fpn": (dict(min_size=320, max_size=320, score_thresh=0.22), 0),
    "ssdlite320_mobilenet_v3_large": (dict(score_thresh=0.0146), 2.0),
    "maskrcnn_resnet50_fpn": (dict(min_size=320, max_size=320, box_score_thresh=0.99), 0),
}
DETECTOR_IMAGE = [3, 240, 320]


class Gate(torch.nn.Module):
    """Data-dependent if: the branch taken depends on the input's values."""
    def __init__(self, c):
        super().__init__()
        self.conv = torch.nn.Conv2d(c, c, 3, padding=1)
        self.act = torch.nn.ReLU()

    def forward(self, x):
        y = self.act(self.conv(x))
        if y.mean() > 0:
            return y
        return -y


class Scale(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(c)

    def forward(self, x):
        x = self.bn(x)
        if bool(x.max() > 1.0):
            x = x / 2
        return x


class Head(torch.nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(c, n)

    def forward(self, x):
        x = torch.flatten(self.pool(x), 1)
        if x.sum() > 0:
            x = torch.relu(x)
        return self.fc(x)


class ThreeIfs(torch.nn.Module):
    """A small user model with three data-dependent ifs in three modules."""
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.gate = Gate(8)
        self.scale = Scale(8)
        self.head = Head(8, 4)

    def forward(self, x):
        return self.head(self.scale(self.gate(self.stem(x))))


class Int32Buffer(torch.nn.Module):
    """A buffer of a dtype symtrace cannot hold."""
    def __init__(self):
        super().__init__()
        self.register_buffer("counts", torch.zeros(4, dtype=torch.int32))

    def forward(self, x):
        return x + 1


class Cumulative(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 1)

    def forward(self, x):
        return torch.cumsum(self.conv(x), dim=1)


class MissingOp(torch.nn.Module):
    """An op symtrace lacks (cumsum), in one module of three."""
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 3, 1)
        self.odd = Cumulative()
        self.act = torch.nn.ReLU()

    def forward(self, x):
        return self.act(self.odd(self.stem(x)))


class Helper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 1)

    @torch.jit.export
    def scaled(self, x, factor: float):
        return self.conv(x) * factor

    def forward(self, x):
        return self.scaled(x, 1.0)


class OtherMethod(torch.nn.Module):
    """A parent calling a method of its child other than forward."""
    def __init__(self):
        super().__init__()
        self.helper = Helper()

    def forward(self, x):
        return self.helper.scaled(x, 2.0) + x


class Tagger(torch.nn.Module):
    """torch.nn.LSTM (2 layers, batch first) and a linear head over its outputs."""
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(16, 5)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y)


def encoder():
    layer = torch.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


class Layers(torch.nn.Module):
    """torch.nn's MultiheadAttention (with a key padding mask and an attention mask), a
    bidirectional two-layer LSTM and Softmax: symtrace's own layers once loaded."""
    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(16, 4)
        self.lstm = torch.nn.LSTM(16, 8, num_layers=2, bidirectional=True)
        self.softmax = torch.nn.Softmax(dim=-1)
        self.register_buffer("pad", torch.tensor([[False] * 4 + [True], [False] * 3 + [True] * 2]))
        self.register_buffer("mask", torch.randn(5, 5))

    def forward(self, x):  # [L, N, E] = [5, 2, 16]
        y, w = self.attn(x, x, x, key_padding_mask=self.pad, attn_mask=self.mask)
        assert w is not None
        z, _ = self.lstm(y)
        return self.softmax(z) + w[:, :, 0].mean()


class Builtins(torch.nn.Module):
    """TorchScript's number, bool, string and dtype builtins, as Python computes them."""
    def forward(self, x):
        n = x.size(1)
        flag = n > 2
        k = int(flag) + (n // 3) * 2 - (int(flag == True) + 1)
        scale = float(flag) + 0.5 if bool(n == 4) else 1.0
        y = x.to(torch.device("cpu"), torch.float32)
        z = torch.zeros(x.shape, dtype=torch.long).masked_fill(x > 0, 3)
        shift = "conv.weight".find("weight") - "abc".find("z")
        parts = [n, k, shift]
        return y * k * scale + z.float() + sum(parts) + max(parts) - min(n, 2)


class NmsTopk(torch.nn.Module):
    """A count from torchvision's nms flows through reshape, cat and topk(min(k, n))."""
    def forward(self, boxes, scores):
        keep = torchvision.ops.nms(boxes, scores, 0.5)
        n = keep.size(0)
        kept = scores[keep].reshape(n, 1)
        both = torch.cat([kept, kept * 2], 1).reshape(-1)
        return both.topk(min(3, n * 2))[0]


class NmsBranch(torch.nn.Module):
    """Branches on how many boxes nms keeps: data-dependent control flow."""
    def __init__(self):
        super().__init__()
        self.post = NmsTopk()

    def forward(self, boxes, scores):
        top = self.post(boxes, scores)
        keep = torchvision.ops.nms(boxes, scores, 0.5)
        if keep.size(0) > 2:
            return top
        return top * 2


class ListSum(torch.nn.Module):
    """Takes a list of images, as torchvision's detection models do, and an optional input."""
    def forward(self, images: List[torch.Tensor], scale: Optional[float] = None):
        return images[0] + images[1] * 2


class DictSum(torch.nn.Module):
    """Takes a dict of feature maps, as torchvision's MultiScaleRoIAlign does."""
    def forward(self, feats: Dict[str, torch.Tensor]):
        return feats["a"] + feats["b"] * 2


# Models saved scripted only: the tests make their inputs.
SCRIPTED_ONLY = {"nms_topk": NmsTopk, "nms_branch": NmsBranch, "list_sum": ListSum, "dict_sum": DictSum}


# name: (make, input shape); those in TRACED are saved traced too
SMALL = {"three_ifs": (ThreeIfs, [1, 3, 16, 16]), "int32_buffer": (Int32Buffer, [1, 3, 4, 4]),
         "missing_op": (MissingOp, [1, 3, 8, 8]), "other_method": (OtherMethod, [1, 3, 8, 8]),
         "lstm_tagger": (Tagger, [2, 7, 8]), "builtins": (Builtins, [2, 4, 3]), "transformer_encoder": (encoder, [2, 5, 32]),
         "layers": (Layers, [5, 2, 16])}
TRACED = {"lstm_tagger", "layers"}


CONTAINERS = (torch.nn.Sequential, torch.nn.ModuleList, torch.nn.ModuleDict, torch.nn.ParameterList,
              torch.nn.ParameterDict)


def is_fx_leaf(module):
    """torch.fx's default leaf rule (Tracer.is_leaf_module), for modules that are called (the
    other containers never are)."""
    return (module.__module__.startswith("torch.nn") or module.__module__.startswith("torch.ao.nn")) \
        and not isinstance(module, CONTAINERS)


def rule_leaf_counts(model):
    """What fx's leaf rule picks in a model whose modules its forward each calls once: the
    torch.nn modules not inside another (for the models torch.fx cannot trace)."""
    counts = {}

    def walk(module):
        for child in module.children():
            if is_fx_leaf(child):
                name = type(child).__name__
                counts[name] = counts.get(name, 0) + 1
            else:
                walk(child)
    walk(model)
    return counts


def fx_leaf_counts(model):
    try:
        gm = torch.fx.symbolic_trace(model)
    except Exception:  # models torch.fx cannot trace: its leaf rule over the module tree
        return rule_leaf_counts(model)
    counts = {}
    modules = dict(gm.named_modules())
    for node in gm.graph.nodes:
        if node.op == "call_module":
            name = type(modules[node.target]).__name__
            counts[name] = counts.get(name, 0) + 1
    return counts


def write(outdir, name, model, shape, trace=True):
    stem = os.path.join(outdir, name)
    outputs = [".json", ".script.pt", ".input.bin", ".output.bin"] + ([".trace.pt"] if trace else [])
    if all(os.path.exists(stem + suffix) for suffix in outputs):
        return
    torch.manual_seed(0)
    model.eval()
    for p in model.state_dict().values():  # BatchNorm statistics away from 0/1, so they matter
        if p.dtype == torch.float32 and p.dim() == 1:
            p.add_(torch.rand_like(p) * 0.1)
    x = torch.randn(*shape)
    scripted = torch.jit.script(model)
    scripted.save(stem + ".script.pt")
    out = scripted(x)
    if isinstance(out, tuple):  # googlenet and inception_v3 return named tuples
        out = out[0]
    if isinstance(out, dict):  # segmentation models: {"out": logits}
        out = out["out"]
    if trace:
        torch.jit.trace(model, x, check_trace=False).save(stem + ".trace.pt")
    x.numpy().tofile(stem + ".input.bin")
    out.contiguous().numpy().astype("float32").tofile(stem + ".output.bin")
    meta = {"input": list(x.shape), "output": list(out.shape),
            "parameters": sum(p.numel() for p in model.parameters()),
            "fx_call_modules": fx_leaf_counts(model)}
    with open(stem + ".json.tmp", "w") as f:
        json.dump(meta, f)
    os.replace(stem + ".json.tmp", stem + ".json")


def write_detector(outdir, name):
    """NAME.script.pt, the image (NAME.input.bin, DETECTOR_IMAGE), and LibTorch's detections
    for it in NAME.json ("boxes", "labels", "scores", as lists; for Mask R-CNN the masks in
    NAME.masks.bin, float32)."""
    stem = os.path.join(outdir, name)
    if os.path.exists(stem + ".json") and os.path.exists(stem + ".script.pt"):
        return
    torch.manual_seed(0)
    kwargs, gain = DETECTORS[name]
    model = getattr(torchvision.models.detection, name)(weights=None, weights_backbone=None, **kwargs).eval()
    for key, p in model.state_dict().items():
        if p.dtype == torch.float32 and p.dim() == 1:  # BatchNorm statistics away from 0/1
            p.add_(torch.rand_like(p) * 0.1)
        if gain and p.dim() > 1 and ("head" in key or "predictor" in key or "rpn" in key):
            p.normal_(0, gain / p[0].numel() ** 0.5)
    scripted = torch.jit.script(model)
    scripted.save(stem + ".script.pt")
    torch.manual_seed(1)
    x = torch.rand(*DETECTOR_IMAGE)
    detections = scripted([x])[1][0]
    x.numpy().tofile(stem + ".input.bin")
    if "masks" in detections:
        detections["masks"].contiguous().numpy().astype("float32").tofile(stem + ".masks.bin")
    meta = {"input": DETECTOR_IMAGE, "parameters": sum(p.numel() for p in model.parameters()),
            "boxes": detections["boxes"].tolist(), "labels": detections["labels"].tolist(),
            "scores": detections["scores"].tolist(),
            "masks": list(detections["masks"].shape) if "masks" in detections else None}
    with open(stem + ".json.tmp", "w") as f:
        json.dump(meta, f)
    os.replace(stem + ".json.tmp", stem + ".json")


def main():
    args = sys.argv[1:]
    stamp = None
    if "--stamp" in args:
        k = args.index("--stamp")
        stamp = args[k + 1]
        del args[k:k + 2]
    outdir = args[0]
    names = args[1:] or list(CLASSIFIERS) + list(SMALL) + list(SEGMENTERS) + list(DETECTORS) + list(SCRIPTED_ONLY)
    os.makedirs(outdir, exist_ok=True)
    torch.manual_seed(0)
    for name in names:
        torch.manual_seed(0)
        if name in SCRIPTED_ONLY:
            path = os.path.join(outdir, name + ".script.pt")
            if not os.path.exists(path):
                torch.jit.script(SCRIPTED_ONLY[name]()).save(path + ".tmp")
                os.replace(path + ".tmp", path)
            continue
        if name in SMALL:
            make, shape = SMALL[name]
            write(outdir, name, make(), shape, trace=name in TRACED)
            continue
        if name in DETECTORS:
            write_detector(outdir, name)
            continue
        if name in SEGMENTERS:
            model = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, aux_loss=False)
            write(outdir, name, model, [1, 3, SEGMENTERS[name], SEGMENTERS[name]], trace=False)
            continue
        kwargs = {"aux_logits": False, "init_weights": False} if name in ("googlenet", "inception_v3") else {}
        model = getattr(torchvision.models, name)(weights=None, **kwargs)
        write(outdir, name, model, [1, 3, CLASSIFIERS[name], CLASSIFIERS[name]])
    if stamp:
        open(stamp, "w").close()


if __name__ == "__main__":
    main()
