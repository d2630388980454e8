"""Matrix products: `matmul` for every rank combination, `mm`, `bmm`, `mv`, `dot`, the
products with an added term (addmm, addmv, addr, baddbmm, addbmm), outer, einsum,
tensordot, kron, cross, multi_dot.

Forwards call the backend's BLAS-backed matmul on arrays; backwards are matmuls again,
so second derivatives come for free. A gradient over broadcast batch dimensions is summed
back to the input's shape by the engine.
"""
import numpy as np

from .._tensor import Tensor, make_tensor
from .._state import autocast as _autocast
from ._autocast import lower
from ._graph import Node, record
from .pointwise import xp_of

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "inner", "vdot", "addmm", "outer", "ger",
           "addmv", "addmv_", "addr", "baddbmm", "addbmm", "einsum", "tensordot", "kron", "cross",
           "chain_matmul"]
METHODS = ["matmul", "mm", "bmm", "mv", "dot", "inner", "vdot", "addmm", "addmm_", "outer", "ger",
           "addmv", "addmv_", "addr", "addr_", "baddbmm", "baddbmm_", "addbmm", "addbmm_", "kron",
           "cross"]
FUNCTIONAL = ["linear"]


def _type_name(t):
    from ._graph import _type_name as name
    return name(t.dtype)


def _check_same(a, b, what):
    if not isinstance(b, Tensor):
        raise TypeError(f"{what}(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(b).__name__}")
    if a._array.dtype is not b._array.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_c_name(a)} != {_c_name(b)}")
    if a._device != b._device:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                           f"devices, {a._device} and {b._device}!")


def _c_name(t):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16"}.get(t.dtype.name, t.dtype.name)


def _same_dtype(arr, like):
    """NumPy's matmul of ml_dtypes' bfloat16 answers in float32: round back, as PyTorch's
    bfloat16 products (accumulated in float32) do."""
    return arr if arr.dtype == like.dtype else arr.astype(like.dtype)


def _product(a, b, node_cls):
    out = make_tensor(_same_dtype(xp_of(a).matmul(a._array, b._array), a._array), a._device)
    node = record(node_cls, (a, b), out)
    if node is not None:
        node.save_for_backward(a, b)
    return out


def _transposed(t):
    flags = t._array.flags
    return flags.f_contiguous and not flags.c_contiguous


# The gradients of mat1 @ mat2 come laid out as their matrix is, as PyTorch's
# mm_mat1/mat2_backward do: for a transposed matrix (Linear's weight.t()) the gradient is
# computed transposed, so the .t() backward hands contiguous memory to the weight instead of
# a transposed view that would cost a slow strided copy.
def _mat1_grad(grad, mat1, mat2):
    """grad @ mat2^H."""
    if _transposed(mat1):
        return mat2.conj().mm(grad.t()).t()
    return grad.mm(mat2.t().conj())


def _mat2_grad(grad, mat1, mat2):
    """mat1^H @ grad."""
    if _transposed(mat2):
        return grad.t().mm(mat1.conj()).t()
    return mat1.t().conj().mm(grad)


class MmBackward0(Node):
    def backward(self, grad):
        a, b = self.saved_tensors
        ga = _mat1_grad(grad, a, b) if self._next[0][0] is not None else None
        gb = _mat2_grad(grad, a, b) if self._next[1][0] is not None else None
        return ga, gb


def mm(input, mat2, *, out=None):
    if _autocast.active and out is None:
        input, mat2 = lower(input, mat2)
    if isinstance(mat2, Tensor) and (input._array.ndim != 2 or mat2._array.ndim != 2):
        raise RuntimeError("self must be a matrix" if input._array.ndim != 2 else
                           "mat2 must be a matrix")
    _check_same(input, mat2, "mm")
    if input._array.shape[1] != mat2._array.shape[0]:
        (m, k), (k2, n) = input._array.shape, mat2._array.shape
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
    return _out(_product(input, mat2, MmBackward0), out, "mm")


class BmmBackward0(Node):
    def backward(self, grad):
        a, b = self.saved_tensors
        ga = grad.bmm(b.transpose(1, 2).conj()) if self._next[0][0] is not None else None
        gb = a.transpose(1, 2).conj().bmm(grad) if self._next[1][0] is not None else None
        return ga, gb


