"""`nn.init`: parameter initialisations with PyTorch's formulas (fans, gains, bounds).
Every function fills its tensor in place without recording a graph, and returns it."""
import contextlib
import functools
import math
import threading
import warnings

from ..autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_"]


def calculate_gain(nonlinearity, param=None):
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor):
    dims = tensor.dim()
    if dims < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.size(1) * receptive, tensor.size(0) * receptive


_calculate_fan_in_and_fan_out = _fans


def _fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal(mean, std) restricted to [a, b] by rejection, as PyTorch 2.13 draws it (so a
    seeded CPU run gets its values): when [a, b] holds more than 0.3 of the mass, normal
    draws, out-of-range entries replaced from fresh whole draws until none is left; else
    uniform proposals on [a, b], each accepted when log(U) < log(pdf / pdf at the mode)."""
    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    if tensor.is_meta:  # no values to draw (the rejection loops would read them)
        return tensor
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            return _normal_rejection(tensor, mean, std, a, b, generator)
        return _uniform_rejection(tensor, mean, std, a, b, generator)


def _normal_rejection(tensor, mean, std, a, b, generator):
    from .. import ops
    lo, hi = (tensor.new_tensor(v, device="cpu").item() for v in (a, b))  # the dtype's bounds
    result = tensor.normal_(mean, std, generator=generator)
    while True:
        outside = (result < lo) | (result > hi)
        if not outside.any():
            break
        fresh = ops.empty_like(result).normal_(mean, std, generator=generator)
        result = ops.where(outside, fresh, result)
    if result is not tensor:
        tensor.copy_(result)
    return tensor


def _uniform_rejection(tensor, mean, std, a, b, generator):
    from .. import ops
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_density(x):  # in place: log(pdf(x) / pdf(mode))
        return x.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)

    def rejected(candidates, scratch):
        return scratch.uniform_(generator=generator).log_().gt(candidates)
    scratch = ops.empty_like(tensor)
    result = tensor.uniform_(a, b, generator=generator)
    candidates = log_density(result.clone())
    pending = rejected(candidates, scratch)
    while pending.any():
        candidates.uniform_(a, b, generator=generator)
        result = ops.where(pending, candidates, result)
        log_density(candidates)
        pending = ops.where(pending, rejected(candidates, scratch), pending)
    if result is not tensor:
        tensor.copy_(result)
    return tensor


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from ..ops.ranges import eye
    with no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype))


def dirac_(tensor, groups=1):
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                index = (g * out_per_group + d, d) + tuple(s // 2 for s in sizes[2:])
                tensor[index] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    # the bound from the standard deviation, in PyTorch's order of roundings (the float64
    # draws see its last place)
    a = math.sqrt(3.0) * (gain * math.sqrt(2.0 / float(fan_in + fan_out)))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * (gain / math.sqrt(_fan(tensor, mode)))  # (PyTorch's order)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0, gain / math.sqrt(_fan(tensor, mode)), generator)


def orthogonal_(tensor, gain=1, generator=None):
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:  # no values to make orthogonal
        return tensor
    import numpy as np
    from ..ops.creation import tensor as make
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flat = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
    a = flat.detach().cpu().numpy().astype(np.float64)
    if rows < cols:
        a = a.T
    q, r = np.linalg.qr(a)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.view_as(tensor).copy_(make(q, dtype=tensor.dtype).view(tensor.shape) * gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from ..ops.random_ops import randperm
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            zero_rows = randperm(rows, generator=generator)[:num_zeros]
            tensor[zero_rows, col] = 0
    return tensor


# ---- initialisers skipped while nn.utils.skip_init builds a module --------------------------------
_skip = threading.local()


@contextlib.contextmanager
def _skipping():
    """Inside, every in-place initialiser returns its tensor untouched (and draws nothing from
    the random generators), as PyTorch's run on its meta device does."""
    _skip.depth = getattr(_skip, "depth", 0) + 1
    try:
        yield
    finally:
        _skip.depth -= 1


def _skippable(fn):
    @functools.wraps(fn)
    def initialiser(tensor, *args, **kwargs):
        if getattr(_skip, "depth", 0):
            return tensor
        return fn(tensor, *args, **kwargs)
    return initialiser


for _name in __all__:
    if _name.endswith("_"):
        globals()[_name] = _skippable(globals()[_name])


# ---- the deprecated names without the trailing underscore -------------------------------------
def _deprecated(new_name):
    old_name = new_name[:-1]
    target = globals()[new_name]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
                      FutureWarning, stacklevel=2)
        return target(*args, **kwargs)
    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = (f"\n    {old_name}(...)\n\n    .. warning::\n        This method is "
                               f"now deprecated in favor of :func:`torch.nn.init.{new_name}`.\n\n"
                               f"    See :func:`~torch.nn.init.{new_name}` for details.")
    return deprecated_init


uniform = _deprecated("uniform_")
normal = _deprecated("normal_")
constant = _deprecated("constant_")
eye = _deprecated("eye_")
dirac = _deprecated("dirac_")
xavier_uniform = _deprecated("xavier_uniform_")
xavier_normal = _deprecated("xavier_normal_")
kaiming_uniform = _deprecated("kaiming_uniform_")
kaiming_normal = _deprecated("kaiming_normal_")
orthogonal = _deprecated("orthogonal_")
sparse = _deprecated("sparse_")


# PyTorch's private helpers of the same jobs, which custom initialisers import by name
_calculate_correct_fan = _fan


def _no_grad_uniform_(tensor, a, b, generator=None):
    return uniform_(tensor, a, b, generator)


def _no_grad_normal_(tensor, mean, std, generator=None):
    return normal_(tensor, mean, std, generator)


def _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=None):
    return trunc_normal_(tensor, mean, std, a, b, generator)


def _no_grad_fill_(tensor, val):
    return constant_(tensor, val)


def _no_grad_zero_(tensor):
    return zeros_(tensor)
