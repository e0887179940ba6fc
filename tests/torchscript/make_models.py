#!/usr/bin/env python3
"""Writes the TorchScript files the torchscript suite loads, made here with Debian's PyTorch
and torchvision (seeded random weights; nothing is downloaded).

    make_models.py OUTDIR [NAME ...] [--stamp FILE] [--custom-classes LIBRARY LIBRARY]

For each model NAME it writes OUTDIR/NAME.script.pt (torch.jit.script) and, for the
classifiers, OUTDIR/NAME.trace.pt (torch.jit.trace), the input it was run on
(OUTDIR/NAME.input.bin: float32, C order) and LibTorch's output on it (NAME.output.bin), and
OUTDIR/NAME.json: the input shape, the parameter count and, when torch.fx can trace the Python
model, fx's call_module nodes counted by layer type; for the classifiers, OUTDIR/NAME.opnames.json:
torch.jit.export_opnames of each file. With --custom-classes (two builds of
tests/torchscript/custom_class.cpp) it also writes files holding an object of each library's
class. Files already there are kept (see write_detector).
"""
import collections
import hashlib
import inspect
import json
import linecache
import math
import os
import sys
import warnings
from typing import Dict, List, Optional, Union

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

# Detection models (torchvision.models.detection): the arguments to make each with and the seed of
# the image it runs on, on which none of its decisions is borderline (see PERTURBATION below).
DETECTORS = {
    "fasterrcnn_mobilenet_v3_large_320_fpn": (dict(box_score_thresh=0.65), 1),
    "retinanet_resnet50_fpn": (dict(min_size=320, max_size=320, score_thresh=0.995), 1),
    "ssdlite320_mobilenet_v3_large": (dict(score_thresh=0.97), 1),
    "maskrcnn_resnet50_fpn": (dict(min_size=320, max_size=320, box_score_thresh=0.35, rpn_pre_nms_top_n_test=50,
                                   rpn_post_nms_top_n_test=50), 4),
}


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
    """A buffer of an integer dtype other than int64 (symtrace holds it as int64)."""
    def __init__(self):
        super().__init__()
        self.register_buffer("counts", torch.arange(4, dtype=torch.int32))

    def forward(self, x):
        return x + self.counts.sum()


class Quantizing(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 1)

    def forward(self, x):
        return torch.quantize_per_tensor(self.conv(x), 0.1, 0, torch.quint8).dequantize()


class QuantizedOp(torch.nn.Module):
    """An op whose result is a quantized tensor, which symtrace holds, in one module of three."""
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 3, 1)
        self.odd = Quantizing()
        self.act = torch.nn.ReLU()

    def forward(self, x):
        return self.act(self.odd(self.stem(x)))


class QuantizedBlock(torch.nn.Module):
    """A model quantized as torchvision's quantized models are (eager mode: stubs, fused
    layers, a FloatFunctional add): its layers hold their weights as LibTorch objects (packed
    parameters) and compute on quint8 tensors, ReLU and the mean included."""
    def __init__(self):
        super().__init__()
        self.quant = torch.ao.quantization.QuantStub()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.relu = torch.nn.ReLU()
        self.skip = torch.nn.quantized.FloatFunctional()
        self.fc = torch.nn.Linear(4, 5)
        self.dequant = torch.ao.quantization.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        y = self.relu(self.conv(x))
        y = self.skip.add(y, y)
        return self.dequant(self.fc(y.mean([2, 3])))


def quantized_block():
    torch.manual_seed(0)
    model = QuantizedBlock().eval()
    model.qconfig = torch.ao.quantization.get_default_qconfig(torch.backends.quantized.engine)
    torch.ao.quantization.prepare(model, inplace=True)
    model(torch.rand(4, 3, 8, 8))  # calibration
    return torch.ao.quantization.convert(model, inplace=False)


class Spectrum(torch.nn.Module):
    """A complex spectrum (torch.stft), its magnitude and phase as real channels, as audio
    models' front ends compute them, into a convolution."""
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(34, 8, 3)
        self.register_buffer("window", torch.hann_window(32))

    def forward(self, x):
        spec = torch.stft(x, 32, hop_length=8, window=self.window, return_complex=True)
        mixed = spec * torch.polar(torch.ones_like(spec.real), spec.real.new_full((1,), 0.5))
        parts = torch.cat([mixed.abs(), torch.view_as_real(mixed)[..., 1]], 1)
        return self.conv(parts)