def bmm(input, mat2, *, out=None):
    if _autocast.active and out is None:
        input, mat2 = lower(input, mat2)
    _check_same(input, mat2, "bmm")
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
    _check_same(input, vec, "mv")
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
                           f"{_type_name(input)} and {_type_name(tensor)}")
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
        ga = grad.matmul(b.mT.conj()) if self._next[0][0] is not None else None
        gb = a.mT.conj().matmul(grad) if self._next[1][0] is not None else None
        return ga, gb


def matmul(input, other, *, out=None):
    if _autocast.active and out is None:
        input, other = lower(input, other)
    _check_same(input, other, "matmul")
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
        res = mm(input.unsqueeze(0), other).squeeze(0)
    elif na == 2 and nb == 2:
        res = mm(input, other)
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
        return mv(rows, t2).reshape(shape[:-1])
    res = mm(rows, t2).reshape(shape[:-1] + t2._array.shape[1:])
    return res if larger_first else res.mT.contiguous()


def _batched(input, other):
    a = input.unsqueeze(0) if input._array.ndim == 1 else input
    b = other.unsqueeze(-1) if other._array.ndim == 1 else other
    from .pointwise import broadcast_error
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
    res = _product(a, b, MatmulBackward0)
    if input._array.ndim == 1:
        res = res.squeeze(-2)
    if other._array.ndim == 1:
        res = res.squeeze(-1)
    return res


def _out(res, out, fname):
    if out is None:
        return res
    from ._graph import write_out
    return write_out(out, res, fname)


class AddmmBackward0(Node):
    def backward(self, grad):
        bias, a, b = self.saved_tensors
        g_bias = _scaled(grad, self.beta) if self._next[0][0] is not None else None
        g_a = _scaled(_mat1_grad(grad, a, b), self.alpha) if self._next[1][0] is not None else None
        g_b = _scaled(_mat2_grad(grad, a, b), self.alpha) if self._next[2][0] is not None else None
        return g_bias, g_a, g_b


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat1 @ mat2), input broadcast to the product's shape."""
    if _autocast.active and out is None:
        input, mat1, mat2 = lower(input, mat1, mat2)
    _check_same(mat1, mat2, "addmm")
    if mat1._array.ndim != 2 or mat2._array.ndim != 2:
        raise RuntimeError("mat1 must be a matrix, got {}-D tensor".format(mat1._array.ndim)
                           if mat1._array.ndim != 2 else
                           "mat2 must be a matrix, got {}-D tensor".format(mat2._array.ndim))
    (m, k), (k2, n) = mat1._array.shape, mat2._array.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
    from .pointwise import broadcast_shapes_or_none
    if broadcast_shapes_or_none(input._array.shape, (m, n)) != (m, n):
        input.expand(m, n)  # raises PyTorch's message for a bias that does not fit
    xp = xp_of(mat1)
    prod = xp.matmul(mat1._array, mat2._array)
    if alpha != 1:
        prod *= alpha
    if beta != 0:  # beta == 0 ignores input: its nan and inf do not propagate
        prod = prod + (input._array if beta == 1 else input._array * beta)
    res = make_tensor(_same_dtype(prod, mat1._array), mat1._device)
    node = record(AddmmBackward0, (input, mat1, mat2), res)
    if node is not None:
        node.alpha, node.beta = alpha, beta
        node.save_for_backward(input, mat1, mat2)
    if out is not None:  # after recording: write_out refuses a result that requires grad
        return _out(res, out, "addmm")
    return res


def linear(input, weight, bias=None):
    """input @ weight.T + bias: addmm for a batch of vectors, as PyTorch records it."""
    if _autocast.active:
        input, weight, bias = lower(input, weight, bias)
    if input._array.ndim == 2 and bias is not None:
        return addmm(bias, input, weight.t())
    out = matmul(input, weight.t())
    return out if bias is None else out + bias


# ---- products with an added term, outer products, contractions -----------------------------
def _scaled(t, s):
    return t if s == 1 else t * s


def _add_term(prod, input, beta):
    """beta * input + prod on arrays; beta == 0 ignores input (its nan and inf do not spread)."""
    if beta == 0:
        return prod
    return prod + (input._array if beta == 1 else input._array * beta)


