"""The backward engine: `backward()` and `autograd.grad()`.

It walks the graph from the roots in dependency order: it first counts each node's
consumers, then runs a node once every gradient meant for it has arrived. Gradients an op
returns are reduced to its input's shape (broadcasting) and cast to its dtype here, in one
place, as PyTorch's engine does; the formulas need not care.
"""
import sys
import warnings

from .._state import (ThreadLocal, anomaly as _anomaly, autocast as _autocast,
                      forward_ad as _forward_ad, grad as _grad_state,
                      profiler as _profiler)
from .. import _memory_format as _mf
from .._sparse import SparseTensor
from .._tensor import _OWN_DTYPE, Tensor, _make
from ..device import backend_of, is_writeable
from ..ops._dual import resolve_pending
from ..ops._graph import AccumulateGrad, edge

__all__ = ["backward", "grad", "queue_callback"]


def _tensors(x):
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _root_grads(outputs, grad_outputs, create_graph):
    # PyTorch pairs outputs with gradients (extra gradients are dropped), makes or checks each
    # pair's gradient, then counts, then looks at which outputs require grad
    grads = _tensors(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    roots = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if out._array.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not (out.dtype.is_floating_point or out.dtype.is_complex):
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {out.dtype}")
            g = _make(Tensor, _ones_like(out._array, out._device), out._device)
        elif not isinstance(g, Tensor):
            from ..ops.creation import tensor as _tensor
            g = _tensor(g, dtype=out.dtype, device=out._device)
        elif g._array.shape != out._array.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{g.shape} and output[{i}] has a shape of {out.shape}.")
        if not create_graph:
            g = g.detach()
        roots.append((out, g))
    if len(roots) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(roots)} gradients")
    for i, (out, _) in enumerate(roots):
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
    return [(edge(out), g) for out, g in roots]


