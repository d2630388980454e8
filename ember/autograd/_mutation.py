"""`torch.autograd.graph.allow_mutation_on_saved_tensors`: inside it, a tensor saved for
backward may be written in place afterwards; backward sees the value it had when saved.

Built on saved_tensors_hooks: packing records which saved tensors share each memory (their
version counter, shared by every view of a storage); just before an in-place write into
that memory (the ops tell `write_watchers`), each of them not copied yet is cloned, and
unpacking hands the clone back. Memory that is never written is never copied."""
import contextlib
import weakref

from ..ops import _graph, _writes

__all__ = ["allow_mutation_on_saved_tensors"]

_enabled = [False]


class _Handle:
    """What the pack hook returns for one saved tensor (of one version)."""


class _AllowMutationOnSavedContext:
    """The saved tensors of one allow_mutation_on_saved_tensors region."""

    def __init__(self):
        self.cloned = weakref.WeakKeyDictionary()      # handle -> the clone, once written
        self.original = weakref.WeakKeyDictionary()    # handle -> the tensor as saved
        self.tid_to_weakhandle = weakref.WeakValueDictionary()
        self.sid_to_tid = {}                            # memory -> the saved tensors of it

    def clear(self):
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


def _tid(t):
    """One saved tensor at one version: the same tensor saved twice unchanged shares a copy."""
    return id(t), t._vc.value


def _sid(t):
    return id(t._vc)  # the counter is shared by every view of the memory, and only by them


_UNPACK_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' "
                   "contextin which the graph was originally recorded.")


def _hooks(ctx):
    def pack(tensor):
        tid = _tid(tensor)
        ctx.sid_to_tid.setdefault(_sid(tensor), set()).add(tid)
        handle = ctx.tid_to_weakhandle.get(tid)
        if handle is None:
            handle = _Handle()
            ctx.tid_to_weakhandle[tid] = handle
            ctx.original[handle] = tensor
        return handle

    def unpack(handle):
        if not _enabled[0]:
            raise AssertionError(_UNPACK_OUTSIDE)
        if handle in ctx.cloned:
            return ctx.cloned[handle]
        if handle not in ctx.original:
            raise AssertionError(_UNPACK_OUTSIDE)
        return ctx.original[handle]

    def before_write(tensor):
        tids = ctx.sid_to_tid.pop(_sid(tensor), None)
        for tid in tids or ():
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None or handle in ctx.cloned:
                continue  # freed by its backward already, or copied already
            original = ctx.original.pop(handle)
            with _graph.grad_disabled():
                ctx.cloned[handle] = original.clone()

    return pack, unpack, before_write


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Tensors saved for backward inside may be modified in place afterwards; backward uses
    their values as saved. Yields the context object; contexts do not nest."""
    from .graph import saved_tensors_hooks
    ctx = _AllowMutationOnSavedContext()
    pack, unpack, before_write = _hooks(ctx)
    with saved_tensors_hooks(pack, unpack):
        _writes.write_watchers.append(before_write)
        try:
            if _enabled[0]:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _enabled[0] = True
            yield ctx
        finally:
            _writes.write_watchers.remove(before_write)
            ctx.clear()
            _enabled[0] = False