class Crop(torch.nn.Module):
    def forward(self, x, length: int):
        return x[..., :length]


class UpDown(torch.nn.Module):
    """A traced file's convolutions are `aten::_convolution` calls (1-d and transposed here),
    and a length passed to a child, as audio models' decoders crop their output."""
    def __init__(self):
        super().__init__()
        self.down = torch.nn.Conv1d(2, 4, 4, stride=2, padding=1)
        self.up = torch.nn.ConvTranspose1d(4, 2, 4, stride=2, padding=1, output_padding=1)
        self.crop = Crop()

    def forward(self, x):
        lengths = [x.shape[-1]]
        return self.crop(self.up(torch.relu(self.down(x))), lengths.pop(-1))


# A function compiled from source text of no file (as TorchScript's own builtins and code made
# with exec, such as a dataclass's __init__, are): its locations read "<string>:N". Its `if` on
# the data fails a symbolic trace there; the failure is located at the call in this file.
_STRING_SOURCE = """import torch
def gate(x: torch.Tensor) -> torch.Tensor:
    if bool(x.sum() > 0):
        return x
    return -x
"""
linecache.cache["<string>"] = (len(_STRING_SOURCE), None, _STRING_SOURCE.splitlines(True), "<string>")
_string_namespace = {"__name__": "string_source"}
exec(compile(_STRING_SOURCE, "<string>", "exec"), _string_namespace)
string_gate = _string_namespace["gate"]


class StringGate(torch.nn.Module):
    def forward(self, x):
        return string_gate(x * 2.0) + 1.0  # the call a failure in <string> is located at


class DashedNames(torch.nn.Module):
    """Children named as torchvision's RegNets name them (`block1-0`): any name without '.'."""
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(collections.OrderedDict(
            [("block1-0", torch.nn.Conv2d(3, 4, 1)), ("block1-1", torch.nn.ReLU())]))

    def forward(self, x):
        return self.body(x)


class LibTorchOps(torch.nn.Module):
    """Ops symtrace runs through LibTorch: einsum, cummax (two results), logcumsumexp, and
    F.normalize's norm and clamp_min."""
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = torch.einsum("bij,bkj->bik", x, x)
        values, indices = torch.cummax(y, dim=2)
        z = torch.logcumsumexp(values, dim=1) + indices.float()
        return self.proj(torch.nn.functional.normalize(z, dim=-1))


class FallbackOps(torch.nn.Module):
    """Only ops symtrace has no op of its own for, so every one runs through LibTorch's (the
    benchmark of the fallback's eager cost against LibTorch's own forward of the file)."""
    def forward(self, x):
        y = torch.log1p(torch.hypot(x, x))
        y = torch.expm1(torch.atan2(y, x))
        y = torch.copysign(torch.logaddexp(y, x), x)
        y = torch.frac(torch.hypot(y, x))
        y = torch.log1p(torch.hypot(torch.atan2(y, x), x))
        return torch.logaddexp(torch.expm1(y), torch.frac(x))


class Helper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 1)

    @torch.jit.export
    def scaled(self, x, factor: float):
        return self.conv(x) * factor

    def forward(self, x):
        return self.scaled(x, 1.0)


class Pyramid(torch.nn.Module):
    """Fills a list attribute in one method and reads it in another, as RAFT's CorrBlock does."""
    def __init__(self):
        super().__init__()
        self.levels: List[torch.Tensor] = [torch.zeros(1)]

    def build(self, x):
        self.levels = [x]
        for _ in range(2):
            x = torch.nn.functional.avg_pool2d(x, 2)
            self.levels.append(x)

    def forward(self, x):
        self.build(x)
        return torch.cat([level.mean(dim=(2, 3)) for level in self.levels], 1)


class Either(torch.nn.Module):
    def __init__(self, all_layers: bool):
        super().__init__()
        self.all_layers = all_layers

    def forward(self, x) -> Union[torch.Tensor, List[torch.Tensor]]:
        if self.all_layers:
            return [x, x * 2]
        return x * 3


class UnionResult(torch.nn.Module):
    """Children returning Union[Tensor, List[Tensor]], told apart by torch.jit.isinstance, as
    torchtext's RoBERTa tells its encoder's results apart."""
    def __init__(self):
        super().__init__()
        self.all = Either(True)
        self.last = Either(False)

    def forward(self, x):
        a = self.all(x)
        if torch.jit.isinstance(a, List[torch.Tensor]):
            a = a[-1]
        b = self.last(x)
        if torch.jit.isinstance(b, List[torch.Tensor]):
            b = b[-1]
        return a + b


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