def _ones_like(arr, dev):
    """The implicit gradient of a scalar output `arr` on device `dev`: its backend's
    ones_like (one call, on a GPU one launch), or for dtypes outside NumPy's own (whose
    arrays a device may not make) a copy set to 1."""
    xp = backend_of(dev).xp
    if arr.dtype.type.__module__ == "numpy" and hasattr(xp, "ones_like"):
        return xp.ones_like(arr)
    out = arr.copy()  # same module, dtype and shape as the output, whatever its backend
    out[...] = 1
    return out


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    outputs = _tensors(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_grads(outputs, grad_tensors, create_graph)
    only = None
    if inputs is not None:
        inputs = _tensors(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        for t in inputs:
            if not t.requires_grad:  # its gradient would be retained, as retain_grad() refuses
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        only = [edge(t) for t in inputs]

        def accumulate(captured):
            for t, g in zip(inputs, captured):
                # a non-leaf that retains its grad already got it from its retain hook
                if g is not None and not (t._grad_fn is not None and t._retains_grad):
                    _accumulate_into(t, g, create_graph, set())
        _run(roots, retain_graph, create_graph, capture=only, accumulate=False,
             finish=accumulate)
        return
    _run(roots, retain_graph, create_graph, capture=None, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    outputs = _tensors(outputs)
    inputs = _tensors(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_grads(outputs, grad_outputs, create_graph)  # (the outputs checked first)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    captured = _run(roots, retain_graph, create_graph,
                    capture=[edge(t) for t in inputs], accumulate=False, leaf_hooks=True)
    result = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
            if materialize_grads:
                g = _make(Tensor, _zeros_like(t._array), t._device)
        result.append(g)
    return tuple(result)


def _zeros_like(arr):
    out = arr.copy()
    out[...] = 0
    return out


class _GraphTask:
    """One backward call while it runs: which nodes it will execute (for
    torch.autograd.graph.register_multi_grad_hook, which waits for the hooks that will fire)."""
    __slots__ = ("deps", "wanted", "needed", "is_grad", "callbacks", "__weakref__")

    def __init__(self, deps, wanted, needed, is_grad):
        self.deps, self.wanted, self.needed, self.is_grad = deps, wanted, needed, is_grad
        self.callbacks = []  # run, in order, once the whole graph has run

    def will_execute(self, node):
        if self.is_grad and type(node) is AccumulateGrad:
            raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                               "currently running autograd.grad(). This is currently not "
                               "supported.")
        if node not in self.deps:
            return False
        return self.needed is None or node in self.needed or node in self.wanted


class _RunningTasks(ThreadLocal):
    def __init__(self):
        self.stack = []


_running = _RunningTasks()


def current_graph_task():
    """The innermost backward running in this thread, or None."""
    return _running.stack[-1] if _running.stack else None


def queue_callback(callback, outermost=False):
    """Run `callback()` when the backward now running in this thread ends (after every
    gradient of it is accumulated): the innermost one, as PyTorch's engine does, or with
    `outermost` the one that started any reentrant backwards inside it."""
    if not _running.stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _running.stack[0 if outermost else -1].callbacks.append(callback)


def _run(roots, retain_graph, create_graph, capture, accumulate, leaf_hooks=False,
         finish=None):
    """Execute the graph below `roots` ((edge, grad) pairs). With `capture` (a list of edges)
    return the gradient arriving at each of them instead of accumulating into leaves;
    `leaf_hooks`: a captured leaf's tensor hooks run on its gradient first (autograd.grad);
    `finish(captured)` runs last, still inside this backward (backward(inputs=...))."""
    if _forward_ad.level is not None:
        resolve_pending()  # tangents are computed before backward frees what they need
    deps = _count_dependencies([e[0] for e, _ in roots if e[0] is not None])
    wanted = captured = needed = None
    if capture is not None:
        wanted, captured, needed = _capture_plan(capture, deps)
    _running.stack.append(_GraphTask(deps, wanted, needed, leaf_hooks))
    buffers = _root_buffers(roots, create_graph)
    ready = [n for n in buffers if deps.get(n, 0) == 0]
    handed_out = {id(g._array) for _, g in roots}
    previous_mode = _grad_state.enabled
    _grad_state.enabled = create_graph
    # backward formulas compute in their forward's dtypes: no autocast inside backward
    autocasting = _autocast.thread.dtypes
    if autocasting:
        _autocast.thread.dtypes = {}
    executed = []
    check_nan = _anomaly.enabled and _anomaly.check_nan
    profiling = _profiler.active
    sparse_seen = False
    try:
        while ready:
            node = ready.pop()
            grads = buffers.pop(node, None) or [None] * _num_outputs(node)
            if node._pre_hooks or node._retained or node._node_prehooks:
                grads = _call_pre_hooks(node, grads)
            if wanted is not None:
                if leaf_hooks and type(node) is AccumulateGrad and node.variable._hooks:
                    grads = [_leaf_hooked(node.variable, grads[0])]
                for nr, i in wanted.get(node, ()):
                    captured[i] = grads[nr]
                if node not in needed:
                    _release_children(node, deps, ready)
                    continue
            if type(node) is AccumulateGrad:
                if accumulate and grads[0] is not None:
                    leaf = node.variable
                    _accumulate_into(leaf, grads[0], create_graph, handed_out)
                continue
            if sparse_seen:
                grads = _densified(grads)
            missing = 0
            for g in grads:
                if g is None:
                    missing += 1
            g = None  # (a gradient outliving its node would be copied as a leaf's: _sole_view)
            if missing:
                if missing == len(grads):  # nothing reached this node: skip it
                    _release_children(node, deps, ready)
                    continue
                grads = _materialize(node, grads)
            if _anomaly.enabled:
                results = _reported_backward(node, grads, profiling, check_nan)
            else:
                results = _backward_of(node, grads, profiling)
            executed.append(node)
            if _send(node, results, buffers, deps, ready, create_graph):
                sparse_seen = True
        if finish is not None:
            _grad_state.enabled = previous_mode
            finish(captured)
        callbacks = _running.stack[-1].callbacks
        if callbacks:
            _grad_state.enabled = previous_mode
            while callbacks:  # (a callback may queue another)
                callbacks.pop(0)()
    finally:
        _running.stack.pop()
        _grad_state.enabled = previous_mode
        if autocasting:
            _autocast.thread.dtypes = autocasting
        if not retain_graph:
            for node in executed:
                node._release()
    return captured


def _capture_plan(capture, deps):
    """For `grad()`: which output slot of which node each captured edge reads
    ({node: [(nr, index)]}), the list the gradients are read into, and the nodes that must
    run to reach those edges (the others are skipped)."""
    captured = [None] * len(capture)
    wanted = {}
    for i, (node, nr) in enumerate(capture):
        if node is not None:
            wanted.setdefault(node, []).append((nr, i))
    return wanted, captured, _needed_nodes(deps, wanted)


def _root_buffers(roots, create_graph):
    """The roots' gradients gathered per node, one slot per output of the node."""
    buffers = {}
    for (node, nr), g in roots:
        if node is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * _num_outputs(node)
        buf[nr] = g if buf[nr] is None else _buffered(buf[nr], g, create_graph)
    return buffers


def _backward_of(node, grads, profiling):
    """The node's backward: one gradient per input edge, as a tuple, after its post hooks
    (which see the gradients as the inputs take them, reduced and cast)."""
    if profiling is None:
        results = node.backward(*grads)
    else:
        results = _profiled_backward(profiling, node, grads)
    if type(results) is not tuple:
        results = (results,) if not isinstance(results, list) else tuple(results)
    if len(results) != len(node._next):
        results = _check_count(node, results)
    if node._channels_last_input:  # (_memory_format.follow_channels_last)
        results = (_mf.in_channels_last(results[0]),) + results[1:]
    if node._hooks:
        results = _validated(node, results)
        for hook in list(node._hooks.values()):
            new = hook(results, tuple(grads))
            if new is not None:
                results = _hook_result(hook, new, results)
    return results


def _send(node, results, buffers, deps, ready, create_graph):
    """Hand each gradient a node returned to the node behind that input (reduced to the
    input's shape and cast to its dtype where the formula did not), and queue each node whose
    last awaited gradient this was. Returns True when one of them is sparse (an embedding's
    with sparse=True): from then on the engine densifies gradients before a node other than
    a leaf's accumulator uses them, since ember's backward formulas compute on dense tensors."""
    sparse = False
    edges = node._next
    meta = node._meta
    for i, g in enumerate(results):
        child, nr = edges[i]
        if child is None:
            continue
        if g is not None:
            shape, dtype = meta[i]
            arr = g._array
            if arr.shape != shape or arr.dtype is not dtype:
                g = _validate(node, i, g)
            if g.__class__ is SparseTensor:
                sparse = True
            buf = buffers.get(child)
            if buf is None:
                buf = buffers[child] = [None] * _num_outputs(child)
            buf[nr] = g if buf[nr] is None else _buffered(buf[nr], g, create_graph)
        d = deps[child] - 1
        deps[child] = d
        if d == 0:
            if ready and type(ready[-1]) is AccumulateGrad:
                _queue(ready, child)
            else:  # _queue's common case: nothing to keep on top of the stack
                ready.append(child)
    return sparse


def _queue(ready, node):
    """Put a node whose gradients are all in on the ready stack. A leaf's accumulator goes on
    top (it runs next), as PyTorch's engine runs AccumulateGrad first: a parameter's .grad and
    its post-accumulate hooks (DDP's bucket reductions) come as soon as its gradient exists,
    not after the rest of the graph."""
    if type(node) is AccumulateGrad or not ready or type(ready[-1]) is not AccumulateGrad:
        ready.append(node)
    else:
        i = len(ready)
        while i and type(ready[i - 1]) is AccumulateGrad:
            i -= 1
        ready.insert(i, node)


def _sum(old, new):
    """Two gradients for one input summed; a dense one plus a sparse one is dense."""
    if old.__class__ is SparseTensor and new.__class__ is not SparseTensor:
        return new + old
    return old + new


def _buffered(old, new, create_graph):
    """Gradients meeting at one input, summed in PyTorch's InputBuffer order: a sparse sum
    already there is added onto the newcomer (outside create_graph)."""
    if old.__class__ is SparseTensor and not create_graph:
        return new + old
    return _sum(old, new)


def _densified(grads):
    """Sparse gradients (an embedding's with sparse=True) as dense ones, for a node other
    than a leaf's accumulator: ember's backward formulas compute on dense tensors."""
    return [g.to_dense() if g.__class__ is SparseTensor else g for g in grads]


def _reported_backward(node, grads, profiling, check_nan):
    """Anomaly mode's backward: a node that fails (or returns NaN) is reported with where its
    forward ran, as PyTorch's warning does, before the error goes on."""
    try:
        results = _backward_of(node, grads, profiling)
        if check_nan:
            _check_nan(node, results)
        return results
    except Exception:
        trace = node.__dict__.get("_metadata", {}).get("traceback_")
        if trace:
            warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that "
                          "caused the error:\n" + "".join(trace), UserWarning, stacklevel=2)
        raise


def _check_nan(node, results):
    for i, g in enumerate(results):
        if g is not None and (g.dtype.is_floating_point or g.dtype.is_complex) and \
                bool(g.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")


def _check_count(node, results):
    n = len(node._next)
    if len(results) > n and all(r is None for r in results[n:]):
        return results[:n]
    raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                       f"(expected {n}, got {len(results)})")


def _count_dependencies(roots):
    deps = {}
    roots = list(dict.fromkeys(roots))  # several outputs of one node are one root
    seen = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for child, _ in node._next:
            if child is None:
                continue
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    for r in roots:
        deps.setdefault(r, 0)
    return deps


def _needed_nodes(deps, wanted):
    """Nodes from which a captured edge can be reached: only these run in `grad()`."""
    needed = set()
    order = []  # post-order over the graph
    visited = set()
    for start in deps:
        if start in visited:
            continue
        stack = [(start, iter(start._next))]
        visited.add(start)
        while stack:
            node, children = stack[-1]
            for child, _ in children:
                if child is not None and child not in visited:
                    visited.add(child)
                    stack.append((child, iter(child._next)))
                    break
            else:
                stack.pop()
                order.append(node)
    for node in order:
        if node in wanted or any(c in needed for c, _ in node._next if c is not None):
            needed.add(node)
    return needed


def _num_outputs(node):
    meta = node._out_meta
    return len(meta) if meta is not None else 1


def _release_children(node, deps, ready):
    for child, _ in node._next:
        if child is not None:
            deps[child] -= 1
            if deps[child] == 0:
                _queue(ready, child)


def _materialize(node, grads):
    """Outputs that received no gradient get zeros, as PyTorch does for built-in nodes."""
    if all(g is not None for g in grads) or not node._materialize_grads:
        return grads
    meta = node._out_meta
    from ..ops.creation import zeros
    return [g if g is not None else zeros(meta[i][0], dtype=meta[i][1], device=meta[i][2])
            for i, g in enumerate(grads)]


def _call_pre_hooks(node, grads):
    if node._pre_hooks:
        grads = list(grads)
        for nr, hooks in node._pre_hooks.items():
            for hook in list(hooks.values()):
                if grads[nr] is not None:
                    new = hook(grads[nr])
                    if new is not None:
                        grads[nr] = _check_hooked(hook, new, grads[nr])
    if node._retained:
        for nr, ref in node._retained.items():
            t = ref()
            g = grads[nr]
            if t is not None and g is not None:
                t._grad = g.detach() if t._grad is None else t._grad + g.detach()
    if node._node_prehooks:
        for hook in list(node._node_prehooks.values()):
            new = hook(tuple(grads))
            if new is not None:
                grads = list(_hook_result(hook, new, grads))
    return grads


def _hook_result(hook, new, old):
    """A node hook's replacement gradients, checked as PyTorch checks them."""
    if type(new) is not tuple:
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(old):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of "
                           f"values (got {len(new)}, but expected {len(old)})")
    for g, was in zip(new, old):
        if g is not None:
            _check_hooked(hook, g, was)
    return new


