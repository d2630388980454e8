"""`einsum`: Einstein summation over the backend's einsum, ellipses spelled out as spare
letters and sizes of 1 broadcast; its backward is an einsum per operand. Three or more
operands are contracted a pair at a time, in the order `torch.backends.opt_einsum` says (the
opt_einsum package's path where it is installed and enabled, else left to right, as PyTorch).
"""
import numpy as np

from ..._parallel import matmul as _products
from ..._tensor import make_tensor, xp_of
from ..._state import autocast as _autocast, flop_counter as _flops
from .._autocast import lower
from .._graph import Node, record
from ._common import _needs


class EinsumBackward0(Node):
    """The gradient of each operand is an einsum of the output's gradient with the others;
    a subscript repeated in the operand (a diagonal) is tied by an identity matrix, and one
    summed only in that operand is spread by a vector of ones."""

    path = None          # the forward's contraction order (3+ operands), None left to right
    given_shapes = None  # the operands' shapes before broadcasting

    def backward(self, grad):
        counter = _flops.active
        if counter is None:
            return self._backward(grad)
        # counted as PyTorch's backward of its contraction: for each bmm of the forward, the
        # bmm of each side that needs a gradient (the einsums computing them are not counted)
        needs = [_needs(self, k) for k in range(len(self.subs))]
        for shapes in [] if len(needs) < 2 else _bmms(self.subs, self.out_sub, self.given_shapes, self.path, needs):
            counter("bmm", shapes[:2], None, shapes[2])
        _flops.active = None
        try:
            return self._backward(grad)
        finally:
            _flops.active = counter

    def _backward(self, grad):
        ops = self.saved_tensors
        grads = []
        for k, sub in enumerate(self.subs):
            if not _needs(self, k):
                grads.append(None)
                continue
            terms, operands = [self.out_sub], [grad]
            terms += [s for j, s in enumerate(self.subs) if j != k]
            operands += [o.conj() for j, o in enumerate(ops) if j != k]
            present = set("".join(terms))
            fresh = iter(c for c in _LETTERS if c not in self.used)
            target, seen = [], set()
            for c, size in zip(sub, ops[k]._array.shape):
                if c in seen:  # a diagonal: tie the repeat to the first occurrence
                    r = next(fresh)
                    terms.append(c + r)
                    operands.append(_const_like(xp_of(grad).eye(size, dtype=grad._array.dtype), grad))
                    target.append(r)
                    continue
                seen.add(c)
                if c not in present:
                    terms.append(c)
                    operands.append(_const_like(xp_of(grad).ones(size, dtype=grad._array.dtype), grad))
                    present.add(c)
                target.append(c)
            g = _einsum(",".join(terms) + "->" + "".join(target), operands, True)
            grads.append(g)
        return tuple(grads)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _const_like(arr, like):
    return make_tensor(arr, like._device)


