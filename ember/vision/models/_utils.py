"""Helpers of the model builders: the `weights=` argument (a local checkpoint path or None;
named torchvision weights would have to be downloaded, which ember cannot do here, so they
raise a clear error instead of trying), the legacy `pretrained=` keyword, channel rounding,
and IntermediateLayerGetter (the feature extractor of the detection backbones).
"""
import os
from collections import OrderedDict

from ... import nn

__all__ = ["load_weights", "IntermediateLayerGetter"]


def load_weights(model, weights, progress=True, builder=None, fix_state=None):
    """Load `weights` (None, or a path to a state_dict / checkpoint saved by torch or ember).

    `fix_state` (optional) rewrites the loaded state_dict first, e.g. renaming the legacy
    keys of torchvision's published DenseNet checkpoints."""
    if weights is None or weights is False:
        return model
    name = builder or type(model).__name__.lower()
    if weights is True:
        raise RuntimeError(f"{name}(pretrained=True) needs torchvision's pretrained weights, "
                           "which cannot be downloaded here; pass weights='/path/to/file.pth' "
                           "(a state_dict saved with torch.save or ember.save) instead.")
    path = os.fspath(weights) if isinstance(weights, os.PathLike) else weights
    if not isinstance(path, str):
        path = getattr(weights, "name", str(weights))  # a torchvision-style enum member
    if not os.path.exists(os.path.expanduser(path)):
        if os.sep in path or path.endswith((".pth", ".pt", ".bin", ".ckpt")):
            raise FileNotFoundError(f"{name}: weights file '{path}' does not exist.")
        raise RuntimeError(f"{name}(weights={path!r}): named torchvision weights must be "
                           "downloaded, which ember cannot do here. Download the .pth file "
                           "elsewhere and pass its local path as weights=.")
    from ... import load
    state = load(os.path.expanduser(path), map_location="cpu")
    if isinstance(state, dict) and "state_dict" in state and not any(
            hasattr(v, "shape") for v in state.values()):
        state = state["state_dict"]  # a training checkpoint that wraps the state_dict
    if fix_state is not None:
        state = fix_state(state)
    model.load_state_dict(state)
    return model


def handle_legacy(weights, kwargs):
    """torchvision's deprecated `pretrained=` keyword, mapped onto weights."""
    if "pretrained" in kwargs:
        pretrained = kwargs.pop("pretrained")
        if pretrained and weights is None:
            weights = True
    return weights


def make_divisible(v, divisor, min_value=None):
    """Round channels to a multiple of `divisor`, never dropping below 90% (MobileNet)."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def overwrite_named_param(kwargs, param, new_value):
    """A builder's fixed hyper-parameter: set it, refusing a caller's different value."""
    if param in kwargs:
        if kwargs[param] != new_value:
            raise ValueError(f"The parameter '{param}' expected value {new_value} but got "
                             f"{kwargs[param]} instead.")
    else:
        kwargs[param] = new_value


class IntermediateLayerGetter(nn.ModuleDict):
    """The children of `model` up to the last one named in `return_layers`, run in order;
    forward returns an OrderedDict of the outputs of the named ones, under their new names
    (return_layers maps child name -> output name). Children are registered under their own
    names, so the state_dict keys are the model's."""
    _version = 2

    def __init__(self, model, return_layers):
        children = [name for name, _ in model.named_children()]
        if not set(return_layers).issubset(children):
            raise ValueError("return_layers are not present in model")
        wanted = {str(k) for k in return_layers}
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            wanted.discard(name)
            if not wanted:
                break
        super().__init__(layers)
        self.return_layers = return_layers

    def forward(self, x):
        out = OrderedDict()
        names = {str(k): str(v) for k, v in self.return_layers.items()}
        for name, module in self.items():
            x = module(x)
            if name in names:
                out[names[name]] = x
        return out