def _hook_name(hook):
    return getattr(hook, "__name__", "<unknown>")


def _check_hooked(hook, g, was):
    """A gradient a hook returned in place of `was`: a tensor of its shape, dtype and device."""
    if not isinstance(g, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(g).__name__}'")
    if was is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if g._array.shape != was._array.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
    if g.dtype is not was.dtype or g._device != was._device:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was "
                           f"{was.type()} got {g.type()})")
    return g


def _validated(node, results):
    """The gradients a post hook sees: as each input takes them (reduced, cast), None for an
    input that needs none (a built-in node computes no such gradient; a custom Function's
    backward hands on whatever it returned)."""
    meta, edges, builtin = node._meta, node._next, node._builtin
    out = []
    for i, g in enumerate(results):
        if g is not None and edges[i][0] is None:
            g = None if builtin else g
        elif g is not None and (g._array.shape != meta[i][0] or g._array.dtype is not meta[i][1]):
            g = _validate(node, i, g)
        out.append(g)
    return tuple(out)


def _validate(node, i, g):
    """PyTorch's validate_outputs: reduce a broadcast gradient, cast it to the input's dtype."""
    shape, dtype = node._meta[i]
    arr = g._array
    if arr.shape != shape:
        if not _expandable(shape, arr.shape):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} "
                               f"- got {list(arr.shape)} but expected shape compatible with "
                               f"{list(shape)}")
        lead = arr.ndim - len(shape)
        if lead and arr.shape[lead:] == tuple(shape) and not _grad_state.enabled:
            # only leading dims to sum (a bias): summed away, a fresh array of the input's
            # shape, not a kept-dims sum reshaped (a view, which accumulation would copy).
            # Under create_graph sum_to_size records its own graph.
            g = g.sum(tuple(range(lead)))
        else:
            g = g.sum_to_size(shape)
    if g._array.dtype != dtype:
        from ..dtypes import FROM_NUMPY
        if g.dtype.is_complex and not FROM_NUMPY[dtype].is_complex:
            g = g.real  # a real input's gradient is the real part, as PyTorch takes it
        g = g.to(FROM_NUMPY[dtype])
    return g


