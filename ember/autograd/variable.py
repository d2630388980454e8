"""`Variable`: PyTorch's legacy wrapper, merged into Tensor since 0.4. `Variable(t)` returns
the tensor (with requires_grad set if asked) and every tensor is an instance of Variable."""
from .._tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if requires_grad:
            data.requires_grad_(True)
        return data


class _ExecutionEngine:
    """`Variable._execution_engine`: the autograd engine's handle, for code that queues work
    to run when the current backward ends (DDP, FSDP and checkpointing libraries do)."""

    @staticmethod
    def queue_callback(callback):
        from .engine import queue_callback
        queue_callback(callback)


Variable._execution_engine = _ExecutionEngine()
