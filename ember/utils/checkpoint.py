"""Activation checkpointing (`checkpoint`, `checkpoint_sequential`), as torch.utils.checkpoint:
the checkpointed function's intermediate results are not kept for backward; backward runs
the function again (with the forward's RNG state and autocast setting, so dropout draws the
same mask) and differentiates that.

`use_reentrant=True` (PyTorch's default when the argument is left out, with its warning)
runs the forward without a graph; in backward it calls `backward()` on the recomputation, so
the parameters the function uses get their `.grad` directly (only `backward()` reaches them).
`use_reentrant=False` records which parameters the forward used, so the checkpoint joins the
graph with them and works with `autograd.grad`, `backward(inputs=...)` and keyword arguments.
"""
import contextlib
import threading
import warnings

from .. import cpu as _cpu, cuda as _cuda, random as _random
from .._state import autocast as _autocast, grad as _grad_state
from .._tensor import Tensor
from ..device import backend_of
from ..autograd.engine import backward as _backward, grad as _grad
from ..autograd.function import Function
from ..ops._graph import AccumulateGrad
from ._pytree import flatten, unflatten
from ._selective_checkpoint import (CheckpointPolicy, SAC_IGNORED_OPS, SelectiveCheckpointContext,
                                    create_selective_checkpoint_contexts)

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError",
           "set_checkpoint_early_stop", "detach_variable", "noop_context_fn", "CheckpointPolicy",
           "SelectiveCheckpointContext", "DefaultDeviceType", "GraphExecGroup",
           "check_backward_validity", "get_device_states", "set_device_states",
           "set_checkpoint_debug_enabled", "create_selective_checkpoint_contexts",
           "SAC_IGNORED_OPS"]


class CheckpointError(RuntimeError):
    pass


class DefaultDeviceType:
    """The device type whose RNG states checkpoint saves and restores when the arguments
    name none: the current accelerator's, else the CPU's."""
    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = \
                "cuda" if _device_module("cuda").is_available() else "cpu"
        return DefaultDeviceType._default_device_type


class _GraphExecGroupState(threading.local):
    current = None


_graph_exec_group = _GraphExecGroupState()


class GraphExecGroup:
    """Marks backward calls that run over one graph as one group (their checkpoints are
    recomputed once for the group). Groups do not nest."""

    def __enter__(self):
        if _graph_exec_group.current is not None:
            raise RuntimeError("GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{_graph_exec_group.current}")
        _graph_exec_group.current = self
        return self

    def __exit__(self, *args):
        _graph_exec_group.current = None

    @classmethod
    def _get_current_group(cls):
        return _graph_exec_group.current


def check_backward_validity(inputs):
    """Warn when no tensor among `inputs` requires grad (a checkpoint then gives no grads)."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


def _device_module(device_type):
    """The module of a device type (PyTorch falls back to CUDA's for one it has none of)."""
    return _cpu if device_type == "cpu" else _cuda


def _device_type_of(args):
    types = {a.device.type for a in flatten(args)[0]
             if isinstance(a, Tensor) and a.device.type != "cpu"}
    if len(types) > 1:
        warnings.warn("Tensor arguments, excluding CPU tensors, are detected on at least two "
                      "types of devices. Device state will only be saved for devices of a "
                      "single device type, and the remaining devices will be ignored. "
                      "Consequently, if any checkpointed functions involve randomness, this "
                      f"may result in incorrect gradients. (Note that if CUDA devices are "
                      f"among the devices detected, it will be prioritized; otherwise, the "
                      f"first device encountered will be selected.)\nDevice types: "
                      f"{sorted(types)} first device type: {sorted(types)[0]}", stacklevel=3)
    if not types:
        return DefaultDeviceType.get_device_type()
    return "cuda" if "cuda" in types else sorted(types)[0]


def get_device_states(*args):
    """The ids of the (non-CPU) devices the tensors in `args` are on, and the RNG state of
    each, to restore before recomputing."""
    ids = []
    for a in flatten(args)[0]:
        if isinstance(a, Tensor) and a.device.type not in {"cpu", "meta"}:
            ids.append(a.get_device())
    module = _device_module(_device_type_of(args))
    return ids, [module.get_rng_state(i) for i in ids]


def set_device_states(devices, states, *, device_type=None):
    """Restore the RNG state of each device in `devices` from `states`."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    module = _device_module(device_type)
    for device, state in zip(devices, states):
        module.set_rng_state(state, device)


_checkpoint_debug_enabled = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Within it, `debug` of every non-reentrant checkpoint is `enabled` (None: as each call
    says). ember's recomputation raises no determinism error that debug traces would
    explain, so the setting is kept and read back, and changes no result."""
    global _checkpoint_debug_enabled
    previous = _checkpoint_debug_enabled
    try:
        _checkpoint_debug_enabled = enabled
        yield
    finally:
        _checkpoint_debug_enabled = previous


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


_early_stop = [True]


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Accepted for compatibility: ember's recomputation always runs the whole function."""
    previous = _early_stop[0]
    _early_stop[0] = enable
    try:
        yield
    finally:
        _early_stop[0] = previous


def detach_variable(inputs):
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


class _ForwardState:
    """What the recomputation must see as the forward did: RNG states and autocast."""

    def __init__(self, preserve_rng_state):
        self.rng = None
        if preserve_rng_state:
            # the CUDA generators where there is CUDA: `torch.cuda.manual_seed_all` makes
            # them on any machine, and one without CUDA has no state to read
            self.rng = [(g, g.get_state()) for g in
                        [_random.default_generator, *_random._cuda_generators.values()]
                        if g.device.type == "cpu" or backend_of(g.device).is_available()]
        self.autocast = dict(_autocast.thread.dtypes)

    @contextlib.contextmanager
    def replay(self):
        with _random.fork_rng(enabled=self.rng is not None):
            if self.rng is not None:
                for g, state in self.rng:
                    g.set_state(state)
            previous = _autocast.thread.dtypes
            _autocast.thread.dtypes = dict(self.autocast)
            if self.autocast:
                _autocast.active += 1
            prev_grad = _grad_state.enabled
            _grad_state.enabled = True
            try:
                yield
            finally:
                _grad_state.enabled = prev_grad
                _autocast.thread.dtypes = previous
                if self.autocast:
                    _autocast.active -= 1


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward without a graph, backward through `backward()` on the
    recomputed outputs."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")
        ctx.run_function = run_function
        ctx.state = _ForwardState(preserve_rng_state)
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with ctx.state.replay():
            detached = detach_variable(tuple(inputs))
            outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(t.grad if isinstance(t, Tensor) else None
                                    for t in detached)