def _expandable(shape, target):
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != t and s != 1:
            return False
    return True


def _accumulate_into(leaf, g, create_graph, handed_out):
    wanted = leaf._grad_dtype  # set by `leaf.grad_dtype = ...` (a dtype, or None for any)
    if wanted is not _OWN_DTYPE and wanted is not None and g is not None and g.dtype is not wanted:
        g = g.to(wanted)
    _accumulate(leaf, g, create_graph, handed_out)
    post = leaf._post_accumulate_grad_hooks
    if post:
        # called with the leaf once its .grad holds the new sum; it may hand the leaf back
        # (`lambda p: p.add_(...)`), as PyTorch allows
        for hook in list(post.values()):
            result = hook(leaf)
            if result is not None and result is not leaf:
                if not isinstance(result, Tensor):
                    raise TypeError(f"expected Variable, but hook returned "
                                    f"'{type(result).__name__}'")
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def _leaf_hooked(leaf, g):
    """`g` through the tensor hooks registered on `leaf`."""
    if g is not None:
        for hook in list(leaf._hooks.values()):
            new = hook(g)
            if new is not None:
                g = _check_hooked(hook, new, g)
    return g


def _accumulate(leaf, g, create_graph, handed_out):
    hooked = bool(leaf._hooks)
    if hooked:
        g = _leaf_hooked(leaf, g)
    if g.__class__ is SparseTensor or leaf._grad.__class__ is SparseTensor:
        _accumulate_sparse(leaf, g, create_graph)
        return
    if leaf._grad is None:
        if create_graph:
            leaf._grad = g
            return
        arr = g._array
        # Own the memory: a gradient may be a view, a broadcast, or handed to two leaves, or
        # kept by a tensor hook (PyTorch copies one another tensor holds: the .grad must not
        # change what the hook kept when it accumulates)
        owned = not hooked and (arr.base is None or _sole_view(g)) and \
            id(arr) not in handed_out and is_writeable(arr)
        if not (arr.flags.c_contiguous and _mf.plainly_contiguous(leaf._array)):
            if owned and not _grad_state.layout_enforced:
                pass  # enforce_grad_layout_policy(False): a stealable gradient is kept as is
            else:
                arr = _obey_layout(leaf, g, owned)
        elif not owned:
            arr = arr.copy()
        handed_out.add(id(arr))
        leaf._grad = _make(Tensor, arr, leaf._device)
    elif create_graph or leaf._grad._requires_grad:
        leaf._grad = leaf._grad + g
    else:
        leaf._grad._array += g._array
        leaf._grad._vc.value += 1


