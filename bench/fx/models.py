"""The zoo's reference architectures in plain torch.nn, for torch.fx (no torchvision needed).

symtrace's zoo (src/zoo/) writes these models in C++ against its own API. This file writes the
same models in PyTorch, so that torch.fx can trace them: `tools/fx-graph` prints fx's graphs
for tests/data/fx/ and `bench_fx.py` times fx on them for `tools/bench --vs-fx`. The two
sides agree on everything a graph or a checkpoint shows:

  * attribute names and the order children are registered in, so module paths and
    state_dict keys are the same ("layer1.0.downsample.1.running_mean");
  * parameter counts (resnet50 25,557,032; mobilenet_v2 3,504,872; vit_b16 86,567,656);
  * the operations each forward performs, in the same order, so fx's graph and symtrace's
    record the same nodes (tests/trace/fx_parity_test.cpp compares them).

Weights use the layers' default initialisation: tracing does not read values. Every builder
returns its model in eval mode. `MODELS` maps the zoo's names to (builder, example input
shape); `build(name)` also takes `deep_mlp_N` for any N.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


# ---------------------------------------------------------------------------------- ResNets
# src/zoo/resnet.cpp. Children are registered in torchvision's order; the 3x3 convolution of a
# bottleneck carries its stride (torchvision's "v1.5").

class BasicBlock(nn.Module):
    """torchvision's BasicBlock: two 3x3 convolutions with BatchNorm, plus the identity."""

    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out = out + identity
        return self.relu(out)


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (with the block's stride), 1x1 expand to 4x, each with BatchNorm; the
    identity (or its downsampled form) is added before the last ReLU."""

    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        width = planes
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def residual(self, x):
        """The block up to the addition: (main branch, identity branch)."""
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        # `downsample` is fixed when the model is built, so this test is no data-dependent branch
        identity = x if self.downsample is None else self.downsample(x)
        return out, identity

    def forward(self, x):
        out, identity = self.residual(x)
        return self.relu(out + identity)


class FailingBottleneck(Bottleneck):
    """A Bottleneck whose forward branches on its data once bn3 has run, so a symbolic tracer
    has recorded most of the block before it fails (fx raises TraceError there)."""

    def forward(self, x):
        out, identity = self.residual(x)
        if out.sum() > 0:
            out = out + identity
        else:
            out = out * 0.5 + identity
        return self.relu(out)


class ResNet(nn.Module):
    """conv1 7x7/2, bn1, relu, maxpool 3x3/2, four stages of blocks (64, 128, 256, 512 planes,
    stride 2 from the second on), global average pooling, flatten, fc.

    `failing` holds global block indices (counted through layer1..layer4, from 0) whose
    bottleneck is a FailingBottleneck."""

    def __init__(self, block=Bottleneck, layers=(3, 4, 6, 3), num_classes=1000, failing=()):
        super().__init__()
        if failing and block is not Bottleneck:
            raise ValueError("only bottleneck ResNets have failing blocks")
        self._block = block
        self._failing = frozenset(failing)
        self._next_index = 0
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = self._stage(64, layers[0], 1)
        self.layer2 = self._stage(128, layers[1], 2)
        self.layer3 = self._stage(256, layers[2], 2)
        self.layer4 = self._stage(512, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _stage(self, planes, blocks, stride):
        out_channels = planes * self._block.expansion
        downsample = None
        if stride != 1 or self.inplanes != out_channels:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )
        stage = []
        for i in range(blocks):
            kind = FailingBottleneck if self._next_index in self._failing else self._block
            stage.append(kind(self.inplanes, planes, stride if i == 0 else 1, downsample if i == 0 else None))
            self.inplanes = out_channels
            self._next_index += 1
        return nn.Sequential(*stage)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


# The failing block sets of resnet50_fail1/4/16 (include/symtrace/zoo/resnet.hpp). Global indices:
# layer1 holds 0..2, layer2 3..6, layer3 7..12, layer4 13..15.
RESNET50_FAIL1 = (7,)              # layer3.0
RESNET50_FAIL4 = (0, 3, 7, 13)     # the first block of every stage
RESNET50_FAIL16 = tuple(range(16))  # every block


def resnet18(num_classes=1000):
    """torchvision's ResNet-18: 11,689,512 parameters."""
    return ResNet(BasicBlock, (2, 2, 2, 2), num_classes).eval()


def resnet50(failing=(), num_classes=1000):
    """ResNet-50, 25,557,032 parameters; the blocks of `failing` are FailingBottlenecks."""
    return ResNet(Bottleneck, (3, 4, 6, 3), num_classes, failing).eval()


# ------------------------------------------------------------------------------ MobileNetV2
# src/zoo/mobilenet.cpp.

def make_divisible(value, divisor=8, min_value=None):
    """`value` rounded to a multiple of `divisor`, never below min_value (default: divisor)
    nor more than 10% below `value`."""
    rounded = max(min_value or divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


class ConvBNReLU(nn.Sequential):
    """Convolution (padding keeps the size at stride 1), BatchNorm, ReLU6: children 0, 1, 2."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, groups=1):
        padding = (kernel_size - 1) // 2
        super().__init__(
            nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, groups=groups, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU6(inplace=True),
        )


class InvertedResidual(nn.Module):
    """Expand (1x1, left out at ratio 1), depthwise 3x3, project (1x1 and BatchNorm), all in
    one Sequential `conv`; the input is added when the block keeps the shape."""

    def __init__(self, in_channels, out_channels, stride, expand_ratio):
        super().__init__()
        hidden = in_channels * expand_ratio
        self.use_res_connect = stride == 1 and in_channels == out_channels
        layers = [ConvBNReLU(in_channels, hidden, kernel_size=1)] if expand_ratio != 1 else []
        layers.append(ConvBNReLU(hidden, hidden, stride=stride, groups=hidden))
        layers.append(nn.Conv2d(hidden, out_channels, 1, 1, 0, bias=False))
        layers.append(nn.BatchNorm2d(out_channels))
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:  # fixed when the block is built
            return x + self.conv(x)
        return self.conv(x)


# (expansion t, output channels c, repeats n, stride of the first s) of each stage
MOBILENET_V2_STAGES = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)


class MobileNetV2(nn.Module):
    """`features` (a stem ConvBNReLU, 17 InvertedResiduals, a 1x1 ConvBNReLU to 1280 channels),
    functional average pooling and flatten, then `classifier` (Dropout(0.2), Linear)."""

    def __init__(self, num_classes=1000, width_mult=1.0):
        super().__init__()
        channels = make_divisible(32 * width_mult)
        self.last_channel = make_divisible(1280 * max(1.0, width_mult))
        features = [ConvBNReLU(3, channels, stride=2)]
        for t, c, n, s in MOBILENET_V2_STAGES:
            out_channels = make_divisible(c * width_mult)
            for i in range(n):
                features.append(InvertedResidual(channels, out_channels, s if i == 0 else 1, t))
                channels = out_channels
        features.append(ConvBNReLU(channels, self.last_channel, kernel_size=1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(self.last_channel, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, (1, 1))
        x = torch.flatten(x, 1)
        return self.classifier(x)


def mobilenet_v2(num_classes=1000):
    """MobileNetV2 at width 1.0: 3,504,872 parameters."""
    return MobileNetV2(num_classes).eval()


# ---------------------------------------------------------------------- Vision Transformer
# src/zoo/vit.cpp. Attention is written out (qkv reshaped and permuted, matmul, softmax,
# matmul), so both tracers record each step rather than one fused call.

class Attention(nn.Module):
    """Multi-head self-attention: [B, N, dim] -> [B, N, dim]."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.size(0), x.size(1), x.size(2)
        packed = self.qkv(x).reshape(B, N, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = packed[0], packed[1], packed[2]  # each [B, heads, N, head_dim]
        weights = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * self.scale, dim=-1)
        out = torch.matmul(weights, v).transpose(1, 2).reshape(B, N, C)
        return self.proj(out)


class MLP(nn.Module):
    """fc1, GELU, fc2."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class EncoderBlock(nn.Module):
    """A pre-norm encoder block: x + attn(ln1(x)), then that + mlp(ln2(that))."""

    def __init__(self, dim, heads, mlp_hidden):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, heads)
        self.ln2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = MLP(dim, mlp_hidden)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class ViT(nn.Module):
    """Patch embedding (a convolution with kernel and stride `patch`), a class token (zeros)
    and position embeddings (N(0, 0.02^2)), `depth` encoder blocks, LayerNorm, and a linear
    head on the class token: [B, 3, image_size, image_size] -> [B, num_classes]."""

    def __init__(self, image_size=224, patch=16, dim=768, depth=12, heads=12, mlp=3072, num_classes=1000):
        super().__init__()
        tokens = (image_size // patch) ** 2 + 1
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        self.blocks = nn.Sequential(*(EncoderBlock(dim, heads, mlp) for _ in range(depth)))
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)  # [B, patches, dim]
        cls = self.cls_token.expand(x.size(0), -1, -1)
        x = torch.cat([cls, x], dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


def vit_b16(num_classes=1000):
    """ViT-B/16 at 224x224: 86,567,656 parameters."""
    return ViT(num_classes=num_classes).eval()


def vit_tiny(num_classes=1000):
    """ViT-Ti/16 at 224x224 (dim 192, 3 heads, MLP 768): 5,717,416 parameters."""
    return ViT(dim=192, heads=3, mlp=768, num_classes=num_classes).eval()


# -------------------------------------------------------------------------------- DeepMLP
# src/zoo/mlp.cpp: many small module calls, the stress test of a tracer's per-call cost.

class MLPBlock(nn.Module):
    """x + act(norm(fc(x))): 4,288 parameters at width 64."""

    def __init__(self, dim=64):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.act = nn.GELU()

    def forward(self, x):
        return x + self.act(self.norm(self.fc(x)))


class FailingMLPBlock(MLPBlock):
    """An MLPBlock that adds or subtracts its branch depending on the branch's sum."""

    def forward(self, x):
        h = self.act(self.norm(self.fc(x)))
        if h.sum() > 0:
            return x + h
        return x - h


class DeepMLP(nn.Module):
    """`blocks`: a Sequential of n_blocks MLPBlocks; block i is a FailingMLPBlock when
    fail_every divides i."""

    def __init__(self, n_blocks, dim=64, fail_every=None):
        super().__init__()
        kinds = (FailingMLPBlock if fail_every and i % fail_every == 0 else MLPBlock for i in range(n_blocks))
        self.blocks = nn.Sequential(*(kind(dim) for kind in kinds))

    def forward(self, x):
        return self.blocks(x)


def deep_mlp(n_blocks, fail_every=None):
    """DeepMLP of width 64: n_blocks x 4,288 parameters."""
    return DeepMLP(n_blocks, 64, fail_every).eval()


# ------------------------------------------------------------------------------- registry

IMAGE = (1, 3, 224, 224)
FEATURES = (1, 64)

MODELS = {
    "resnet18": (resnet18, IMAGE),
    "resnet50": (resnet50, IMAGE),
    "resnet50_fail1": (lambda: resnet50(RESNET50_FAIL1), IMAGE),
    "resnet50_fail4": (lambda: resnet50(RESNET50_FAIL4), IMAGE),
    "resnet50_fail16": (lambda: resnet50(RESNET50_FAIL16), IMAGE),
    "mobilenet_v2": (mobilenet_v2, IMAGE),
    "vit_b16": (vit_b16, IMAGE),
    "vit_tiny": (vit_tiny, IMAGE),
    "deep_mlp_100": (lambda: deep_mlp(100), FEATURES),
    "deep_mlp_1000": (lambda: deep_mlp(1000), FEATURES),
    "deep_mlp_10000": (lambda: deep_mlp(10000), FEATURES),
    "deep_mlp_1000_fail16": (lambda: deep_mlp(1000, fail_every=64), FEATURES),
}


def build(name):
    """The model called `name`: a key of MODELS, or deep_mlp_N for any N >= 0."""
    if name in MODELS:
        return MODELS[name][0]()
    prefix = "deep_mlp_"
    if name.startswith(prefix) and name[len(prefix):].isdigit():
        return deep_mlp(int(name[len(prefix):]))
    raise KeyError(f"unknown model '{name}' (known: {', '.join(MODELS)}, deep_mlp_N)")


def example_input(name):
    """A random input of the shape `name` takes."""
    shape = MODELS[name][1] if name in MODELS else FEATURES
    return torch.randn(*shape)


def count_parameters(model):
    return sum(p.numel() for p in model.parameters())


if __name__ == "__main__":
    # Builds every model, counts its parameters and failing blocks, and runs the small ones.
    for name in MODELS:
        model = build(name)
        failing = sum(isinstance(m, (FailingBottleneck, FailingMLPBlock)) for m in model.modules())
        line = f"{name:22} {count_parameters(model):>12,} parameters  {failing:2} failing blocks"
        if not name.startswith(("vit_b16", "deep_mlp_10000")):
            with torch.no_grad():
                line += f"  output {list(model(example_input(name)).shape)}"
        print(line, flush=True)
