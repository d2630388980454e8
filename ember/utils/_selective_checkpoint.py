"""Selective activation checkpointing, as torch.utils.checkpoint has it
(`create_selective_checkpoint_contexts`, `CheckpointPolicy`, `SAC_IGNORED_OPS`; re-exported
by ember.utils.checkpoint): a policy says, op call by op call, which outputs of a checkpointed
forward are kept, and the recomputation takes those instead of computing them again.

The graph tells the open region of each op call it records (ember.ops._graph.record, by the
node's class, named through ember.ops._aten's table) and ember.library's custom operators of
each of their calls. The forward asks the policy; the recomputation meets the same calls in
the same order (counted per operator, as PyTorch matches them) and takes the kept outputs:
the heavy ops (matrix products, convolutions: ember.ops._graph.kept_output) and custom
operators then skip computing them.
"""
import collections
import enum

from .._state import (selective_checkpoint as _sac_state,
                      selective_checkpoint_anywhere as _sac_anywhere)
from .._tensor import Tensor, make_tensor
from ..ops import _aten

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext", "SAC_IGNORED_OPS",
           "create_selective_checkpoint_contexts"]


class CheckpointPolicy(enum.Enum):
    """What selective activation checkpointing does with one op's output: keep it from the
    forward, or compute it again in backward (MUST_* overrides a PREFER_* elsewhere)."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """What a selective checkpointing policy function is told about an op call: its output
    (`op_output`), and `is_recompute`, always False since the policy is asked in the forward
    only (the recomputation matches kept outputs by call order), as in PyTorch."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


# ops never passed to the policy (what PyTorch's checkpointing itself calls a varying number
# of times: detach and the metadata queries)
SAC_IGNORED_OPS = set(_aten.IGNORED)

_RECOMPUTE = object()  # the policy said recompute
_CONSUMED = object()   # kept, and already handed to a recomputation

_SAC_MISMATCH = ("This can happen if the operations in the checkpointed region are "
                 "nondeterministic or depend on global state that changed between forward "
                 "and backward.")


def _policy_from_bool(value):
    return CheckpointPolicy.MUST_SAVE if value else CheckpointPolicy.PREFER_RECOMPUTE


class _SelectiveRegion:
    """Entering makes this the thread's selective checkpoint region, which `record` tells of
    each op call it records (`on_op`, by the node's class) and a custom operator of
    ember.library of each of its calls (`run_op`, by its overload); leaving puts back the
    region before."""

    def __init__(self, storage):
        self.storage = storage  # overload -> {call index -> kept outputs or a marker}
        self.counter = collections.defaultdict(int)
        self._outer = []

    def __enter__(self):
        self._outer.append(_sac_state.mode)
        _sac_state.mode = self
        _sac_anywhere.count += 1
        return self

    def __exit__(self, *exc):
        _sac_anywhere.count -= 1
        _sac_state.mode = self._outer.pop()
        return False

    def _next_index(self, op):
        index = self.counter[op]
        self.counter[op] = index + 1
        return index

    def on_op(self, node_class, inputs, outputs):
        op = _aten.overload_of_node(node_class)
        if op is not None and op not in SAC_IGNORED_OPS:
            self._on_call(op, inputs, {}, outputs)

    def peek(self, node_class):
        return None


def _as_tuple(result):
    if isinstance(result, Tensor):
        return (result,)
    return tuple(result) if isinstance(result, (tuple, list)) else ()


class _CachingRegion(_SelectiveRegion):
    """The forward: asks the policy about each op call and keeps what it says to save."""

    def __init__(self, policy_fn, storage):
        super().__init__(storage)
        self.policy_fn = policy_fn

    def run_op(self, op, args, kwargs, compute):
        result = compute(None)
        self._on_call(op, args, kwargs, _as_tuple(result), result)
        return result

    def _on_call(self, op, args, kwargs, outputs, result=None):
        index = self._next_index(op)
        if result is None:
            result = outputs[0] if len(outputs) == 1 else tuple(outputs)
        # ops the policy itself runs are not the region's (the recomputation asks no policy)
        _sac_state.mode = None
        try:
            policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False,
                                                               op_output=result),
                                    op, *args, **kwargs)
        finally:
            _sac_state.mode = self
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        if policy in (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE):
            # the array and version counter, not the tensor: it holds the forward's graph
            self.storage[op][index] = tuple(
                (o._array, o._device, o._vc, o._vc.value) if isinstance(o, Tensor) else None
                for o in outputs)
        else:
            self.storage[op][index] = _RECOMPUTE