def _expand_bias(input, shape):
    from .pointwise import broadcast_shapes_or_none
    if broadcast_shapes_or_none(input._array.shape, shape) != tuple(shape):
        input.expand(*shape)  # raises PyTorch's message for a term that does not fit


def _needs(node, i):
    return node._next[i][0] is not None


class AddmvBackward0(Node):
    def backward(self, grad):
        bias, mat, vec = self.saved_tensors
        g_bias = _scaled(grad, self.beta) if _needs(self, 0) else None
        g_mat = _scaled(grad.unsqueeze(1) * vec.conj(), self.alpha) if _needs(self, 1) else None
        g_vec = _scaled(mat.t().conj().mv(grad), self.alpha) if _needs(self, 2) else None
        return g_bias, g_mat, g_vec


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec)."""
    _check_same(mat, vec, "addmv")
    if mat._array.ndim != 2 or vec._array.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._array.ndim}, "
                           f"{mat._array.ndim}, {vec._array.ndim}")
    n, m = mat._array.shape
    if m != vec._array.shape[0] or (input._array.ndim == 1 and input._array.shape[0] not in (1, n)):
        raise RuntimeError(f"size mismatch, got input ({input._array.shape[0] if input._array.ndim else 1}), "
                           f"mat ({n}x{m}), vec ({vec._array.shape[0]})")
    _expand_bias(input, (n,))
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
    """beta * input + alpha * outer(vec1, vec2)."""
    for v, name in ((vec1, "vec1"), (vec2, "vec2")):
        if v._array.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v._array.ndim}-D")
    _check_same(vec1, vec2, "addr")
    shape = (vec1._array.shape[0], vec2._array.shape[0])
    _expand_bias(input, shape)
    prod = vec1._array[:, None] * vec2._array[None, :]
    if alpha != 1:
        prod = prod * alpha
    res = make_tensor(_add_term(prod, input, beta), vec1._device)
    return _finish(res, AddrBackward0, (input, vec1, vec2), alpha, beta, out, "addr")


def outer(input, vec2, *, out=None):
    """The outer product of two vectors (PyTorch records it as a broadcast multiply)."""
    for v, name in ((input, "self"), (vec2, "vec2")):
        if v._array.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v._array.ndim}-D")
    return _out(input.unsqueeze(1) * vec2, out, "outer")


def ger(input, vec2, *, out=None):
    return outer(input, vec2, out=out)


def _check_batches(b1, b2):
    for t, name in ((b1, "batch1"), (b2, "batch2")):
        if t._array.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    _check_same(b1, b2, "baddbmm")


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
    _check_batches(batch1, batch2)
    (b, n, k), (b2, k2, p) = batch1._array.shape, batch2._array.shape
    if b != b2 or k != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {k}] but got: [{b2}, {k2}].")
    _expand_bias(input, (b, n, p))
    prod = xp_of(batch1).matmul(batch1._array, batch2._array)
    if alpha != 1:
        prod = prod * alpha
    res = make_tensor(_same_dtype(_add_term(prod, input, beta), batch1._array), batch1._device)
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
    _check_batches(batch1, batch2)
    (b, n, k), (b2, k2, p) = batch1._array.shape, batch2._array.shape
    if b != b2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b} and {b2}")
    if k != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k} and {k2}x{p})")
    _expand_bias(input, (n, p))
    prod = xp_of(batch1).matmul(batch1._array, batch2._array).sum(axis=0)
    if alpha != 1:
        prod = prod * alpha
    res = make_tensor(_same_dtype(_add_term(prod, input, beta), batch1._array), batch1._device)
    return _finish(res, AddbmmBackward0, (input, batch1, batch2), alpha, beta, out, "addbmm")


def _inplace_form(fn):
    def method(self, a, b, *, beta=1, alpha=1):
        from ._graph import inplace
        if fn is addr and self._array.ndim != 2:
            raise RuntimeError(f"2D tensor expected, got {self._array.ndim}D tensor for input")

        def compute(x):
            res = fn(x, a, b, beta=beta, alpha=alpha)
            if res._array.shape != x._array.shape and fn is not addmv:
                raise RuntimeError(f"Bad in-place call: input tensor size {list(x._array.shape)} "
                                   f"and output tensor size {list(res._array.shape)} should match")
            return res
        return inplace(self, compute, (a, b))
    method.__name__ = fn.__name__ + "_"
    return method


addmm_ = _inplace_form(addmm)
addmv_ = _inplace_form(addmv)
addr_ = _inplace_form(addr)
baddbmm_ = _inplace_form(baddbmm)
addbmm_ = _inplace_form(addbmm)


# ---- einsum ------------------------------------------------------------------------------------
class EinsumBackward0(Node):
    """The gradient of each operand is an einsum of the output's gradient with the others;
    a subscript repeated in the operand (a diagonal) is tied by an identity matrix, and one
    summed only in that operand is spread by a vector of ones."""

    def backward(self, grad):
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
            g = einsum(",".join(terms) + "->" + "".join(target), *operands)
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


def einsum(equation, *operands):
    """Einstein summation; sizes of 1 broadcast against a subscript's other sizes."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if _autocast.active:
        operands = tuple(lower(*operands))
    subs, out_sub, used = _parse_einsum(equation, operands)
    dtype = operands[0]._array.dtype
    for t in operands[1:]:
        if t._array.dtype != dtype:
            raise RuntimeError(f"expected scalar type {_type_name(operands[0])} but found "
                               f"{_type_name(t)}")
    sizes = {}
    for k, (s, t) in enumerate(zip(subs, operands)):
        for c, n in zip(s, t._array.shape):
            seen = sizes.get(c)
            if seen is None or seen == 1:
                sizes[c] = n
            elif n != 1 and n != seen:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which "
                                   f"does not broadcast with previously seen size {seen}")
    operands = tuple(t if all(n == sizes[c] for c, n in zip(s, t._array.shape))
                     else t.expand(*[sizes[c] for c in s]) for s, t in zip(subs, operands))
    xp = xp_of(operands[0])
    spec = ",".join(subs) + "->" + out_sub
    arrays = [t._array for t in operands]
    dtype = arrays[0].dtype
    if dtype.name == "bfloat16":  # NumPy's einsum has no bfloat16 loop
        arrays = [a.astype(np.float32) for a in arrays]
    arr = xp.asarray(xp.einsum(spec, *arrays,
                               **({"optimize": True} if len(operands) > 2 else {})))
    res = make_tensor(arr if arr.dtype == dtype else arr.astype(dtype), operands[0]._device)
    node = record(EinsumBackward0, operands, res)
    if node is not None:
        node.subs, node.out_sub, node.used = subs, out_sub, used
        node.save_for_backward(*operands)
    return res


