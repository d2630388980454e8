"""Matrix products: `matmul` for every rank combination (dispatched as PyTorch does to dot, mv,
mm, a batch folded into one mm, or a broadcast batched product), `mm`, `bmm`, `mv`, `dot`,
`vdot`, `inner`; `addmm` and `linear`, which records itself as addmm for a batch of vectors.

Backwards are products again, laid out as their operands are (see `_mat1_grad`).
"""
import math

import numpy as np

from ... import dtypes as _dt
from ..._parallel import add_product as _add_product, matmul as _products
from ..._sparse import SparseTensor
from ..._sparse_compressed import SparseCompressedTensor
from ..._tensor import make_tensor, Tensor, xp_of
from ..._state import (autocast as _autocast, flop_counter as _flops, forward_ad as _fw,
                       selective_checkpoint_anywhere as _sac_anywhere)
from .._autocast import lower
from .._graph import Node, first_order_arrays, kept_output, record
from .._dual import on_dual_node
from ..pointwise import broadcast_shapes_or_none
from ..shape import unsafe_view
from ._common import (_check_same, _out, _same_dtype, _scaled, bmm_dtype_error, mm_dtype_error,
                      mv_dtype_error)

_SPARSE = (SparseTensor, SparseCompressedTensor)  # the operands ops/sparse.py multiplies


def _product(a, b, node_cls):
    # a selective checkpoint's recomputation hands back the forward's product when it kept it
    kept = kept_output(node_cls, (a, b)) if _sac_anywhere.count else None
    computed = kept is None
    if computed:
        kept = _same_dtype(_products(xp_of(a), a._array, b._array), a._array)
    out = make_tensor(kept, a._device)
    if computed and _flops.active is not None:
        _count_product(node_cls, a, b, out)
    node = record(node_cls, (a, b), out)
    if node is not None:
        node.save_for_backward(a, b)
    return out


def _count_product(node_cls, a, b, result):
    """Tell the FLOP counter of a product as PyTorch's ATen runs it: mm, bmm, or for a
    broadcast batched product (`_batched`) the bmm of the operands expanded to one batch
    (its shapes). Vector products (mv, dot) are not counted, as in PyTorch."""
    if node_cls is MmBackward0:
        _flops.active("mm", (a, b), None, result)
    elif node_cls is BmmBackward0:
        _flops.active("bmm", (a, b), None, result)
    elif node_cls is MatmulBackward0:
        sa, sb = a._array.shape, b._array.shape
        batch = math.prod(np.broadcast_shapes(sa[:-2], sb[:-2]))
        _flops.active("bmm", ((batch,) + sa[-2:], (batch,) + sb[-2:]), None,
                      (batch, sa[-2], sb[-1]))


def _scales(beta, alpha):
    """addmm's and baddbmm's keyword arguments as the FLOP counter hears them: those given
    other than their defaults."""
    return {k: v for k, v in (("beta", beta), ("alpha", alpha)) if v != 1}


def _transposed(t):
    flags = t._array.flags
    return flags.f_contiguous and not flags.c_contiguous


# The gradients of mat1 @ mat2 come laid out as their matrix is, as PyTorch's
# mm_mat1/mat2_backward do: for a transposed matrix (Linear's weight.t()) the gradient is
# computed transposed, so the .t() backward hands contiguous memory to the weight instead of
# a transposed view that would cost a slow strided copy.
# A first-order backward computes the same products on the arrays (first_order_arrays: real
# dtypes, whose conj is the identity); a transposed result is still the .t() view.
def _mat1_grad(grad, mat1, mat2, mat1_transposed=None):
    """grad @ mat2^H, laid out as mat1 (column-major when mat1 is)."""
    transposed = _transposed(mat1) if mat1_transposed is None else mat1_transposed
    arrays = first_order_arrays(grad, mat2)
    if arrays is not None:
        g, m2 = arrays
        if transposed:
            return make_tensor(_products(xp_of(grad), m2, g.T), grad._device).t()
        return make_tensor(_products(xp_of(grad), g, m2.T), grad._device)
    if transposed:
        return mat2.conj().mm(grad.t()).t()
    return grad.mm(mat2.t().conj())


def _mat2_grad(grad, mat1, mat2, mat2_transposed=None):
    """mat1^H @ grad, laid out as mat2."""
    transposed = _transposed(mat2) if mat2_transposed is None else mat2_transposed
    arrays = first_order_arrays(grad, mat1)
    if arrays is not None:
        g, m1 = arrays
        if transposed:
            return make_tensor(_products(xp_of(grad), g.T, m1), grad._device).t()
        return make_tensor(_products(xp_of(grad), m1.T, g), grad._device)
    if transposed:
        return grad.t().mm(mat1.conj()).t()
    return mat1.t().conj().mm(grad)