def _refs(obj):
    """sys.getrefcount of `obj` as passed here (its holders, plus this call's own)."""
    return sys.getrefcount(obj)


class _Slots:
    __slots__ = ("a", "b")


def _held_refs(times):
    """What `_refs(x.attribute)` gives for an object that `times` slots hold: measured, not
    assumed, as a frame's references count differently from one Python to another."""
    holder, thing = _Slots(), object()
    holder.a = thing
    if times == 2:
        holder.b = thing
    del thing
    return _refs(holder.a)


_HELD_ONCE, _HELD_TWICE = _held_refs(1), _held_refs(2)


def _sole_view(g):
    """Whether gradient `g`'s array views the whole of an array that nothing else holds: a
    gradient a backward made as a view of its fresh product (a Linear weight's, through its
    .t() and the transpose's backward). Such a gradient is kept as the leaf's .grad, not
    copied, as PyTorch keeps a gradient no other tensor shares. The owner (NumPy's and CuPy's
    `base`, whichever view of a view) is held by `g`'s array alone, or by that and the root
    tensor of `g`'s view, which `g` alone holds."""
    arr = g._array  # (no local holds the root or the owner: they would count)
    if arr.base.base is not None or arr.base.size != arr.size or type(arr.base) is not type(arr):
        return False
    if g._base is None:
        return _refs(arr.base) == _HELD_ONCE
    return g._base._array is arr.base and _refs(g._base) == _HELD_ONCE and \
        _refs(arr.base) == _HELD_TWICE