# ---- tensordot, kron, cross, chains -----------------------------------------------------------
def tensordot(a, b, dims=2, out=None):
    """Contract `dims` of a with as many of b: the last `dims` of a with b's first, or the
    listed pairs. Written with permute, reshape and mm (gradients come from those)."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(-int(dims), 0)), list(range(int(dims)))
    else:
        da, db = dims
        da = [da] if isinstance(da, (int, np.integer)) else list(da)
        db = [db] if isinstance(db, (int, np.integer)) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    na, nb = a._array.ndim, b._array.ndim
    ca = [d % na if na else d for d in da]
    cb = [d % nb if nb else d for d in db]
    for x, y, dx, dy in zip(ca, cb, da, db):
        sx, sy = a._array.shape[x], b._array.shape[y]
        if sx != sy:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sx} in "
                               f"dim {dx} and second has size {sy} in dim {dy}")
    fa = [d for d in range(na) if d not in ca]
    fb = [d for d in range(nb) if d not in cb]
    k = int(np.prod([a._array.shape[d] for d in ca]))
    left = a.permute(fa + ca).reshape(-1, k)
    right = b.permute(cb + fb).reshape(k, -1)
    res = left.mm(right).reshape([a._array.shape[d] for d in fa] + [b._array.shape[d] for d in fb])
    return _out(res, out, "tensordot")


def kron(input, other, *, out=None):
    """The Kronecker product: every element of input times a block of other."""
    n = max(input._array.ndim, other._array.ndim)
    sa = (1,) * (n - input._array.ndim) + input._array.shape
    sb = (1,) * (n - other._array.ndim) + other._array.shape
    a = input.reshape([x for s in sa for x in (s, 1)])
    b = other.reshape([x for s in sb for x in (1, s)])
    res = (a * b).reshape([x * y for x, y in zip(sa, sb)])
    return _out(res, out, "kron")


class LinalgCrossBackward0(Node):
    def backward(self, grad):
        a, b = self.saved_tensors
        ga = linalg_cross(b.conj(), grad, dim=self.dim) if _needs(self, 0) else None
        gb = linalg_cross(grad, a.conj(), dim=self.dim) if _needs(self, 1) else None
        return ga, gb


def linalg_cross(input, other, *, dim=-1, out=None):
    """`torch.linalg.cross`: the 3-vector cross product along `dim` (inputs broadcast)."""
    from .pointwise import broadcast_error, operands as _operands
    if input._array.ndim != other._array.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    nd = input._array.ndim
    d = dim + nd if dim < 0 else dim
    if not 0 <= d < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {dim})")
    na, nb = input._array.shape[d], other._array.shape[d]
    if na != 3 or nb != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {na} "
                           f"and {nb}")
    err = broadcast_error(input._array.shape, other._array.shape)
    if err is not None:
        raise err
    x, y, _, dev = _operands(input, other, "linalg_cross")
    res = make_tensor(xp_of(input).cross(x, y, axis=d), dev)
    node = record(LinalgCrossBackward0, (input, other), res)
    if node is not None:
        node.dim = dim
        node.save_for_backward(input, other)
    return _out(res, out, "linalg_cross")


_WARNED = set()


def _warn_once(key, message):
    if key not in _WARNED:
        _WARNED.add(key)
        import warnings
        warnings.warn(message, UserWarning, stacklevel=3)


def cross(input, other, dim=None, *, out=None):
    """`torch.cross`: without `dim`, the first dimension of size 3 (deprecated, warns once)."""
    if dim is None:
        _warn_once("cross", "Using torch.cross without specifying the dim arg is deprecated.\n"
                   "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
                   "The default value of dim will change to agree with that of linalg.cross in "
                   "a future release.")
        shape = np.broadcast_shapes(input._array.shape, other._array.shape)
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return linalg_cross(input, other, dim=dim, out=out)


def multi_dot(tensors, *, out=None):
    """`linalg.multi_dot`: a chain of matrix products in the cheapest order (a 1-D first or
    last operand is a row or column vector)."""
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0]._array.ndim, tensors[-1]._array.ndim
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i in range(1, n - 1):
        if tensors[i]._array.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got "
                               f"{tensors[i]._array.ndim}D")
    from .._tensor import _C_TYPE
    for i in range(1, n):
        if tensors[i]._array.dtype != tensors[0]._array.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 "
                               f"is {_C_TYPE[tensors[0].dtype.name]} and tensor {i} "
                               f"{_C_TYPE[tensors[i].dtype.name]}")
    mats = list(tensors)
    if first == 1:
        mats[0] = mats[0].unsqueeze(0)
    if last == 1:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in range(n - 1):
        if mats[i]._array.shape[1] != mats[i + 1]._array.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(mats[i]._array.shape)} and {list(mats[i + 1]._array.shape)} "
                               "cannot be multiplied")
    dims = [m._array.shape[0] for m in mats] + [mats[-1]._array.shape[1]]
    # the classic chain-order table: cost[i][j] of the product of mats i..j, split[i][j]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def chain(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return mm(chain(i, k), chain(k + 1, j))

    res = chain(0, n - 1)
    if first == 1 and last == 1:
        res = res.reshape(())
    elif first == 1:
        res = res.squeeze(0)
    elif last == 1:
        res = res.squeeze(-1)
    return _out(res, out, "multi_dot")


def chain_matmul(*matrices, out=None):
    _warn_once("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a future "
               "PyTorch release. Use torch.linalg.multi_dot instead, which accepts a list of two "
               "or more tensors rather than multiple parameters.")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for t in matrices:
        if t._array.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t._array.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return _out(matrices[0].clone(), out, "chain_matmul")
    return multi_dot(matrices, out=out)


def vecdot(x, y, *, dim=-1, out=None):
    """`linalg.vecdot`: sum(x.conj() * y) over `dim`."""
    if _autocast.active and out is None:
        x, y = lower(x, y)
    if x._array.dtype != y._array.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {_type_name(x)} and y of type {_type_name(y)} instead")
    if x._array.ndim == 1 and y._array.ndim == 1 and x._array.shape != y._array.shape:
        n, m = x._array.shape[0], y._array.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           "respectively")
    return _out((x.conj() * y).sum(dim), out, "linalg_vecdot")