class Recurrent(torch.nn.Module):
    """torch.nn.GRU (2 layers, both directions, batch first) feeding torch.nn.RNN (relu) from the
    GRU's last state, and a tanh RNN: symtrace's own layers once loaded."""
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(8, 6, num_layers=2, batch_first=True, bidirectional=True)
        self.relu_rnn = torch.nn.RNN(12, 6, nonlinearity="relu", batch_first=True)
        self.tanh_rnn = torch.nn.RNN(6, 5, batch_first=True, bias=False)

    def forward(self, x):
        y, h = self.gru(x)
        z, _ = self.relu_rnn(torch.tanh(y), h[-1:])  # traced: y used first, so (y, h) as PyTorch's
        w, _ = self.tanh_rnn(z)
        return w


class PassThrough(torch.nn.Module):
    """torch.nn.Identity between two layers: traced, its call records a forward of no inputs
    that returns None (the value passes by it), as in torchaudio's HDemucs."""
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.norm = torch.nn.Identity()

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x)))


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


class MaskedAttention(torch.nn.Module):
    """torch.nn's MultiheadAttention under masks its heads can be cut with: a float attention
    mask with a bool key padding mask (batch first), then a bool (causal) one (sequence first);
    the attention weights unused."""
    def __init__(self):
        super().__init__()
        self.first = torch.nn.MultiheadAttention(16, 4, batch_first=True)
        self.second = torch.nn.MultiheadAttention(16, 4)
        self.register_buffer("pad", torch.tensor([[False] * 4 + [True], [False] * 3 + [True] * 2]))
        self.register_buffer("soft", torch.randn(5, 5))
        self.register_buffer("causal", torch.triu(torch.ones(5, 5), diagonal=1).bool())

    def forward(self, x):  # [N, L, E] = [2, 5, 16]
        y, _ = self.first(x, x, x, key_padding_mask=self.pad, attn_mask=self.soft, need_weights=False)
        z = y.transpose(0, 1)
        w, _ = self.second(z, z, z, key_padding_mask=self.pad, attn_mask=self.causal, need_weights=False)
        return w.transpose(0, 1)


class OddAttention(torch.nn.Module):
    """Two MultiheadAttention layers of one TorchScript class, the second with add_zero_attn
    (an attribute): cutting the first one's heads cannot rewrite their class."""
    def __init__(self):
        super().__init__()
        self.plain = torch.nn.MultiheadAttention(16, 4)
        self.odd = torch.nn.MultiheadAttention(16, 4, add_zero_attn=True)

    def forward(self, x):  # [L, N, E] = [5, 2, 16]
        y, _ = self.plain(x, x, x, need_weights=False)
        z, _ = self.odd(y, y, y, need_weights=False)
        return z


