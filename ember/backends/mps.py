"""`torch.backends.mps`: Apple's Metal devices, which ember does not drive: every question
about an MPS device fails as in PyTorch built without MPS."""

__all__ = ["get_core_count", "get_name", "is_built", "is_available", "is_macos13_or_newer",
           "is_macos_or_newer"]


def is_available():
    return False


def is_built():
    return False


def _without_mps(function):
    return AttributeError(f"module 'torch._C' has no attribute '{function}'")


def get_core_count():
    """The GPU cores of the Metal device (not available: no MPS backend)."""
    raise _without_mps("_mps_get_core_count")


def get_name():
    """The Metal device's name (not available: no MPS backend)."""
    raise _without_mps("_mps_get_name")


def is_macos_or_newer(major, minor):
    raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")


def is_macos13_or_newer(minor=0):
    return is_macos_or_newer(13, minor)
