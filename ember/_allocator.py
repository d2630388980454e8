"""Keeps large freed blocks in the heap (glibc only), set once at import.

glibc hands a freed block of more than its mmap threshold back to the OS and trims the heap
top past its trim threshold; the next allocation of that size then faults every page in
afresh. A training step allocates and frees the same few-MB activations and gradients on
every iteration, so with glibc's defaults a small CNN's step spent about a third of its time
in page faults (13-15 ms -> 9-10 ms on 2 cores; an MLP's larger, longer-lived blocks did not
change; peak RSS did not change). Both thresholds are fixed at glibc's own dynamic maxima
(32 MB and twice that), which it reaches by itself only after freeing a block that large.
A process that sets MALLOC_MMAP_THRESHOLD_ or MALLOC_TRIM_THRESHOLD_ keeps its own choice.
"""
import ctypes
import os
import platform

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20


def _keep_freed_blocks():
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


tuned = _keep_freed_blocks()
