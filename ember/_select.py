"""`select(cond, a, b)`: NumPy's `where(cond, a, b)`, the same result, faster where it counts.

NumPy's `where` over a mask that is not sorted runs at about 5 ns an element once an array
passes 8K elements (NumPy 2.4 on this project's x86 machines, float32 and float64 alike):
1.65 ms for 256K float32 elements, where a sigmoid's whole arithmetic takes 0.3 ms. Picking
between the operands' bits instead, b ^ ((a ^ b) & -cond), is three integer passes that NumPy
runs SIMD-wide (0.4 ms there). It moves bits only, so every value comes out as `where` gives
it: NaNs with their payloads, signed zeros, infinities.

`select` takes that path for NumPy arrays of at least SELECT_MIN elements whose operands are
arrays or scalars of one 2-, 4- or 8-byte number type (after NumPy's own promotion, so a Python
number beside a float32 array counts as float32); anything else, and every other backend
(CuPy, meta), goes to `where` as before.
"""
import numpy as np

SELECT_MIN = 1 << 13
BLOCK = 1 << 15
_BITS = {2: np.int16, 4: np.int32, 8: np.int64}


def _bits(x, dtype, bits):
    """x as `dtype`'s bits: an array of that type, or a scalar converted as `where` converts
    it (a Python number rounded to the array's type); None for anything else."""
    if type(x) is np.ndarray:
        return x.view(bits) if x.dtype == dtype else None
    if isinstance(x, (int, float, np.generic)) and not isinstance(x, (bool, np.bool_)):
        return np.asarray(x, dtype).view(bits)
    return None


def _blend(cond, a, b):
    """where(cond, a, b) picked on the bits, or None where that path does not apply."""
    dtype = np.result_type(a, b)
    bits = _BITS.get(dtype.itemsize) if dtype.kind in "fiu" else None
    if bits is None:
        return None
    ab, bb = _bits(a, dtype, bits), _bits(b, dtype, bits)
    if ab is None or bb is None:
        return None
    if cond.size > BLOCK and cond.flags.c_contiguous and all(
            x.ndim == 0 or x.shape == cond.shape and x.flags.c_contiguous for x in (ab, bb)):
        return _blend_blocks(cond, ab, bb, bits).view(dtype)
    mask = cond.astype(bits)
    np.negative(mask, out=mask)  # all ones where cond holds
    picked = np.bitwise_xor(ab, bb)
    if picked.shape == np.broadcast_shapes(picked.shape, mask.shape):
        np.bitwise_and(picked, mask, out=picked)
    else:
        picked = np.bitwise_and(picked, mask)
    np.bitwise_xor(picked, bb, out=picked)
    return picked.view(dtype)


def _blend_blocks(cond, ab, bb, bits):
    """The blend block by block, each block's passes in the cache: over a whole array that
    spills to memory the five passes took twice `where`'s time when its mask is predictable
    (all true, say); in 32K-element blocks they take about as long as `where` does then, and
    a quarter of its time on a mixed mask (measured at 256K and 1M float32 elements)."""
    flat = cond.reshape(-1)
    a = ab.reshape(-1) if ab.ndim else ab
    b = bb.reshape(-1) if bb.ndim else bb
    out = np.empty(cond.shape, bits)
    picked = out.reshape(-1)
    mask = np.empty(BLOCK, bits)
    for start in range(0, flat.size, BLOCK):
        part = slice(start, start + BLOCK)
        m, p = mask[:len(flat[part])], picked[part]
        np.copyto(m, flat[part])
        np.negative(m, out=m)
        np.bitwise_xor(a[part] if a.ndim else a, b[part] if b.ndim else b, out=p)
        p &= m
        p ^= b[part] if b.ndim else b
    return out


_OPERANDS = (np.ndarray, int, float, np.generic)


def select(cond, a, b):
    """np.where(cond, a, b)."""
    if type(cond) is np.ndarray and cond.size >= SELECT_MIN and cond.dtype == np.bool_ \
            and isinstance(a, _OPERANDS) and isinstance(b, _OPERANDS):
        picked = _blend(cond, a, b)
        if picked is not None:
            return picked
    return np.where(cond, a, b)
