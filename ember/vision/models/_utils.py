"""What the model builders share (torchvision.models._utils): the `weights=` argument
(a WeightsEnum member or its name, None, or ember's extension: a local checkpoint path), the
legacy `pretrained=` interface, fixed hyper-parameters, and `IntermediateLayerGetter`."""
import functools
import inspect
import os
import warnings
from collections import OrderedDict

from ... import nn
from ._api import WeightsEnum

__all__ = ["IntermediateLayerGetter", "handle_legacy_interface", "load_weights",
           "prepare_weights",
           "verify_weights", "make_divisible", "overwrite_named_param"]

_CHECKPOINT_SUFFIXES = (".pth", ".pt", ".bin", ".ckpt", ".tar")


class IntermediateLayerGetter(nn.ModuleDict):
    """Runs `model`'s direct children in registration order, up to the last one named in
    `return_layers`, and returns an OrderedDict {return_layers[name]: that child's output}.

    Only direct children can be returned, and the model must call its children in the order it
    registered them, each once (true of ResNet, MobileNet features, ...)."""
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
        names = {str(k): v for k, v in self.return_layers.items()}
        for name, module in self.items():
            x = module(x)
            if name in names:
                out[names[name]] = x
        return out


# ---- weights= -----------------------------------------------------------------------------
def _is_local_path(weights):
    if isinstance(weights, os.PathLike):
        return True
    return isinstance(weights, str) and (
        os.sep in weights or weights.endswith(_CHECKPOINT_SUFFIXES)
        or os.path.exists(os.path.expanduser(weights)))


def verify_weights(weights_enum, weights):
    """`weights` checked against the builder's enum: a member of it (also given by name),
    None, or a local checkpoint path (returned as it is). A member of another enum raises
    torchvision's TypeError; an unknown name its KeyError."""
    if _is_local_path(weights):
        return weights
    return weights_enum.verify(weights)


def load_weights(model, weights, progress=True, fix_state=None):
    """Load `weights` (a WeightsEnum member, a local checkpoint path, or None) into `model`.
    `fix_state` rewrites the state_dict first (DenseNet's legacy key names)."""
    if weights is None:
        return model
    if isinstance(weights, WeightsEnum):
        state = weights.get_state_dict(progress=progress, check_hash=True)
    else:
        path = os.path.expanduser(os.fspath(weights))
        if not os.path.exists(path):
            raise FileNotFoundError(f"weights file '{path}' does not exist.")
        from ... import load
        state = load(path, map_location="cpu")
        if isinstance(state, dict) and "state_dict" in state and not any(
                hasattr(v, "shape") for v in state.values()):
            state = state["state_dict"]  # a training checkpoint that wraps the state_dict
    if fix_state is not None:
        state = fix_state(state)
    model.load_state_dict(state)
    return model


def _sequence_to_str(seq, separate_last=""):
    if len(seq) == 1:
        return f"'{seq[0]}'"
    head = "'" + "', '".join(str(item) for item in seq[:-1]) + "'"
    comma = "" if separate_last and len(seq) == 2 else ","
    return f"{head}{comma} {separate_last}'{seq[-1]}'"


def kwonly_to_pos_or_kw(fn):
    """Let the keyword-only parameters of `fn` be passed positionally again (as before
    torchvision 0.13), with a deprecation warning."""
    params = list(inspect.signature(fn).parameters.values())
    first_kwonly = next((i for i, p in enumerate(params) if p.kind == p.KEYWORD_ONLY), None)
    if first_kwonly is None:
        raise TypeError(f"Found no keyword-only parameter on function '{fn.__name__}'")
    kwonly_names = [p.name for p in params[first_kwonly:]]

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args, extra = args[:first_kwonly], args[first_kwonly:]
        if extra:
            moved = dict(zip(kwonly_names, extra))
            warnings.warn(f"Using {_sequence_to_str(tuple(moved), separate_last='and ')} as "
                          "positional parameter(s) is deprecated since 0.13 and may be removed "
                          "in the future. Please use keyword parameter(s) instead.")
            kwargs.update(moved)
        return fn(*args, **kwargs)
    return wrapper


def handle_legacy_interface(**weights):
    """Decorator mapping the legacy `pretrained=True` (and `weights=True`, or a positional
    True) onto the weights a builder had before 0.13, with torchvision's warnings.

    Each keyword is `weights_param=(legacy_param, default)`; `default` is a WeightsEnum
    member, None (no weights exist), or a callable taking the keyword arguments."""
    def outer(builder):
        @kwonly_to_pos_or_kw
        @functools.wraps(builder)
        def inner(*args, **kwargs):
            for weights_param, (legacy_param, default) in weights.items():
                missing = object()
                value = kwargs.get(weights_param, missing)
                if ((weights_param not in kwargs and legacy_param not in kwargs)
                        or isinstance(value, WeightsEnum)
                        or (isinstance(value, (str, os.PathLike)) and value != "legacy")
                        or value is None):
                    continue
                # a legacy value passed as `weights_param` (positionally or weights=True)
                passed_as_weights = value is not missing
                if passed_as_weights:
                    kwargs[legacy_param] = kwargs.pop(weights_param)
                legacy_value = kwargs[legacy_param]
                if legacy_value:
                    chosen = default(kwargs) if callable(default) else default
                    if not isinstance(chosen, WeightsEnum):
                        raise ValueError(f"No weights available for model {builder.__name__}")
                else:
                    chosen = None
                if not passed_as_weights:
                    warnings.warn(f"The parameter '{legacy_param}' is deprecated since 0.13 and "
                                  f"may be removed in the future, please use '{weights_param}' "
                                  "instead.")
                message = (f"Arguments other than a weight enum or `None` for '{weights_param}' "
                           "are deprecated since 0.13 and may be removed in the future. The "
                           f"current behavior is equivalent to passing `{weights_param}="
                           f"{chosen}`.")
                if legacy_value:
                    message += (f" You can also use `{weights_param}={type(chosen).__name__}"
                                ".DEFAULT` to get the most up-to-date weights.")
                warnings.warn(message)
                del kwargs[legacy_param]
                kwargs[weights_param] = chosen
            return builder(*args, **kwargs)
        return inner
    return outer


# ---- builder hyper-parameters -------------------------------------------------------------
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


def overwrite_value_param(param, actual, expected):
    """A value that must be `expected` when given (None: not given); returns `expected`."""
    if actual is not None and actual != expected:
        raise ValueError(f"The parameter '{param}' expected value {expected} but got {actual} "
                         "instead.")
    return expected


# torchvision's private spellings, which some downstream code imports
_make_divisible = make_divisible
_ovewrite_named_param = overwrite_named_param
_ovewrite_value_param = overwrite_value_param


def prepare_weights(weights_enum, weights, kwargs):
    """A builder's first step: `weights` verified against its enum (see verify_weights), and
    for named weights with categories, `num_classes` fixed to their number."""
    weights = verify_weights(weights_enum, weights)
    if isinstance(weights, WeightsEnum) and weights.meta.get("categories") is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    return weights