class Builtins(torch.nn.Module):
    """TorchScript's number, bool, string and dtype builtins, as Python computes them."""
    def forward(self, x):
        n = x.size(1)
        flag = n > 2
        k = int(flag) + (n // 3) * 2 - (int(flag == True) + 1)
        scale = float(flag) + 0.5 if bool(n == 4) else 1.0
        where = "cpu" if n > 0 else "meta"
        y = x.to(torch.device(where), torch.float32)
        z = torch.zeros(x.shape, dtype=torch.long).masked_fill(x > 0, 3)
        shift = "conv.weight".find("weight") - "abc".find("z")
        parts = [n, k, shift]
        back = parts[::-1][0] * 10 + parts[2:0:-1][1] - len(parts[-1::-2])
        return y * k * scale + z.float() + sum(parts) + max(parts) - min(n, 2) + back


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
        out = images[0] + images[1] * 2
        if scale is not None:
            out = out * scale
        return out


class DictSum(torch.nn.Module):
    """Takes a dict of feature maps, as torchvision's MultiScaleRoIAlign does."""
    def forward(self, feats: Dict[str, torch.Tensor]):
        return feats["a"] + feats["b"] * 2


class Appender(torch.nn.Module):
    """A child whose method appends to the list it is given."""
    @torch.jit.export
    def add_to(self, items: List[torch.Tensor], x: torch.Tensor):
        items.append(x * 3)

    def forward(self, x):
        return x


def append_two(items: List[torch.Tensor], x: torch.Tensor):
    items.append(x + 1)
    items.append(x - 1)


def summed(items: List[torch.Tensor]):
    """The sum of the tensors times their count: a row that changes with any element or length."""
    return torch.stack(items).sum(0) * float(len(items))


class Aliasing(torch.nn.Module):
    """Changes lists and dicts through other names of them, as torchaudio's Emformer does (it
    puts lists in a list and appends to them afterwards): every name sees each change; a
    copy, a slice and list(x) are new lists. Scripted only: it appends to split's result."""
    cache: List[torch.Tensor]

    def __init__(self):
        super().__init__()
        self.appender = Appender()
        self.cache = []

    def forward(self, x):
        early = self.cache
        inner: List[torch.Tensor] = []
        outer = [inner]
        inner.append(x * 2)  # appended to after it was put in a list
        inner.append(x)
        alias = inner
        alias[1] = x + 5  # an item written through an alias
        alias.extend([x * 0.5])  # extended through an alias
        alias += [x * 11]  # and with +=, which extends the list itself
        outer[0] += [x * 19]  # a list read from a list
        outer[0].insert(0, x - 2)
        d: Dict[str, List[torch.Tensor]] = {"a": inner}
        d["a"].append(x * 7)  # a list held by a dict
        also = d
        also["b"] = [x]  # a dict written through an alias
        append_two(inner, x)  # by a function
        self.appender.add_to(inner, x)  # by a child's method
        self.cache.append(x * 13)  # a list attribute
        cached = self.cache
        cached.append(x * 17)
        copied = inner.copy()
        sliced = inner[1:]
        listed = list(inner)
        copied.append(x * 100)
        sliced.append(x * 200)
        listed.append(x * 300)
        last = alias.pop()
        parts = x.split(1)  # a list an op made (TorchScript's type; Python's is a tuple), put in a list
        held = [parts]
        parts.append(x[:1] * 19)
        return torch.stack([summed(outer[0]), summed(d["a"]), summed(d["b"]) * float(len(d)), summed(early),
                            summed(copied), summed(sliced), summed(listed), last,
                            summed(held[0]).expand(2, 3)])


class FloatSizes(torch.nn.Module):
    """Sizes scaled by floats, as decoders and resamplers compute them: int(H * 0.5) and
    math.floor(float(W) * 0.75) as the size of an interpolation, an upsampling by a scale
    factor, and a tensor scaled by a float computed from a size."""
    def forward(self, x):
        h = int(x.size(2) * 0.5)
        w = math.floor(float(x.size(3)) * 0.75)
        y = torch.nn.functional.interpolate(x, size=[h, w], mode="nearest")
        return torch.nn.functional.interpolate(y, scale_factor=2.0, mode="nearest") * (x.size(3) / 4)


# Models saved scripted only: the tests make their inputs.
SCRIPTED_ONLY = {"nms_topk": NmsTopk, "nms_branch": NmsBranch, "list_sum": ListSum, "dict_sum": DictSum}


# name: (make, input shape); those in TRACED are saved traced too
SMALL = {"three_ifs": (ThreeIfs, [1, 3, 16, 16]), "int32_buffer": (Int32Buffer, [1, 3, 4, 4]),
         "quantized_op": (QuantizedOp, [1, 3, 8, 8]), "libtorch_ops": (LibTorchOps, [2, 8, 8]),
         "dashed_names": (DashedNames, [1, 3, 4, 4]), "pyramid": (Pyramid, [1, 3, 8, 8]),
         "union_result": (UnionResult, [2, 3]),
         "other_method": (OtherMethod, [1, 3, 8, 8]),
         "lstm_tagger": (Tagger, [2, 7, 8]), "recurrent": (Recurrent, [2, 7, 8]), "pass_through": (PassThrough, [1, 3, 8, 8]), "builtins": (Builtins, [2, 4, 3]), "transformer_encoder": (encoder, [2, 5, 32]),
         "layers": (Layers, [5, 2, 16]), "aliasing": (Aliasing, [2, 3]),
         "fallback_ops": (FallbackOps, [1, 16, 64, 64]), "string_gate": (StringGate, [2, 3]),
         "quantized_block": (quantized_block, [1, 3, 8, 8]), "spectrum": (Spectrum, [2, 256]),
         "up_down": (UpDown, [1, 2, 16]), "float_sizes": (FloatSizes, [1, 3, 10, 13]),
         "masked_attention": (MaskedAttention, [2, 5, 16]), "odd_attention": (OddAttention, [5, 2, 16])}
TRACED = {"lstm_tagger", "layers", "recurrent", "pass_through", "up_down"}


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


def up_to_date(path, own_code):
    """Whether PATH exists and, for a model whose code is in this file (the tests pin its Python
    lines), is newer than this file."""
    return os.path.exists(path) and (not own_code or os.path.getmtime(path) >= os.path.getmtime(__file__))


def write(outdir, name, model, shape, trace=True, own_code=False):
    stem = os.path.join(outdir, name)
    outputs = [".json", ".script.pt", ".input.bin", ".output.bin"] + ([".trace.pt"] if trace else [])
    if all(up_to_date(stem + suffix, own_code) for suffix in outputs):
        return
    torch.manual_seed(0)
    model.eval()
    for p in model.state_dict().values():  # BatchNorm statistics away from 0/1, so they matter
        if isinstance(p, torch.Tensor) and p.dtype == torch.float32 and p.dim() == 1:
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


def torchtext_roberta():
    """torchtext's RoBERTa model classes, without `import torchtext` (Debian's python3-torchtext
    0.14 ships its C++ extension without the init function Python looks for, so the package's
    __init__ fails; the models are plain torch.nn code)."""
    import importlib
    import types
    base = "/usr/lib/python3/dist-packages/torchtext"
    for name, path in [("torchtext", base), ("torchtext.models", os.path.join(base, "models")),
                       ("torchtext.models.roberta", os.path.join(base, "models", "roberta"))]:
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [path]
            sys.modules[name] = pkg
    return importlib.import_module("torchtext.models.roberta.model")


def family_model(name):
    """One small model of each family beyond classification (tools/corpus runs them all)."""
    if name == "wav2letter":
        import torchaudio
        return torchaudio.models.Wav2Letter(num_classes=20, input_type="waveform", num_features=1)
    if name == "roberta_tiny":
        roberta = torchtext_roberta()
        return roberta.RobertaModel(roberta.RobertaEncoderConf(
            vocab_size=100, embedding_dim=32, ffn_dimension=64, num_attention_heads=4, num_encoder_layers=2))
    if name == "r3d_18":
        return torchvision.models.video.r3d_18(weights=None)
    if name == "raft_small":
        return torchvision.models.optical_flow.raft_small(weights=None)
    raise KeyError(name)


# name: its inputs, as (shape, dtype, high) (int64 values drawn from [0, high))
FAMILIES = {"wav2letter": [([1, 1, 2000], "float32", 0)],
            "roberta_tiny": [([1, 12], "int64", 100)],
            "r3d_18": [([1, 3, 4, 32, 32], "float32", 0)],
            "raft_small": [([1, 3, 64, 64], "float32", 0), ([1, 3, 64, 64], "float32", 0)]}


def write_family(outdir, name):
    """NAME.script.pt, its inputs (NAME.input<k>.bin) and LibTorch's output (NAME.output.bin:
    the tensor, or the last of a list of them: RAFT's last flow), described in NAME.json."""
    stem = os.path.join(outdir, name)
    if os.path.exists(stem + ".json"):
        return
    torch.manual_seed(0)
    model = family_model(name).eval()
    inputs = []
    for shape, dtype, high in FAMILIES[name]:
        inputs.append(torch.randint(0, high, shape) if dtype == "int64" else torch.randn(*shape))
    scripted = torch.jit.script(model)
    scripted.save(stem + ".script.pt")
    with torch.no_grad():
        out = scripted(*inputs)
    if isinstance(out, list):
        out = out[-1]
    for k, x in enumerate(inputs):
        x.numpy().tofile(f"{stem}.input{k}.bin")
    out.contiguous().numpy().astype("float32").tofile(stem + ".output.bin")
    meta = {"inputs": [{"shape": s, "dtype": d, "high": h} for s, d, h in FAMILIES[name]],
            "output": list(out.shape), "parameters": sum(p.numel() for p in model.parameters())}
    with open(stem + ".json.tmp", "w") as f:
        json.dump(meta, f)
    os.replace(stem + ".json.tmp", stem + ".json")


# The detectors' classes and image: the thresholds above keep tens of detections, the ResNet-50
# ones run at 320 pixels (not 800), Mask R-CNN on 50 proposals (not 1000).
DETECTOR_CLASSES = 11
DETECTOR_IMAGE = [3, 240, 320]

# LibTorch's run of a detector on its image is repeated PERTURBED_RUNS times on the weights
# perturbed by PERTURBATION of themselves (each float parameter and buffer times 1 + 1e-5 N(0, 1)).
# The image will do only if every run finds the same detections: no decision on it (a score
# against a threshold, NMS's overlap against its own, a top-k cut) is that close to going the
# other way. Each detection is then compared within what the runs moved it (perturbed_spread);
# LibTorch's kernels for other processors (ATEN_CPU_CAPABILITY=default, avx2, avx512; oneDNN
# down to SSE4.1) move the detections by a third of that at most.
PERTURBATION = 1e-5
PERTURBED_RUNS = 4


def is_head_output(name):
    """A head's last layer: class scores, box deltas, mask logits (SSD's: module_list.N.1)."""
    parts = name.split(".")
    return parts[-1] in ("cls_logits", "cls_score", "bbox_pred", "bbox_reg", "mask_fcn_logits") or \
        (len(parts) >= 3 and parts[-3] == "module_list" and parts[-1] == "1")


def detector(name, image):
    """torchvision's detection model NAME with seeded random weights: the backbone's convolutions
    initialised for their fan-in at unit gain, and each head's last layer set so that, on
    `image`, each of its outputs averages its bias and varies by 2 (0.5 for box deltas) across
    positions and boxes. With torchvision's initialisation for untrained weights, MobileNet's
    layers shrink the image away (the same features everywhere but at the borders, so detections
    whose scores tie or differ by rounding) and ResNet's features grow to scores of 1 for one
    class; with ReLU's gain instead, rounding grows a hundredfold through MobileNet."""
    torch.manual_seed(0)
    kwargs, _ = DETECTORS[name]
    model = getattr(torchvision.models.detection, name)(weights=None, weights_backbone=None,
                                                        num_classes=DETECTOR_CLASSES, **kwargs).eval()
    for p in model.state_dict().values():
        if p.dtype == torch.float32 and p.dim() == 1:  # BatchNorm statistics away from 0/1
            p.add_(torch.rand_like(p) * 0.1)
    for m in model.backbone.modules():
        if isinstance(m, torch.nn.Conv2d):
            torch.nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="linear")
    heads = {n: m for n, m in model.named_modules() if is_head_output(n)}
    biases = {n: m.bias.clone() for n, m in heads.items()}
    for _ in range(3):  # each stage sees boxes from the one before: measure again after setting it
        outputs = {n: [] for n in heads}

        def keep(name):
            def hook(layer, args, out):
                rows = out - layer.bias.view(-1, *[1] * (out.dim() - 2))
                outputs[name].append(rows.transpose(0, 1).flatten(1).T if rows.dim() > 2 else rows)
            return hook
        hooks = [m.register_forward_hook(keep(n)) for n, m in heads.items()]
        model([image])
        for h in hooks:
            h.remove()
        for n, m in heads.items():
            rows = torch.cat(outputs[n]) if outputs[n] else torch.zeros(0)
            if len(rows) > 1:
                scale = (0.5 if "bbox" in n else 2.0) / float(rows.std(0).mean())
                m.weight.mul_(scale)
                m.bias.copy_(biases[n] - scale * rows.mean(0))
    return model


