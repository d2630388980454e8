"""`torch.backends.nnpack`: NNPACK's CPU convolution kernels. ember has none (its
convolutions are its own, on NumPy), so it is not available; the switch scripts set is
kept, on by default as in PyTorch."""
import contextlib

__all__ = ["is_available", "flags", "set_flags"]

_enabled = True


def is_available():
    """Whether ember has NNPACK: it does not."""
    return False


def set_flags(_enabled):
    """Set whether NNPACK is enabled globally; returns the previous setting, as a 1-tuple."""
    previous = (globals()["_enabled"],)
    globals()["_enabled"] = bool(_enabled)
    return previous


@contextlib.contextmanager
def flags(enabled=False):
    """Set whether NNPACK is enabled for the block."""
    previous = set_flags(enabled)
    try:
        yield
    finally:
        set_flags(previous[0])