class MmBackward0(Node):
    def backward(self, grad):
        a, b = self.saved_tensors
        ga = _mat1_grad(grad, a, b) if self._next[0][0] is not None else None
        gb = _mat2_grad(grad, a, b) if self._next[1][0] is not None else None
        return ga, gb


def mm(input, mat2, *, out=None):
    _refuse_barebones(input, mat2)
    if _autocast.active and out is None:
        input, mat2 = lower(input, mat2)
    if isinstance(mat2, Tensor) and (input._array.ndim != 2 or mat2._array.ndim != 2):
        raise RuntimeError("self must be a matrix" if input._array.ndim != 2 else
                           "mat2 must be a matrix")
    _check_same(input, mat2, "mm")
    _check_inner_sizes(input, mat2)
    return _out(_product(input, mat2, MmBackward0), out, "mm")


def _check_inner_sizes(input, mat2):
    if input._array.shape[1] != mat2._array.shape[0]:
        (m, k), (k2, n) = input._array.shape, mat2._array.shape
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})")


class BmmBackward0(Node):
    def backward(self, grad):
        a, b = self.saved_tensors
        ga = grad.bmm(b.transpose(1, 2).conj()) if self._next[0][0] is not None else None
        gb = a.transpose(1, 2).conj().bmm(grad) if self._next[1][0] is not None else None
        return ga, gb


def bmm(input, mat2, *, out=None):
    if _autocast.active and out is None:
        input, mat2 = lower(input, mat2)
    _check_same(input, mat2, "bmm", bmm_dtype_error)
    if input._array.ndim != 3 or mat2._array.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor" if input._array.ndim != 3
                           else "batch2 must be a 3D tensor")
    (b1, n, m), (b2, m2, p) = input._array.shape, mat2._array.shape
    if b1 != b2 or m != m2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b1}, {m}] but got: [{b2}, {m2}].")
    return _out(_product(input, mat2, BmmBackward0), out, "bmm")


class MvBackward0(Node):
    def backward(self, grad):
        a, v = self.saved_tensors
        ga = grad.unsqueeze(1) * v.conj() if self._next[0][0] is not None else None
        gv = a.t().conj().mv(grad) if self._next[1][0] is not None else None
        return ga, gv


def mv(input, vec, *, out=None):
    if isinstance(input, _SPARSE) and out is None:
        return _sparse_product(input, vec)
    _check_same(input, vec, "mv", lambda mat, v: mv_dtype_error(v, mat, v))
    if input._array.ndim != 2 or vec._array.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input._array.ndim}, "
                           f"{vec._array.ndim}")
    if input._array.shape[1] != vec._array.shape[0]:
        n, m = input._array.shape
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({n}x{m}), vec "
                           f"({vec._array.shape[0]})")
    return _out(_product(input, vec, MvBackward0), out, "mv")


class DotBackward0(Node):
    def backward(self, grad):
        a, b = self.saved_tensors
        ga = grad * b.conj() if self._next[0][0] is not None else None
        gb = grad * a.conj() if self._next[1][0] is not None else None
        return ga, gb


def dot(input, tensor, *, out=None):
    if input._array.ndim != 1 or tensor._array.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._array.ndim}D and "
                           f"{tensor._array.ndim}D tensors")
    if input._array.dtype is not tensor._array.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{input.dtype._scalar_name} and {tensor.dtype._scalar_name}")
    n, m = input._array.shape[0], tensor._array.shape[0]
    if n != m:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           "respectively")
    _check_same(input, tensor, "dot")
    return _out(_product(input, tensor, DotBackward0), out, "dot")


def vdot(input, other, *, out=None):
    return dot(input.conj(), other, out=out)


def inner(input, other, *, out=None):
    """Sum over the last dims: a result of shape input.shape[:-1] + other.shape[:-1]."""
    if input._array.ndim == 0 or other._array.ndim == 0:
        return _out(input * other, out, "inner")
    ka, kb = input._array.shape[-1], other._array.shape[-1]
    if ka != kb:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input._array.shape)} and {list(other._array.shape)}")
    res = mm(input.reshape(-1, ka), other.reshape(-1, kb).t())
    return _out(res.reshape(input._array.shape[:-1] + other._array.shape[:-1]), out, "inner")


class MatmulBackward0(Node):
    """Batched, broadcast matmul of tensors of rank >= 2 (1-D operands are lifted first)."""

    def backward(self, grad):
        a, b = self.saved_tensors
        # counting FLOPs, the products stay batched, as the backward of PyTorch's bmm (matmul
        # could fold one into an mm: the same values, counted under another operator)
        product = matmul if _flops.active is None else _batched
        ga = product(grad, b.mT.conj()) if self._next[0][0] is not None else None
        gb = product(a.mT.conj(), grad) if self._next[1][0] is not None else None
        return ga, gb


