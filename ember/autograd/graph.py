"""`torch.autograd.graph`: the graph's nodes as users see them (`Node`: name,
next_functions, metadata, register_hook, register_prehook), the edge that leads from a
tensor into the graph (`GradientEdge`, `get_gradient_edge`), `increment_version`, which
marks a tensor as written in place by code autograd does not see, and the hooks on what
the graph saves for backward (`saved_tensors_hooks`, `save_on_cpu`,
`disable_saved_tensors_hooks`, `allow_mutation_on_saved_tensors`) and on gradients
arriving at several tensors (`register_multi_grad_hook`)."""
import contextlib
import weakref
from typing import NamedTuple

from .._state import (saved_tensor_hooks as _saved_hooks,
                      saved_tensor_hooks_anywhere as _saved_hooks_anywhere)
from .._tensor import Tensor
from ..device import backend_of, device as _device
from ..ops._graph import Node, edge
from ..ops.creation import empty as _empty
from ..utils.hooks import RemovableHandle
from . import engine as _engine
from ._mutation import allow_mutation_on_saved_tensors

__all__ = ["GradientEdge", "Node", "get_gradient_edge", "increment_version",
           "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "register_multi_grad_hook", "allow_mutation_on_saved_tensors",
           "region_activation_memory_budget", "set_override_stale_capture_stream",
           "set_warn_on_accumulate_grad_stream_mismatch"]


class GradientEdge(NamedTuple):
    """Where a tensor's gradient enters the graph: the node and which of its inputs."""
    node: Node
    output_nr: int
    ownership_token: object = None  # keeps what the node belongs to alive, where needed


def get_gradient_edge(tensor):
    """The GradientEdge through which `tensor`'s gradient flows (its grad_fn, or the
    accumulator of a leaf). A tensor that does not require grad has none."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, output_nr = edge(tensor)
    # a leaf's accumulator lives only while referenced: the edge owns the tensor with it
    return GradientEdge(node, output_nr, tensor if tensor.grad_fn is None else None)


def increment_version(tensor):
    """Bump the version counter of `tensor` (or of each tensor in an iterable): a backward
    that saved it before then raises, as after any in-place write."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._vc.value += 1


# ---- hooks on saved tensors -----------------------------------------------------------------
class saved_tensors_hooks:
    """Inside, every tensor an op saves for backward goes through `pack_hook(tensor)`, and
    what that returns is kept instead; backward gets the tensor back from
    `unpack_hook(packed)` each time it reads it. The innermost pair applies."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _saved_hooks.disabled is not None:
            raise RuntimeError(_saved_hooks.disabled)
        _saved_hooks.stack.append((self.pack_hook, self.unpack_hook))
        _saved_hooks_anywhere.count += 1

    def __exit__(self, *args):
        _saved_hooks.stack.pop()
        _saved_hooks_anywhere.count -= 1


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and go back to their device when backward reads
    them (activations of a GPU model cost host memory instead of device memory).
    `pin_memory`: the host copy is pinned where the device type allows it."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return tensor.device, tensor.cpu()
            pinnable = _available(device_type) and not tensor.is_sparse
            packed = _empty(tensor.size(), dtype=tensor.dtype, layout=tensor.layout,
                            pin_memory=pinnable)
            packed.copy_(tensor, non_blocking=pinnable)
            return tensor.device, packed

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


def _available(device_type):
    """Whether a device of this type is there to pin host memory for (PyTorch falls back to
    CUDA's module for a type it has no module of)."""
    try:
        return backend_of(_device(device_type)).is_available()
    except RuntimeError:
        return backend_of(_device("cuda")).is_available()


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside, an attempt to use saved tensors hooks raises RuntimeError(error_message);
    entering while hooks are in force raises it too."""
    previous = _saved_hooks.disabled
    try:
        _saved_hooks.disabled = error_message
        if _saved_hooks.stack:
            raise RuntimeError(error_message)
        yield
    finally:
        _saved_hooks.disabled = previous


# ---- a hook on the gradients of several tensors ------------------------------------------------
class _MultiHandle(RemovableHandle):
    """The handle of register_multi_grad_hook: removing it removes every tensor hook."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __getstate__(self):
        return self.handles

    def __setstate__(self, state):
        self.handles = state


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """mode="all": `fn(grads)` runs once per backward, after the gradients of all `tensors`
    that this backward reaches have been computed (None in the places of the others).
    mode="any": `fn(grad)` runs once per backward, with the first of their gradients."""
    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    import threading
    lock = threading.Lock()
    tensors = list(tensors)
    if mode == "all":
        nodes = [edge(t)[0] for t in tensors]
        pending = weakref.WeakKeyDictionary()  # per backward: [buffer, hooks to come]

        def hook_at(i):
            def inner(grad):
                task = _running_task()
                with lock:
                    state = pending.get(task)
                    if state is None:
                        due = sum(1 for n in nodes if n is not None and task.will_execute(n))
                        state = pending[task] = [[None] * len(tensors), due]
                    state[0][i] = grad
                    state[1] -= 1
                    done = state[1] == 0
                    if done:
                        del pending[task]
                if done:
                    fn(state[0])
            return inner

        handles = tuple(t.register_hook(hook_at(i)) for i, t in enumerate(tensors))
    else:
        ran = weakref.WeakSet()  # the backwards in which fn already ran

        def first(grad):
            task = _running_task()
            with lock:
                if task in ran:
                    return
                ran.add(task)
            fn(grad)

        handles = tuple(t.register_hook(first) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)


def _running_task():
    task = _engine.current_graph_task()
    if task is None:
        raise AssertionError("expected this hook to be called inside a backward call")
    return task


# ---- switches that have no effect here (what each governs is not in ember) ----------------------
def region_activation_memory_budget(budget):
    """The activation memory budget for a torch.compile region. ember runs every region
    eagerly (nothing is ever compiled), where PyTorch refuses it."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise TypeError("torch.autograd.graph.region_activation_memory_budget: expects a "
                        f"float, got {type(budget).__name__}")
    if not 0.0 <= budget <= 1.0:
        raise ValueError("torch.autograd.graph.region_activation_memory_budget: must be in "
                         f"[0, 1], got {budget}")
    raise RuntimeError("torch.autograd.graph.region_activation_memory_budget can only be used "
                       "inside a torch.compile region; it has no effect in eager mode.")


_stream_flags = {"override_stale_capture_stream": False,
                 "warn_on_accumulate_grad_stream_mismatch": True}


def set_override_stale_capture_stream(enabled):
    """Whether a stale non-capturing stream is replaced during CUDA graph capture. ember's
    backward runs on the caller's stream and captures no CUDA graphs: the setting is kept
    (process-wide, as PyTorch's) but no stream is ever stale."""
    _stream_flags["override_stale_capture_stream"] = bool(enabled)


def set_warn_on_accumulate_grad_stream_mismatch(enabled):
    """Whether to warn when a leaf's gradient arrives on another stream than the leaf's.
    ember's backward runs every node on the caller's stream, so none ever mismatches."""
    _stream_flags["warn_on_accumulate_grad_stream_mismatch"] = bool(enabled)