def detector_image(name):
    torch.manual_seed(DETECTORS[name][1])
    return torch.rand(*DETECTOR_IMAGE)


def perturbed_run(model, image, seed):
    """`model`'s detections on `image` with its float parameters and buffers perturbed by
    PERTURBATION of themselves (seeded); the model is left as it was."""
    state = model.state_dict()
    saved = {k: t.clone() for k, t in state.items()}
    gen = torch.Generator().manual_seed(seed)
    for t in state.values():
        if t.is_floating_point():
            t.mul_(1 + PERTURBATION * torch.randn(t.shape, generator=gen))
    try:
        return model([image])[0]
    finally:
        model.load_state_dict(saved)


def paired(reference, run):
    """For each detection of `reference`, the index of the one of `run` with its label, a box
    within a pixel and a score within 0.01, one for one; None when one has no pair or `run` has
    more (a decision went the other way)."""
    pairs, taken = [], set()
    for i in range(len(reference["scores"])):
        far = (run["boxes"] - reference["boxes"][i]).abs().amax(1).tolist()
        near = [j for j in range(len(far)) if j not in taken and far[j] <= 1.0 and run["labels"][j] == reference["labels"][i]
                and abs(float(run["scores"][j] - reference["scores"][i])) <= 0.01]
        if not near:
            return None
        pairs.append(min(near, key=lambda j: far[j]))
        taken.add(pairs[-1])
    return pairs if len(run["scores"]) == len(pairs) else None


