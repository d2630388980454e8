"""The exception classes PyTorch raises from its core and device layer, shared by every namespace that
names them (`torch.OutOfMemoryError` is `torch.cuda.OutOfMemoryError`)."""

__all__ = ["OutOfMemoryError", "AcceleratorError", "FatalError"]


class OutOfMemoryError(RuntimeError):
    """A device allocation failed for want of memory."""


class AcceleratorError(RuntimeError):
    """An accelerator (CUDA) call failed."""


class FatalError(Exception):
    """An error the process cannot recover from (PyTorch raises it from its C++ core)."""


OutOfMemoryError.__module__ = AcceleratorError.__module__ = FatalError.__module__ = "ember"


def _assert(condition, message):
    """`torch._assert`: a Python `assert` that stays in a traced graph (fx records the call)."""
    assert condition, message