def _parse_einsum(equation, operands):
    """Subscripts with ellipses spelled out as letters, and the output's subscript."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    inputs = lhs.split(",")
    if len(inputs) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(inputs) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    used = set(c for c in eq if c.isalpha())
    spare = [c for c in _LETTERS if c not in used]
    ell_dims = 0
    for k, (s, t) in enumerate(zip(inputs, operands)):
        letters = len(s.replace("...", ""))
        nd = t._array.ndim
        if "..." in s:
            ell_dims = max(ell_dims, nd - letters)
        elif letters != nd:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({letters}) "
                               f"does not match the number of dimensions ({nd}) for operand {k} "
                               "and no ellipsis was given")
    ell = "".join(spare[:ell_dims])
    subs = []
    for s, t in zip(inputs, operands):
        if "..." in s:
            n = t._array.ndim - len(s.replace("...", ""))
            s = s.replace("...", ell[ell_dims - n:] if n else "")
        subs.append(s)
    if arrow:
        out = rhs.replace("...", ell)
        for i, c in enumerate(out):
            if c in out[:i]:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                                   "the output")
            if not any(c in s for s in subs):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   "equation for any input operand")
    else:
        counts = {}
        for c in "".join(s for s in subs):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return subs, out, used | set(ell)


# (float16 too: the product helper multiplies it through float32's BLAS)
_MATMUL_DTYPES = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64,
                                                  np.complex64, np.complex128))


def _pair_as_matmul(xp, subs, out_sub, arrays):
    """A two-operand einsum as one batched product, as PyTorch computes it (its bmm): the
    letters of both operands and the output are the batch, those of both operands only are
    summed, the rest are each side's rows and columns. NumPy's own einsum runs such a
    contraction in its C loop, without BLAS (`bij,bjk->bik` at 64^3: 5x PyTorch). None (the
    einsum's loop instead) for a diagonal, a letter summed in one operand alone, a product
    too small for BLAS to pay, or dtypes BLAS lacks."""
    (sa, sb), (a, b) = subs, arrays
    if a.dtype not in _MATMUL_DTYPES or b.dtype != a.dtype or len(set(sa)) < len(sa) \
            or len(set(sb)) < len(sb) or any(c not in sb and c not in out_sub for c in sa) \
            or any(c not in sa and c not in out_sub for c in sb):
        return None
    batch = [c for c in out_sub if c in sa and c in sb]
    rows = [c for c in out_sub if c in sa and c not in sb]
    cols = [c for c in out_sub if c in sb and c not in sa]
    inner = [c for c in sa if c in sb and c not in out_sub]
    size = dict(zip(sa, a.shape)) | dict(zip(sb, b.shape))
    m, n, k = (int(np.prod([size[c] for c in cs])) for cs in (rows, cols, inner))
    if k < 2 or m * n < 16:
        return None
    a = a.transpose([sa.index(c) for c in batch + rows + inner]).reshape(-1, m, k)
    b = b.transpose([sb.index(c) for c in batch + inner + cols]).reshape(-1, k, n)
    full = _products(xp, a, b).reshape([size[c] for c in batch + rows + cols])
    order = batch + rows + cols
    return xp.ascontiguousarray(full.transpose([order.index(c) for c in out_sub]))


def _pair_bmm(sa, sb, shape_a, shape_b, kept):
    """The bmm PyTorch's einsum contracts two operands with: (letters of both kept, those of
    the left kept, the summed ones) by (both kept, summed, those of the right kept), as the
    shapes of its operands and result; a letter of size 1 on one side counts as the other
    side's alone, and one summed in a single operand is summed before. None where nothing
    is summed (PyTorch multiplies)."""
    size_a, size_b = dict(zip(sa, shape_a)), dict(zip(sb, shape_b))
    if not any(c in size_b and c not in kept for c in size_a):
        return None
    both = left = right = summed = 1
    for c in dict.fromkeys(sa + sb):
        a, b = size_a.get(c, 1), size_b.get(c, 1)
        if c not in kept:
            summed *= a if a != 1 and b != 1 else 1
        elif a != 1 and b != 1:
            both *= a
        elif a != 1:
            left *= a
        elif b != 1:
            right *= b
    return (both, left, summed), (both, summed, right), (both, left, right)


def _steps(n, path):
    """The contraction order: the path given, or left to right."""
    return path if path is not None else [(0, 1)] + [(0, n - 1 - k) for k in range(1, n - 1)]


def _bmms(subs, out_sub, shapes, path, needs=None):
    """The bmm shapes of an einsum's contraction (forward: each once; with `needs`, whether
    each operand needs a gradient: those of its backward, one per side of each bmm that
    needs one, an intermediate needing one when an operand under it does)."""
    items = [(s, tuple(shape), True if needs is None else need)
             for s, shape, need in zip(subs, shapes, needs or [True] * len(subs))]
    found = []
    for step in _steps(len(items), path):
        taken = [items[i] for i in step]
        for i in sorted(step, reverse=True):
            del items[i]
        needed = set(out_sub).union(*(it[0] for it in items))
        letters = "".join(dict.fromkeys(c for it in taken for c in it[0] if c in needed))
        if len(taken) == 2:
            bmm = _pair_bmm(taken[0][0], taken[1][0], taken[0][1], taken[1][1], needed)
            if bmm is not None:
                found += [bmm] * (1 if needs is None else taken[0][2] + taken[1][2])
        sizes = {}
        for s, shape, _ in taken:
            for c, n in zip(s, shape):
                sizes[c] = max(sizes.get(c, 1), n)
        items.append((letters, tuple(sizes[c] for c in letters), any(it[2] for it in taken)))
    return found


def _contract(xp, subs, out_sub, arrays, path):
    """Contract the operands a step at a time: `path` lists the positions each step takes
    from the operand list (its result joins the end), opt_einsum's form; None is left to
    right (the first two, then the next with the running result). A step keeps the letters
    that later operands or the output still need."""
    subs, arrays = list(subs), list(arrays)
    for step in _steps(len(arrays), path):
        taken_subs = [subs[i] for i in step]
        taken = [arrays[i] for i in step]
        for i in sorted(step, reverse=True):
            del subs[i], arrays[i]
        needed = set(out_sub).union(*subs)
        letters = "".join(dict.fromkeys(c for s in taken_subs for c in s if c in needed))
        res = _pair_as_matmul(xp, taken_subs, letters, taken) if len(taken) == 2 else None
        if res is None:
            res = xp.einsum(",".join(taken_subs) + "->" + letters, *taken)
        subs.append(letters)
        arrays.append(res)
    (sub,), (arr,) = subs, arrays
    return xp.asarray(arr if sub == out_sub else xp.einsum(sub + "->" + out_sub, arr))


def einsum(equation, *operands):
    """Einstein summation; sizes of 1 broadcast against a subscript's other sizes."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return _einsum(equation, operands, False)