class _ReplayingRegion(_SelectiveRegion):
    """The recomputation: each op call the forward kept gets the kept outputs."""

    def __init__(self, storage, allow_cache_entry_mutation):
        super().__init__(storage)
        self.allow_cache_entry_mutation = allow_cache_entry_mutation

    def __enter__(self):
        self.counter.clear()  # each backward meets the calls from the first again
        return super().__enter__()

    def _entry(self, op, index):
        calls = self.storage.get(op)
        if calls is None:
            raise RuntimeError(f"{op} encountered during backward but not found in storage. "
                               f"{_SAC_MISMATCH}")
        entry = calls.get(index)
        if entry is None:
            raise RuntimeError(f"{op} invocation index {index} encountered during backward but "
                               f"not found in storage. {_SAC_MISMATCH}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to "
                               "backward once on any region computed under selective "
                               "activation checkpoint.")
        return entry

    def _checked(self, kept):
        array, _, version_counter, version = kept
        if not self.allow_cache_entry_mutation and version_counter.value != version:
            raise RuntimeError("Tensor cached during selective activation checkpoint has been "
                               "mutated")
        return array

    def _take(self, op):
        """The kept outputs of this call of `op` (marked consumed), or None to recompute."""
        index = self._next_index(op)
        entry = self._entry(op, index)
        if entry is _RECOMPUTE:
            return None
        self.storage[op][index] = _CONSUMED
        return entry

    def peek(self, node_class):
        op = _aten.overload_of_node(node_class)
        if op is None or op in SAC_IGNORED_OPS:
            return None
        entry = self.storage.get(op, {}).get(self.counter[op])
        if entry is None or entry is _RECOMPUTE or entry is _CONSUMED or entry[0] is None:
            return None  # on_op raises for what is wrong
        return self._checked(entry[0])

    def _on_call(self, op, args, kwargs, outputs):
        entry = self._take(op)
        if entry is None:
            return
        for out, kept in zip(outputs, entry):
            if out is None or kept is None:
                continue
            array = self._checked(kept)
            if out._base is None:  # a view keeps aliasing its recomputed base
                out._array = array

    def run_op(self, op, args, kwargs, compute):
        entry = self._take(op)
        if entry is None:
            return compute(None)
        return compute([None if kept is None else make_tensor(self._checked(kept), kept[1])
                        for kept in entry])


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The (forward, recomputation) contexts of selective activation checkpointing, for
    `checkpoint(..., use_reentrant=False, context_fn=partial(this, policy))`.

    `policy_fn_or_list`: a function `policy(ctx, op, *args, **kwargs)` giving a
    CheckpointPolicy (or a bool: True is MUST_SAVE) for each op call of the forward, or a
    list of op overloads (`torch.ops.aten.mm.default`) to save, the rest recomputed.
    A kept output mutated in place before backward raises, unless
    `allow_cache_entry_mutation`."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, _aten.OpOverload):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload.For "
                         "example, if you have `torch.ops.aten.mm`, change it to "
                         "`torch.ops.aten.mm.default`."
                         if isinstance(op, _aten.OpOverloadPacket) else "")
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} "
                                 f"of type {_torch_type_repr(op)}. {extra}")
        ops_to_save = list(policy_fn_or_list)

        def policy_fn(ctx, op, *args, **kwargs):
            if op in ops_to_save:
                return CheckpointPolicy.MUST_SAVE
            return CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = collections.defaultdict(dict)
    return (_CachingRegion(policy_fn, storage),
            _ReplayingRegion(storage, allow_cache_entry_mutation))


def _torch_type_repr(value):
    kind = type(value)
    if kind is _aten.OpOverloadPacket:
        return "<class 'torch._ops.OpOverloadPacket'>"
    return repr(kind)


# public under ember.utils.checkpoint, where PyTorch has them (what pickling and printing name)
for _public in (CheckpointPolicy, SelectiveCheckpointContext,
                create_selective_checkpoint_contexts):
    _public.__module__ = "ember.utils.checkpoint"