def _sparse_product(input, other):
    """A product with a sparse COO operand (ops/sparse.py computes it): a matrix, or with a
    vector (mv, matmul) a vector."""
    from .. import sparse
    if isinstance(input, _SPARSE) and isinstance(other, Tensor) and other.ndim == 1 \
            and not isinstance(other, _SPARSE):
        return sparse.mm(input, other.unsqueeze(1)).squeeze(1)
    return sparse.mm(input, other)


def _refuse_barebones(*tensors):
    for t in tensors:  # PyTorch's matrix products take float8_e4m3fn and e5m2 alone of these
        d = getattr(t, "dtype", None)
        if getattr(d, "_kind", "") and d not in (_dt.float8_e4m3fn, _dt.float8_e5m2):
            raise NotImplementedError(f'"addmm_impl_cpu_" not implemented for '
                                      f"'{d._scalar_name}'")


def matmul(input, other, *, out=None):
    _refuse_barebones(input, other)
    if (isinstance(input, _SPARSE) or isinstance(other, _SPARSE)) and out is None:
        return _sparse_product(input, other)
    if _autocast.active and out is None:
        input, other = lower(input, other)
    # dtypes are checked by the product it dispatches to, in that product's words
    _check_same(input, other, "matmul", None)
    na, nb = input._array.ndim, other._array.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    # PyTorch's dispatch (its error messages follow it): dot, mv, mm, a batch folded into
    # the rows of one mm/mv, or a broadcast batched product
    if na == 1 and nb == 1:
        res = dot(input, other)
    elif na == 2 and nb == 1:
        res = mv(input, other)
    elif na == 1 and nb == 2:
        res = mm(input.unsqueeze(0), other).squeeze_(0)  # in place, as PyTorch (SqueezeBackward4)
    elif na == 2 and nb == 2:  # mm, whose other checks matmul's have done
        message = mm_dtype_error(input, other)
        if message is not None:
            raise RuntimeError(message)
        _check_inner_sizes(input, other)
        res = _product(input, other, MmBackward0)
    else:
        res = _folded(input, other, out is not None)
        if res is None:
            res = _batched(input, other)
    return _out(res, out, "matmul")


def _folded(input, other, has_out):
    """PyTorch's `should_fold`: a >= 3-D operand against a matrix or vector is one mm/mv over
    the batch flattened into rows (the other way round through transposes), when that needs
    no copy or when the smaller operand requires grad. None where it does not fold."""
    na, nb = input._array.ndim, other._array.ndim
    larger_first = na >= nb
    t1 = input if larger_first else other.mT
    t2 = other if larger_first else (input.t() if na == 2 else input)
    if not (t1._array.ndim >= 3 and 1 <= t2._array.ndim <= 2):
        return None
    if not ((other if larger_first else input)._requires_grad and not has_out):
        if na == 2:
            return None
        shape, strides = t1._array.shape, t1.stride()
        if t1._array.size and not all(strides[i] == strides[i + 1] * shape[i + 1]
                                      for i in range(len(shape) - 2)):
            return None
    shape = t1._array.shape
    rows = t1.reshape(-1, shape[-1])
    if t2._array.ndim == 1:
        return unsafe_view(mv(rows, t2), shape[:-1])
    res = unsafe_view(mm(rows, t2), shape[:-1] + t2._array.shape[1:])
    return res if larger_first else res.mT.contiguous()


def _batched(input, other):
    a = input.unsqueeze(0) if input._array.ndim == 1 else input
    b = other.unsqueeze(-1) if other._array.ndim == 1 else other
    from ..pointwise import broadcast_error
    batch_a, batch_b = a._array.shape[:-2], b._array.shape[:-2]
    err = broadcast_error(batch_a, batch_b)
    if err is not None:
        raise err
    ka, kb = a._array.shape[-1], b._array.shape[-2]
    if ka != kb:
        import math
        n = math.prod(np.broadcast_shapes(batch_a, batch_b))
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {ka}] but got: [{n}, {kb}].")
    _check_same(a, b, "matmul", bmm_dtype_error)
    res = _product(a, b, MatmulBackward0)
    shape = res._array.shape
    if input._array.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if other._array.ndim == 1:
        shape = shape[:-1]
    # PyTorch ends its batched product with aten._unsafe_view to the output shape: printed
    # results show grad_fn=<UnsafeViewBackward0>, so ember's single node sits under one too
    return unsafe_view(res, shape)


class AddmmBackward0(Node):
    def backward(self, grad):
        a, b = self.saved_tensors
        g_bias = _scaled(grad, self.beta) if self._next[0][0] is not None else None
        g_a = (_scaled(_mat1_grad(grad, a, b, self.a_transposed), self.alpha)
               if self._next[1][0] is not None else None)
        g_b = (_scaled(_mat2_grad(grad, a, b, self.b_transposed), self.alpha)
               if self._next[2][0] is not None else None)
        return g_bias, g_a, g_b