def grown(boxes):
    """Where torchvision's paste_masks_in_image puts the corners of Mask R-CNN's 28x28 masks (one
    pixel of padding around) for detections' `boxes`, before truncating them to pixels."""
    return torchvision.models.detection.roi_heads.expand_boxes(boxes, 30 / 28)


def perturbed_spread(model, image, reference):
    """How far the perturbed runs move each of `reference`'s detections at most: its score
    (relative), each box corner (pixels) and, where it is pasted at the same pixels, its mask
    (any pixel); at least 1e-6, 1e-4 and 1e-6. Masks whose paste is borderline, a grown corner
    within its spread of a pixel's edge or moved by a run, are listed apart ("borderline_masks"):
    rounding may paste them a pixel off. Or, when a run finds other detections, a sentence
    saying so."""
    n = len(reference["scores"])
    scores, boxes, masks = torch.full((n,), 1e-6), torch.full((n, 4), 1e-4), torch.full((n,), 1e-6)
    moved = torch.zeros(n, dtype=torch.bool)
    for k in range(PERTURBED_RUNS):
        run = perturbed_run(model, image, k)
        pairs = paired(reference, run)
        if pairs is None:
            return (f"the run on weights perturbed with seed {k} finds other detections than the unperturbed run "
                    f"({len(run['scores'])} and {n})")
        scores = torch.max(scores, ((run["scores"][pairs] - reference["scores"]) / reference["scores"]).abs())
        boxes = torch.max(boxes, (run["boxes"][pairs] - reference["boxes"]).abs())
        if "masks" in reference:
            same = (grown(run["boxes"][pairs]).to(torch.int64) == grown(reference["boxes"]).to(torch.int64)).all(1)
            moved |= ~same
            spread = (run["masks"][pairs] - reference["masks"]).abs().flatten(1).amax(1)
            masks = torch.where(same, torch.max(masks, spread), masks)
    borderline = []
    if "masks" in reference:
        corners = grown(reference["boxes"])
        edge = (corners - corners.round()).abs() <= 30 / 28 * torch.max(boxes, boxes[:, [2, 3, 0, 1]])
        borderline = (moved | edge.any(1)).nonzero().flatten().tolist()
    return {"scores": scores.tolist(), "boxes": boxes.tolist(),
            "masks": masks.tolist() if "masks" in reference else None, "borderline_masks": borderline}


