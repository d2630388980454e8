"""`torch.backends.opt_einsum`: whether einsum of three or more operands contracts them in
the order the opt_einsum package computes (`strategy`: "auto", "greedy" or "optimal"), or
left to right. ember's einsum honours it as PyTorch's does: opt_einsum's path where the
package is installed and `enabled` is on, else left to right.

`enabled` and `strategy` are plain attributes (a script may assign them); `set_flags` and
`flags(...)` check the values first, as PyTorch's do."""
import contextlib
import functools
import sys
import types

try:
    import opt_einsum as _opt_einsum
except ImportError:
    _opt_einsum = None


@functools.lru_cache
def is_available() -> bool:
    """Whether the opt_einsum package is installed (`pip install opt-einsum`), so einsum can
    contract its operands in an optimal order."""
    return _opt_einsum is not None


def get_opt_einsum():
    """The opt_einsum package when it is installed, else None."""
    return _opt_einsum


def _set_enabled(_enabled):
    if not is_available() and _enabled:
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {_enabled} will not reap "
            "the benefits of calculating an optimal path for einsum. torch.einsum will "
            "fall back to contracting from left to right. To enable this optimal path "
            "calculation, please install opt-einsum.")
    global enabled
    enabled = _enabled


def _set_strategy(_strategy):
    if not is_available():
        raise ValueError(
            f"opt_einsum is not available, so setting `strategy` to {_strategy} will not be "
            "meaningful. torch.einsum will bypass path calculation and simply contract from "
            "left to right. Please install opt_einsum or unset `strategy`.")
    if not enabled:
        raise ValueError(
            f"opt_einsum is not enabled, so setting a `strategy` to {_strategy} will not be "
            "meaningful. torch.einsum will bypass path calculation and simply contract from "
            "left to right. Please set `enabled` to `True` as well or unset `strategy`.")
    if _strategy not in ("auto", "greedy", "optimal"):
        raise ValueError("`strategy` must be one of the following: [auto, greedy, optimal] "
                         f"but is {_strategy}")
    global strategy
    strategy = _strategy


def set_flags(_enabled=None, _strategy=None):
    """Set `enabled` and `strategy` (None leaves one as it is), checked; returns the
    previous (enabled, strategy), strategy None where opt_einsum is not installed."""
    previous = (enabled, strategy if is_available() else None)
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return previous


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    """Set `enabled` and `strategy` for the block, then put back the previous values."""
    previous = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*previous)


def contraction_path(equation, shapes):
    """The order einsum contracts operands of these shapes in: opt_einsum's path (a list of
    tuples of positions in the shrinking operand list, results appended) where it is in use,
    else None (left to right)."""
    module = sys.modules[__name__]
    if len(shapes) <= 2 or not module.enabled or _opt_einsum is None:
        return None
    return list(_opt_einsum.contract_path(equation, *shapes, optimize=module.strategy,
                                          shapes=True)[0])


class OptEinsumModule(types.ModuleType):
    """The module's type, as PyTorch's `torch.backends.opt_einsum`."""


enabled = bool(is_available())
strategy = "auto" if is_available() else None

sys.modules[__name__].__class__ = OptEinsumModule