def _addmm_dtypes(input, mat1, mat2):
    """addmm's dtype error (None when the three agree): the bias against mat2 first, as
    PyTorch checks them."""
    for name, t in (("self", input), ("mat1", mat1)):
        if isinstance(t, Tensor) and t.dtype is not mat2.dtype:
            return (f"{name} and mat2 must have the same dtype, but got {t.dtype._scalar_name} "
                    f"and {mat2.dtype._scalar_name}")
    return None


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat1 @ mat2), input broadcast to the product's shape."""
    if (isinstance(mat1, _SPARSE) or isinstance(mat2, _SPARSE)) and out is None:
        prod = _sparse_product(mat1, mat2)
        prod = prod if alpha == 1 else prod * alpha
        return prod if beta == 0 else prod + (input if beta == 1 else input * beta)
    if _autocast.active and out is None:
        input, mat1, mat2 = lower(input, mat1, mat2)
    _check_same(mat1, mat2, "addmm", lambda m1, m2: _addmm_dtypes(input, m1, m2))
    if mat1._array.ndim != 2 or mat2._array.ndim != 2:
        raise RuntimeError("mat1 must be a matrix, got {}-D tensor".format(mat1._array.ndim)
                           if mat1._array.ndim != 2 else
                           "mat2 must be a matrix, got {}-D tensor".format(mat2._array.ndim))
    (m, k), (k2, n) = mat1._array.shape, mat2._array.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
    bias_shape = input._array.shape
    if bias_shape != (n,) and bias_shape != (m, n) and \
            broadcast_shapes_or_none(bias_shape, (m, n)) != (m, n):
        input.expand(m, n)  # raises PyTorch's message for a bias that does not fit
    prod = kept_output(AddmmBackward0, (input, mat1, mat2)) if _sac_anywhere.count else None
    computed = prod is None
    a1, a2, bias = mat1._array, mat2._array, input._array
    if computed and alpha == 1 and beta == 1 and type(a1) is np.ndarray and \
            a1.dtype == a2.dtype == bias.dtype and a1.dtype.char in "fd":
        # the bias first and the product added into it, as PyTorch's addmm does: its bits
        # where MKL computes (a product and then an add round otherwise where MKL splits the
        # inner dim), and no pass to add the bias
        prod = np.empty((m, n), a1.dtype)
        prod[...] = bias
        _add_product(np, a1, a2, prod)
    elif computed:
        prod = _products(xp_of(mat1), mat1._array, mat2._array)
        if alpha != 1:
            prod *= alpha
        if beta == 1:  # into the fresh product: one pass, where a sum makes a new array
            xp_of(mat1).add(prod, input._array, out=prod)
        elif beta != 0:  # beta == 0 ignores input: its nan and inf do not propagate
            prod = prod + input._array * beta
        prod = _same_dtype(prod, mat1._array)
    res = make_tensor(prod, mat1._device)
    if computed and _flops.active is not None:
        _flops.active("addmm", (input, mat1, mat2), _scales(beta, alpha), res)
    node = record(AddmmBackward0, (input, mat1, mat2), res)
    if node is not None:
        node.alpha, node.beta = alpha, beta
        # as PyTorch, each matrix is kept only for the other's gradient (and its layout)
        node.a_transposed, node.b_transposed = _transposed(mat1), _transposed(mat2)
        every = _fw.level is not None and on_dual_node(node)  # forward AD wants both
        node.save_for_backward(mat1 if every or mat2._requires_grad else None,
                               mat2 if every or mat1._requires_grad else None)
    if out is not None:  # after recording: write_out refuses a result that requires grad
        return _out(res, out, "addmm")
    return res


def linear(input, weight, bias=None):
    """input @ weight.T + bias: addmm for a batch of vectors, as PyTorch records it."""
    if not isinstance(input, Tensor):
        raise TypeError(f"linear(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if _autocast.active:
        input, weight, bias = lower(input, weight, bias)
    if bias is None:
        return matmul(input, weight.t())
    shape = input._array.shape
    if len(shape) == 2:
        return addmm(bias, input, weight.t())
    if bias._array.ndim == 1 and input.is_contiguous():
        # PyTorch's _flatten_nd_linear: the batch as the rows of one addmm, viewed back
        rows = input.view(math.prod(shape[:-1]), shape[-1]) if shape else input
        res = addmm(bias, rows, weight.t())
        return res.view(shape[:-1] + res._array.shape[1:])
    return matmul(input, weight.t()).add_(bias)  # in place, as PyTorch: the product's dtype