def _obey_layout(leaf, g, owned):
    """PyTorch's layout contract for a leaf's first .grad: the strides of a dense leaf
    (channels_last, transposed ...), else contiguous; `g`'s own array when it keeps it."""
    shape, target = leaf._array.shape, leaf.stride()
    if not _mf.is_dense(shape, target):
        target = _mf.format_strides(shape, _mf.contiguous_format)
    if owned and all(a == b for a, b, n in zip(g.stride(), target, shape) if n > 1):
        return g._array
    return _mf.laid_out(backend_of(leaf._device).xp, g._array, target)


def _accumulate_sparse(leaf, g, create_graph):
    """PyTorch's AccumulateGrad with a sparse gradient on either side: the first sparse
    gradient is kept (its own copy); sparse += sparse merges the coordinate lists; dense +=
    sparse stays dense in place; a dense gradient onto a sparse .grad makes it dense."""
    old = leaf._grad
    if old is None:
        leaf._grad = g if create_graph or g.__class__ is not SparseTensor else g.detach().clone()
    elif create_graph or old.requires_grad:
        leaf._grad = _sum(old, g)
    elif old.__class__ is SparseTensor and g.__class__ is not SparseTensor:
        leaf._grad = g + old
    else:
        old.add_(g)


def _profiled_backward(recorder, node, grads):
    event = recorder.open(f"autograd::engine::evaluate_function: {type(node).__name__}", grads)
    try:
        return node.backward(*grads)
    finally:
        recorder.close(event)