class _NonReentrant(Function):
    """The checkpoint node of use_reentrant=False: its inputs are the function's tensor
    arguments and the parameters its forward reached; backward differentiates a
    recomputation with respect to both."""

    @staticmethod
    def forward(ctx, plan, *tensors):
        ctx.plan = plan
        return tuple(plan.outputs)

    @staticmethod
    def backward(ctx, *grads):
        plan = ctx.plan
        args = list(plan.args)
        graph = _grad_state.enabled  # create_graph: the recomputation stays connected
        for i, t in zip(plan.tensor_indices, plan.tensors):
            args[i] = (t.view_as(t) if graph and t.requires_grad
                       else t.detach().requires_grad_(t.requires_grad))
        targets = [args[i] for i in plan.tensor_indices] + list(plan.leaves)
        with plan.state.replay(), plan.recompute_context:
            outputs = plan.function(*args, **plan.kwargs)
        flat = flatten(outputs)[0]
        pairs = [(o, g) for o, g in zip(flat, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        wanted = [t for t in targets if t.requires_grad]
        got = iter(_grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                         retain_graph=True, create_graph=graph,
                         allow_unused=True) if pairs and wanted else ())
        result = [next(got) if t.requires_grad else None for t in targets]
        return (None,) + tuple(result)


class _Plan:
    pass


def _leaves_reached(outputs, stop):
    """Leaves requiring grad that the forward's graph reaches, other than `stop` (the
    arguments' stand-ins)."""
    seen, found, stack = set(), [], []
    for o in outputs:
        if isinstance(o, Tensor) and o.grad_fn is not None:
            stack.append(o.grad_fn)
        elif isinstance(o, Tensor) and o.requires_grad and id(o) not in stop:
            found.append(o)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if type(node) is AccumulateGrad:
            if id(node.variable) not in stop:
                found.append(node.variable)
            continue
        stack.extend(child for child, _ in node._next if child is not None)
    unique = {id(t): t for t in found}
    return list(unique.values())


def _checkpoint_without_reentrant(function, preserve, context_fn, args, kwargs):
    forward_context, plan_recompute = context_fn()
    plan = _Plan()
    plan.recompute_context = plan_recompute
    plan.function, plan.kwargs = function, kwargs
    plan.state = _ForwardState(preserve)
    plan.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    plan.tensors = [args[i] for i in plan.tensor_indices]
    plan.args = [None if isinstance(a, Tensor) else a for a in args]
    if not _grad_state.enabled:
        with forward_context:
            return function(*args, **kwargs)
    stand_ins = list(args)
    for i in plan.tensor_indices:
        stand_ins[i] = args[i].detach().requires_grad_(args[i].requires_grad)
    with forward_context:
        outputs = function(*stand_ins, **kwargs)
    flat, spec = flatten(outputs)
    stop = {id(stand_ins[i]) for i in plan.tensor_indices}
    plan.leaves = _leaves_reached(flat, stop)
    tensor_pos = [k for k, o in enumerate(flat) if isinstance(o, Tensor)]
    plan.outputs = [flat[k] for k in tensor_pos]
    if not plan.outputs:
        return outputs
    results = _NonReentrant.apply(plan, *plan.tensors, *plan.leaves)
    if not isinstance(results, tuple):
        results = (results,)
    for k, r in zip(tensor_pos, results):
        flat[k] = r
    plan.outputs = None  # the forward's graph goes with them
    return unflatten(flat, spec)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """`function(*args, **kwargs)` without keeping its intermediate results for backward."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. Starting in PyTorch 2.9, calling checkpoint without "
                      "use_reentrant will raise an exception. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
    return _checkpoint_without_reentrant(function, preserve, context_fn, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run `functions` (a Sequential or a list of modules) in `segments` checkpointed chunks;
    the last chunk runs normally."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter "
                      "should be passed explicitly. In version 2.9 we will raise an exception "
                      "if use_reentrant is not passed. use_reentrant=False is recommended, but "
                      "if you need to preserve the current default behavior, you can pass "
                      "use_reentrant=True. Refer to docs for more details on the differences "
                      "between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ..nn.modules.container import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
