"""Products with an added term, beta * input + alpha * product: `addmv`, `addr`, `baddbmm`,
`addbmm` (addmm is with mm in `matmul.py`), the in-place forms of all five, and the plain
outer product `outer` (`ger`).

beta == 0 ignores input entirely (its NaN and inf do not spread), as PyTorch does.
"""
from ..._parallel import matmul as _products
from ..._tensor import make_tensor, xp_of
from ..._state import autocast as _autocast, flop_counter as _flops
from .._autocast import lower
from .._graph import Node, record
from ._common import _check_same, _needs, _out, _same_dtype, _scaled, mv_dtype_error
from .matmul import _addmm_dtypes, _scales, addmm


def _add_term(prod, input, beta):
    """beta * input + prod on arrays; beta == 0 ignores input (its nan and inf do not spread)."""
    if beta == 0:
        return prod
    return prod + (input._array if beta == 1 else input._array * beta)


def _expand_bias(input, shape):
    from ..pointwise import broadcast_shapes_or_none
    if broadcast_shapes_or_none(input._array.shape, shape) != tuple(shape):
        input.expand(*shape)  # raises PyTorch's message for a term that does not fit


class AddmvBackward0(Node):
    def backward(self, grad):
        bias, mat, vec = self.saved_tensors
        g_bias = _scaled(grad, self.beta) if _needs(self, 0) else None
        g_mat = _scaled(grad.unsqueeze(1) * vec.conj(), self.alpha) if _needs(self, 1) else None
        g_vec = _scaled(mat.t().conj().mv(grad), self.alpha) if _needs(self, 2) else None
        return g_bias, g_mat, g_vec


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec)."""
    _check_same(mat, vec, "addmv", None)  # dtypes after the sizes, as PyTorch checks them
    if mat._array.ndim != 2 or vec._array.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._array.ndim}, "
                           f"{mat._array.ndim}, {vec._array.ndim}")
    n, m = mat._array.shape
    if m != vec._array.shape[0] or (input._array.ndim == 1 and input._array.shape[0] not in (1, n)):
        raise RuntimeError(f"size mismatch, got input ({input._array.shape[0] if input._array.ndim else 1}), "
                           f"mat ({n}x{m}), vec ({vec._array.shape[0]})")
    _expand_bias(input, (n,))
    message = mv_dtype_error(input, mat, vec)
    if message is not None:
        raise RuntimeError(message)
    prod = xp_of(mat).matmul(mat._array, vec._array)
    if alpha != 1:
        prod = prod * alpha
    res = make_tensor(_add_term(prod, input, beta), mat._device)
    return _finish(res, AddmvBackward0, (input, mat, vec), alpha, beta, out, "addmv")


def _finish(res, node_cls, inputs, alpha, beta, out, fname):
    node = record(node_cls, inputs, res)
    if node is not None:
        node.alpha, node.beta = alpha, beta
        node.save_for_backward(*inputs)
    return _out(res, out, fname) if out is not None else res


class AddrBackward0(Node):
    def backward(self, grad):
        bias, v1, v2 = self.saved_tensors
        g_bias = _scaled(grad, self.beta) if _needs(self, 0) else None
        g_v1 = _scaled(grad.mv(v2.conj()), self.alpha) if _needs(self, 1) else None
        g_v2 = _scaled(grad.t().mv(v1.conj()), self.alpha) if _needs(self, 2) else None
        return g_bias, g_v1, g_v2


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2), in the three operands' promoted dtype (a
    pointwise op in PyTorch, unlike the matrix products)."""
    for v, name in ((vec1, "vec1"), (vec2, "vec2")):
        if v._array.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v._array.ndim}-D")
    _check_same(vec1, vec2, "addr", None)
    shape = (vec1._array.shape[0], vec2._array.shape[0])
    _expand_bias(input, shape)
    from ...dtypes import promote_types
    dtype = promote_types(promote_types(input.dtype, vec1.dtype), vec2.dtype).np
    prod = vec1._array.astype(dtype, copy=False)[:, None] * vec2._array.astype(dtype, copy=False)
    if alpha != 1:
        prod = prod * alpha
    res = make_tensor(_add_term(prod, input, beta).astype(dtype, copy=False), vec1._device)
    return _finish(res, AddrBackward0, (input, vec1, vec2), alpha, beta, out, "addr")


def outer(input, vec2, *, out=None):
    """The outer product of two vectors (PyTorch records it as a broadcast multiply of the
    first reshaped to a column)."""
    for v, name in ((input, "self"), (vec2, "vec2")):
        if v._array.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v._array.ndim}-D")
    return _out(input.reshape(-1, 1) * vec2, out, "outer")