def detector_recipe(name):
    """What NAME's files are made from: they are made again when it changes."""
    source = "".join(inspect.getsource(f) for f in (detector, detector_image, perturbed_run, paired, grown,
                                                      perturbed_spread, write_detector))
    made = [DETECTORS[name], DETECTOR_IMAGE, DETECTOR_CLASSES, PERTURBATION, PERTURBED_RUNS, source,
            torch.__version__, torchvision.__version__]
    return hashlib.sha256(repr(made).encode()).hexdigest()[:16]


def write_detector(outdir, name):
    """NAME.script.pt, the image (NAME.input.bin, DETECTOR_IMAGE), and LibTorch's detections
    for it in NAME.json ("boxes", "labels", "scores", as lists; for Mask R-CNN the masks in
    NAME.masks.bin, float32), with what perturbed runs move each ("tolerances": "scores",
    "boxes", "masks", "borderline_masks") or why the image will not do ("unstable"). Files made
    from another recipe (detector_recipe) are made again."""
    stem = os.path.join(outdir, name)
    recipe = detector_recipe(name)
    if os.path.exists(stem + ".json") and os.path.exists(stem + ".script.pt"):
        with open(stem + ".json") as f:
            if json.load(f).get("recipe") == recipe:
                return
    x = detector_image(name)
    model = detector(name, x)
    scripted = torch.jit.script(model)
    scripted.save(stem + ".script.pt")
    detections = scripted([x])[1][0]
    spread = perturbed_spread(model, x, detections)
    x.numpy().tofile(stem + ".input.bin")
    if "masks" in detections:
        detections["masks"].contiguous().numpy().astype("float32").tofile(stem + ".masks.bin")
    meta = {"input": DETECTOR_IMAGE, "parameters": sum(p.numel() for p in model.parameters()),
            "boxes": detections["boxes"].tolist(), "labels": detections["labels"].tolist(),
            "scores": detections["scores"].tolist(),
            "masks": list(detections["masks"].shape) if "masks" in detections else None,
            "tolerances": spread if isinstance(spread, dict) else None,
            "unstable": spread if isinstance(spread, str) else None, "recipe": recipe}
    with open(stem + ".json.tmp", "w") as f:
        json.dump(meta, f)
    os.replace(stem + ".json.tmp", stem + ".json")