def _einsum(equation, operands, any_order):
    """`any_order`: the einsums of a backward formula, whose order of contraction is no
    user's to choose: three or more operands go in the order the backend finds cheapest
    (left to right could make an outer product of two of them)."""
    if _autocast.active:
        operands = tuple(lower(*operands))
    subs, out_sub, used = _parse_einsum(equation, operands)
    dtype = operands[0]._array.dtype
    for t in operands[1:]:
        if t._array.dtype != dtype:
            raise RuntimeError(f"expected scalar type {operands[0].dtype._scalar_name} but found "
                               f"{t.dtype._scalar_name}")
    sizes = {}
    for k, (s, t) in enumerate(zip(subs, operands)):
        for c, n in zip(s, t._array.shape):
            seen = sizes.get(c)
            if seen is None or seen == 1:
                sizes[c] = n
            elif n != 1 and n != seen:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which "
                                   f"does not broadcast with previously seen size {seen}")
    given_shapes = [t._array.shape for t in operands]  # (before broadcasting: FLOPs count them)
    operands = tuple(t if all(n == sizes[c] for c, n in zip(s, t._array.shape))
                     else t.expand(*[sizes[c] for c in s]) for s, t in zip(subs, operands))
    xp = xp_of(operands[0])
    spec = ",".join(subs) + "->" + out_sub
    arrays = [t._array for t in operands]
    dtype = arrays[0].dtype
    if dtype.name == "bfloat16":  # NumPy's einsum has no bfloat16 loop
        arrays = [a.astype(np.float32) for a in arrays]
    path = None
    if len(arrays) > 2 and any_order:
        arr = xp.asarray(xp.einsum(spec, *arrays, optimize=True))
    elif len(arrays) > 2:
        from ...backends import opt_einsum as _opt_einsum  # (only einsums of 3+ need it)
        path = _opt_einsum.contraction_path(spec, [a.shape for a in arrays])
    if _flops.active is not None and len(arrays) > 1:  # told as PyTorch runs it: its bmms
        for shapes in _bmms(subs, out_sub, given_shapes, path):
            _flops.active("bmm", shapes[:2], None, shapes[2])
    if len(arrays) > 2:
        if not any_order:
            arr = _contract(xp, subs, out_sub, arrays, path)
    else:
        arr = _pair_as_matmul(xp, subs, out_sub, arrays) if len(arrays) == 2 else None
        if arr is None:
            arr = xp.asarray(xp.einsum(spec, *arrays))
    res = make_tensor(arr if arr.dtype == dtype else arr.astype(dtype), operands[0]._device)
    node = record(EinsumBackward0, operands, res)
    if node is not None:
        node.subs, node.out_sub, node.used = subs, out_sub, used
        node.path, node.given_shapes = path, given_shapes
        node.save_for_backward(*operands)
    return res