def ger(input, vec2, *, out=None):
    return outer(input, vec2, out=out)


def _baddbmm_dtypes(input, b1, b2):
    if input.dtype is b1.dtype is b2.dtype:
        return None
    return (f"Input dtypes must be the same, got: input {input.dtype._cpp_name}, batch1: "
            f"{b1.dtype._cpp_name}, batch2: {b2.dtype._cpp_name}")


def _check_batches(input, b1, b2, dtype_error):
    for t, name in ((b1, "batch1"), (b2, "batch2")):
        if t._array.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    _check_same(b1, b2, "baddbmm", lambda a, b: dtype_error(input, a, b))


class BaddbmmBackward0(Node):
    def backward(self, grad):
        bias, b1, b2 = self.saved_tensors
        g_bias = _scaled(grad, self.beta) if _needs(self, 0) else None
        g_b1 = _scaled(grad.bmm(b2.mT.conj()), self.alpha) if _needs(self, 1) else None
        g_b2 = _scaled(b1.mT.conj().bmm(grad), self.alpha) if _needs(self, 2) else None
        return g_bias, g_b1, g_b2


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (batch1 @ batch2), a batch of matrix products."""
    if _autocast.active and out is None:
        input, batch1, batch2 = lower(input, batch1, batch2)
    _check_batches(input, batch1, batch2, _baddbmm_dtypes)
    (b, n, k), (b2, k2, p) = batch1._array.shape, batch2._array.shape
    if b != b2 or k != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {k}] but got: [{b2}, {k2}].")
    _expand_bias(input, (b, n, p))
    prod = _products(xp_of(batch1), batch1._array, batch2._array)
    if alpha != 1:
        prod = prod * alpha
    res = make_tensor(_same_dtype(_add_term(prod, input, beta), batch1._array), batch1._device)
    if _flops.active is not None:
        _flops.active("baddbmm", (input, batch1, batch2), _scales(beta, alpha), res)
    return _finish(res, BaddbmmBackward0, (input, batch1, batch2), alpha, beta, out, "baddbmm")


class AddbmmBackward0(Node):
    def backward(self, grad):
        bias, b1, b2 = self.saved_tensors
        g = grad.unsqueeze(0).expand(b1._array.shape[0], *grad._array.shape)
        g_bias = _scaled(grad, self.beta) if _needs(self, 0) else None
        g_b1 = _scaled(g.bmm(b2.mT.conj()), self.alpha) if _needs(self, 1) else None
        g_b2 = _scaled(b1.mT.conj().bmm(g), self.alpha) if _needs(self, 2) else None
        return g_bias, g_b1, g_b2


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * sum_i(batch1[i] @ batch2[i])."""
    if _autocast.active and out is None:
        input, batch1, batch2 = lower(input, batch1, batch2)
    _check_batches(input, batch1, batch2, _addmm_dtypes)
    (b, n, k), (b2, k2, p) = batch1._array.shape, batch2._array.shape
    if b != b2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b} and {b2}")
    if k != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k} and {k2}x{p})")
    _expand_bias(input, (n, p))
    prod = _products(xp_of(batch1), batch1._array, batch2._array).sum(axis=0)
    if alpha != 1:
        prod = prod * alpha
    res = make_tensor(_same_dtype(_add_term(prod, input, beta), batch1._array), batch1._device)
    return _finish(res, AddbmmBackward0, (input, batch1, batch2), alpha, beta, out, "addbmm")


def _inplace_apply(fn, self, a, b, beta, alpha):
    from .._writes import inplace
    if fn is addr and self._array.ndim != 2:
        raise RuntimeError(f"2D tensor expected, got {self._array.ndim}D tensor for input")

    def compute(x):
        res = fn(x, a, b, beta=beta, alpha=alpha)
        if res._array.shape != x._array.shape and fn is not addmv:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(x._array.shape)} "
                               f"and output tensor size {list(res._array.shape)} should match")
        return res
    return inplace(self, compute, (a, b))


# one def each, so that the operands keep PyTorch's keyword names (t.addmm_(mat1=..., mat2=...))
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    return _inplace_apply(addmm, self, mat1, mat2, beta, alpha)


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    return _inplace_apply(addmv, input, mat, vec, beta, alpha)


def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    return _inplace_apply(addr, self, vec1, vec2, beta, alpha)


def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    return _inplace_apply(baddbmm, self, batch1, batch2, beta, alpha)


def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    return _inplace_apply(addbmm, self, batch1, batch2, beta, alpha)