class HoldsObject(torch.nn.Module):
    """Holds an object of a class a library registers with LibTorch (tests/torchscript/
    custom_class.cpp) and calls its method."""
    def __init__(self, class_name: str):
        super().__init__()
        self.offset = getattr(torch.classes.symtrace_test, class_name)(0.5)

    def forward(self, x):
        return torch.relu(self.offset.apply(x))


class CallsUnloadedOp(torch.nn.Module):
    """Calls an operator of a library (tests/torchscript/custom_class.cpp) the tests do not load."""
    def forward(self, x):
        return torch.ops.symtrace_test.twice_Unloaded(x)


# name -> its model (made with --custom-classes)
CUSTOM_CLASS_MODELS = {"holds_offset": lambda: HoldsObject("Offset"), "holds_unloaded": lambda: HoldsObject("Unloaded"),
                       "calls_unloaded_op": CallsUnloadedOp}


def write_custom_class_model(outdir, name):
    path = os.path.join(outdir, name + ".script.pt")
    if not up_to_date(path, True):
        torch.jit.script(CUSTOM_CLASS_MODELS[name]()).save(path + ".tmp")
        os.replace(path + ".tmp", path)


def write_opnames(outdir, name):
    """torch.jit.export_opnames of each file made of the model: the root operators `symtrace ops`
    lists (tests/torchscript/operator_lists_test.cpp)."""
    stem = os.path.join(outdir, name)
    files = {form: stem + "." + form + ".pt" for form in ("script", "trace") if os.path.exists(stem + "." + form + ".pt")}
    path = stem + ".opnames.json"
    if not files or (os.path.exists(path) and all(os.path.getmtime(path) >= os.path.getmtime(f) for f in files.values())):
        return
    with open(path + ".tmp", "w") as f:
        json.dump({form: sorted(torch.jit.export_opnames(torch.jit.load(file))) for form, file in files.items()}, f)
    os.replace(path + ".tmp", path)


def main():
    args = sys.argv[1:]
    stamp = None
    if "--stamp" in args:
        k = args.index("--stamp")
        stamp = args[k + 1]
        del args[k:k + 2]
    libraries = []
    if "--custom-classes" in args:
        k = args.index("--custom-classes")
        libraries = args[k + 1:k + 3]
        del args[k:k + 3]
        for library in libraries:
            torch.classes.load_library(library)
    outdir = args[0]
    names = args[1:] or (list(CLASSIFIERS) + list(SMALL) + list(SEGMENTERS) + list(DETECTORS) + list(SCRIPTED_ONLY) +
                         list(FAMILIES) + (list(CUSTOM_CLASS_MODELS) if libraries else []))
    os.makedirs(outdir, exist_ok=True)
    torch.manual_seed(0)
    for name in names:
        torch.manual_seed(0)
        if name in CUSTOM_CLASS_MODELS:
            write_custom_class_model(outdir, name)
            write_opnames(outdir, name)
            continue
        if name in SCRIPTED_ONLY:
            path = os.path.join(outdir, name + ".script.pt")
            if not up_to_date(path, True):
                torch.jit.script(SCRIPTED_ONLY[name]()).save(path + ".tmp")
                os.replace(path + ".tmp", path)
            continue
        if name in FAMILIES:
            write_family(outdir, name)
            continue
        if name in SMALL:
            make, shape = SMALL[name]
            write(outdir, name, make(), shape, trace=name in TRACED, own_code=True)
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
        write_opnames(outdir, name)
    if stamp:
        open(stamp, "w").close()


if __name__ == "__main__":
    main()
