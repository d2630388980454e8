"""The bilinear form y[..., o] = x1[..., :] W[o] x2[..., :] (+ b[o]): `torch.bilinear` and
`nn.functional.bilinear`, the math of `nn.Bilinear`.

As PyTorch, the batch dimensions are flattened, one TrilinearBackward0 node contracts the
three operands, the result is viewed back to the batch shape and the bias is added after.
"""
from .._state import flop_counter as _flops
from .._tensor import make_tensor, xp_of
from ._graph import Node, record

__all__ = ["bilinear"]
METHODS = []
FUNCTIONAL = ["bilinear"]


class TrilinearBackward0(Node):
    """out[b, o] = sum_ij x1[b, i] W[o, i, j] x2[b, j]: each operand's gradient contracts the
    incoming gradient with the other two (ember ops, so it differentiates again)."""

    def backward(self, grad):
        counter = _flops.active
        if counter is None:
            return self._backward(grad)
        _flops.active = None  # PyTorch's _trilinear (and its backward) counts no FLOPs
        try:
            return self._backward(grad)
        finally:
            _flops.active = counter

    def _backward(self, grad):
        from .linalg import einsum
        x1, w, x2 = self.saved_tensors
        g1 = einsum("bo,oij,bj->bi", grad, w, x2) if self._next[0][0] is not None else None
        gw = einsum("bo,bi,bj->oij", grad, x1, x2) if self._next[1][0] is not None else None
        g2 = einsum("bo,bi,oij->bj", grad, x1, w) if self._next[2][0] is not None else None
        return g1, gw, g2


def _trilinear(x1, w, x2):
    xp = xp_of(x1)
    arr = xp.einsum("bi,oij,bj->bo", x1._array, w._array, x2._array, optimize=True)
    out = make_tensor(xp.ascontiguousarray(arr), x1._device)
    node = record(TrilinearBackward0, (x1, w, x2), out)
    if node is not None:
        node.save_for_backward(x1, w, x2)
    return out


def _size(t, dim):
    if t._array.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return t.size(dim)


def bilinear(input1, input2, weight, bias=None):
    tensors = [("input1", input1), ("input2", input2), ("weight", weight)]
    if bias is not None:
        tensors.append(("bias", bias))
    if any(t.dtype is not input1.dtype for _, t in tensors):
        listed = ", ".join(f"{name}: {t.dtype._cpp_name}" for name, t in tensors)
        raise RuntimeError(f"All tensors must have the same dtype, got {listed}")
    n1, n2 = input1._array.ndim, input2._array.ndim
    if n1 != n2:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {n1} and {n2}")
    for i in range(n1 - 1):
        a, b = input1._array.shape[i], input2._array.shape[i]
        if a != b:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {a} and {b}")
    if _size(input1, -1) != weight.size(1):
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.size(-1)} but expected {weight.size(1)}")
    if _size(input2, -1) != weight.size(2):
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.size(-1)} but expected {weight.size(2)}")
    if bias is not None and bias.size(0) != weight.size(0):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.size(0)} but expected {weight.size(0)}")
    out_shape = tuple(input1._array.shape[:-1]) + (weight._array.shape[0],)
    flat1 = input1.reshape(-1, input1._array.shape[-1])
    flat2 = input2.reshape(-1, input2._array.shape[-1])
    out = _trilinear(flat1, weight, flat2).reshape(out_shape)
    return out if bias is None else out + bias
