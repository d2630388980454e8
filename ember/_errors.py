"""The exception classes PyTorch raises from its device layer, shared by every namespace that
names them (`torch.OutOfMemoryError` is `torch.cuda.OutOfMemoryError`)."""

__all__ = ["OutOfMemoryError", "AcceleratorError"]


class OutOfMemoryError(RuntimeError):
    """A device allocation failed for want of memory."""


class AcceleratorError(RuntimeError):
    """An accelerator (CUDA) call failed."""


OutOfMemoryError.__module__ = AcceleratorError.__module__ = "ember"
