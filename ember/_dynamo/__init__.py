"""`torch._dynamo`, as far as programs use it around `torch.compile`: `reset`, `config`,
`disable`, `mark_dynamic`..., and the OptimizedModule that `compile(module)` returns. ember
compiles nothing (the eager backend's semantics): these keep a compiled program running as
it would eagerly."""
from .. import compiler as _compiler
from . import config
from .eval_frame import OptimizedModule

__all__ = ["reset", "config", "disable", "allow_in_graph", "disallow_in_graph", "graph_break",
           "mark_dynamic", "maybe_mark_dynamic", "mark_static", "mark_static_address",
           "is_compiling", "list_backends", "optimize", "assume_constant_result",
           "OptimizedModule"]

reset = _compiler.reset
disable = _compiler.disable
allow_in_graph = _compiler.allow_in_graph
is_compiling = _compiler.is_compiling
list_backends = _compiler.list_backends
assume_constant_result = _compiler.assume_constant_result


def disallow_in_graph(fn):
    """Keep `fn` out of compiled graphs: eager execution has none, so `fn` is unchanged."""
    return fn


def graph_break():
    """Split the compiled graph here: eager execution has no graph to split."""


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):
    """Declare dims of `t` dynamic for compilation: eager execution compiles nothing to
    specialize, so only the argument's type is checked (as PyTorch checks it)."""
    _check_index(index)


def maybe_mark_dynamic(t, index):
    _check_index(index)


def mark_static(t, index=None):
    if index is not None:
        _check_index(index)


def mark_static_address(t, guard=True):
    """Promise `t`'s storage stays put (for CUDA graphs): nothing is captured here."""


def _check_index(index):
    if not isinstance(index, (int, list, tuple)):
        raise AssertionError(f"Expected index to be int, list, or tuple, got {type(index)}")


def optimize(backend="inductor", *, nopython=False, guard_export_fn=None, guard_fail_fn=None,
             guard_filter_fn=None, disable=False, dynamic=None):
    """The older spelling of `torch.compile(backend=...)`: a decorator."""
    return lambda fn: fn if disable else _compiler.compile(fn, backend=backend)
