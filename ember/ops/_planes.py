"""Per-channel operands of the CPU's elementwise passes, spread over one plane.

NumPy's binary ufuncs take their SIMD loops only when every operand walks memory with unit
stride. A per-channel value (1, C, 1, 1) broadcast over an (N, C, H, W) array has stride 0
along H and W, and such passes ran at up to half speed: against the same numbers laid out as
one (1, C, H, W) plane, broadcast over N alone, a float32 subtract, multiply and add (batch
norm's forward) took 460 -> 211 us on (32, 16, 28, 28), 167 -> 108 on (32, 32, 14, 14), 59 ->
47 on (32, 16, 8, 8), plane included (1 thread). The plane costs 1/N of a pass and two calls:
on (8, 16, 8, 8) it lost (13 -> 15 us), so small inputs and batches keep the broadcast.
"""
import numpy as np

MIN_ELEMENTS = 1 << 15
MIN_BATCH = 16


def spread(xp, v, x):
    """`v` (1, C, 1, ...: a value per channel, of x's rank) as the operand of a pass over `x`
    (N, C, *S): on the CPU, for a C-contiguous x of MIN_BATCH samples and MIN_ELEMENTS
    numbers or more, v's values over one (1, C, *S) plane; else `v` itself (a device's
    kernels take a broadcast operand at full speed)."""
    if xp is not np or x.size < MIN_ELEMENTS or x.shape[0] < MIN_BATCH or \
            v.ndim != x.ndim or v.shape[0] != 1 or not x.flags.c_contiguous or \
            v.size * x.shape[0] == x.size:  # (v is a whole plane already: S is all 1s)
        return v
    plane = np.empty((1,) + x.shape[1:], v.dtype)
    plane[...] = v
    return plane
