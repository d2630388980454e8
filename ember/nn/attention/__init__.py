"""`torch.nn.attention`: choosing the kernels behind `F.scaled_dot_product_attention`.

`sdpa_kernel` switches the attention-kernel flags of `ember.backends.cuda` (the same ones
`enable_flash_sdp` ... set) for the length of a `with` block, and optionally their priority
order, and restores them on exit. ember has one attention implementation (the math one, on
NumPy or CuPy), so the flags do not change its numbers: they are kept so scripts that set
and read them run unchanged. The flash-attention implementation registry is PyTorch's
mechanism for kernel providers; ember ships none (PyTorch's FA3/FA4 are CUDA kernels), so
its list starts empty."""
import contextlib
import enum

from ...backends import cuda as _cuda_backend

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS",
           "register_flash_attention_impl", "activate_flash_attention_impl",
           "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

# PyTorch warns why a fused kernel could not run when this is True; ember runs no fused kernel
# and never has a reason to give, so it only keeps the switch.
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The scaled-dot-product-attention backends, with PyTorch's values. Members are not ints
    (`SDPBackend.MATH == 0` is False, as in PyTorch) but convert with `int()`."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value

    __index__ = __int__


# flag name in ember.backends.cuda -> the backend it switches, in PyTorch's order
_FLAG_BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
                  "mem_efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH,
                  "overrideable": SDPBackend.OVERRIDEABLE}


def _cur_sdpa_kernel_backends(with_priority=False):
    """The enabled backends; with `with_priority`, in the current priority order."""
    backends = [b for flag, b in _FLAG_BACKENDS.items() if _cuda_backend._sdp[flag]]
    if with_priority:
        order = _cuda_backend._sdp_priority
        backends.sort(key=lambda b: order.index(int(b)))
    return backends


def _sdpa_kernel(backends, set_priority=False):
    for flag, backend in _FLAG_BACKENDS.items():
        _cuda_backend._sdp[flag] = backend in backends
    if set_priority:
        # the given backends first, in the given order, then the rest as they were
        order = [int(b) for b in backends]
        order += [v for v in _cuda_backend._sdp_priority if v not in order]
        _cuda_backend._sdp_priority[:] = order


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block only `backends` (one SDPBackend or a list) are enabled for
    `scaled_dot_product_attention`; with `set_priority=True` their order is also the order in
    which they are tried. The previous flags (and order) come back on exit, also after an
    error."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        # as PyTorch: the previously enabled backends, first in the order they had
        _sdpa_kernel(previous, set_priority)


# ---- flash-attention implementation registry (for kernel providers) ----------------------------
_flash_impls = {}
_flash_active = None  # (name, handle) of the activated implementation


def register_flash_attention_impl(impl, *, register_fn):
    """Make `impl` activatable: `activate_flash_attention_impl(impl)` will call
    `register_fn()`, which may return a handle with a `remove()` method."""
    _flash_impls[impl] = register_fn


def activate_flash_attention_impl(impl):
    """Activate a registered implementation, after restoring the default."""
    global _flash_active
    restore_flash_attention_impl(_raise_warn=False)
    register_fn = _flash_impls.get(impl)
    if register_fn is None:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f"{list_flash_attention_impls()}")
    handle = register_fn()
    if handle is not None:
        _flash_active = (impl, handle)


def list_flash_attention_impls():
    return sorted(_flash_impls)


def current_flash_attention_impl():
    """The activated implementation's name, or None for the default."""
    return _flash_active[0] if _flash_active is not None else None


def restore_flash_attention_impl(_raise_warn=True):
    """Go back to the default implementation (removing the activated one's handle)."""
    global _flash_active
    if _flash_active is not None:
        _flash_active[1].remove()
    elif _raise_warn:
        import logging  # here: `import ember` need not load logging for one warning
        logging.getLogger(__name__).warning(
            "Trying to restore default FA2 impl when no custom impl was activated")
    _flash_active = None
