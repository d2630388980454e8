"""The `weights=` argument of the model builders: a local checkpoint path or None.

Named torchvision weights ("IMAGENET1K_V1", "DEFAULT", ...) would have to be downloaded, which
ember cannot do here, so they raise a clear error instead of trying.
"""
import os

__all__ = ["load_weights"]


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
