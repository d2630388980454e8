"""The machinery every pointwise op runs on: operand promotion (a dtype or a Python number's
type on each side, PyTorch's rules via `dtypes.promote_operands`, cached), the op's device
(`common_device`, 0-dim CPU operands mixing in), `binary` (the body of a binary op: promote,
compute on arrays, record the node) with its node base `BinaryNode`, and PyTorch's
broadcasting errors.
"""
import builtins

import numpy as np

from ... import _dtype_casts as _casts, dtypes as _dt
from ..._memory_format import in_iterator_order
from ..._state import forward_ad as _fw, grad as _grad_state
from ..._tensor import Tensor, _make, make_tensor
from ...device import _BACKENDS
from .._graph import Node, record, record_number
from .._writes import write_out
from .._dual import on_dual_node

_FROM_NUMPY = _dt.FROM_NUMPY
_PROMOTED = {}  # (dtype, dim?, dtype-or-scalar-type, dim?) -> dtype; filled as types appear


def as_array(x):
    """A NumPy result as an array: NumPy gives full reductions, and ufuncs of 0-d inputs, as
    scalars (other backends give 0-d arrays); an in-place pass needs an array to write into."""
    return np.asarray(x) if isinstance(x, np.generic) else x


# ---- operands --------------------------------------------------------------------------
def _as_scalar(x, fname):
    if isinstance(x, np.generic):  # first: np.float64 is a float subclass of its own type
        return x.item()
    if isinstance(x, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        return x
    raise TypeError(f"{fname}(): argument 'other' (position 2) must be Tensor, not "
                    f"{type(x).__name__}")


def _promote(da, na, db, nb):
    """Result dtype for two operands, each a dtype (or a Python number's type) with whether
    it has dimensions (None for a Python number). Cached: dispatch runs it on every op."""
    key = (da, na, db, nb, _dt._default[0])
    d = _PROMOTED.get(key)
    if d is None:
        ops = [(x if isinstance(x, _dt.dtype) else _dt.scalar_dtype(x()), n)
               for x, n in ((da, na), (db, nb))]
        d = _PROMOTED[key] = _dt.promote_operands(ops)
    return d


def operands(a, b, fname="op"):
    """Two operands as (array-or-number, array-or-number, result dtype, device), arrays
    already cast to the result dtype. One of `a`, `b` is a Tensor (a NumPy array counts as
    one, as in PyTorch)."""
    if isinstance(a, Tensor):
        if type(b) is np.ndarray:
            b = make_tensor(b, a._device) if a._device.type == "cpu" else _host_operand(b, a)
        aa, dev = a._array, a._device
        if isinstance(b, Tensor):
            ba = b._array
            if b._device is not dev:
                dev = common_device(a, b)
            if aa.dtype is ba.dtype:
                return aa, ba, _FROM_NUMPY[aa.dtype], dev
            d = _promote(_FROM_NUMPY[aa.dtype], aa.ndim > 0, _FROM_NUMPY[ba.dtype], ba.ndim > 0)
            if aa.dtype is not d.np:
                aa = (aa.astype(d.np) if not d._kind and aa.dtype.kind != "V"
                      else _casts.astype(aa, d))
            if ba.dtype is not d.np:
                ba = (ba.astype(d.np) if not d._kind and ba.dtype.kind != "V"
                      else _casts.astype(ba, d))
            return aa, ba, d, dev
        b = _as_scalar(b, fname)
        d = _promote(_FROM_NUMPY[aa.dtype], aa.ndim > 0, type(b), None)
        if aa.dtype is not d.np:
            aa = (aa.astype(d.np) if not d._kind and aa.dtype.kind != "V"
                  else _casts.astype(aa, d))
        if d.np in _SCALAR_FIXES:
            b = _scalar_as(b, d.np)
        return aa, b, d, dev
    if type(a) is np.ndarray:
        return operands(make_tensor(a), b, fname)
    ba, dev = b._array, b._device
    a = _as_scalar(a, fname)
    d = _promote(_FROM_NUMPY[ba.dtype], ba.ndim > 0, type(a), None)
    if ba.dtype is not d.np:
        ba = (ba.astype(d.np) if not d._kind and ba.dtype.kind != "V"
              else _casts.astype(ba, d))
    if d.np in _SCALAR_FIXES:
        a = _scalar_as(a, d.np)
    return a, ba, d, dev


_SMALL_INT_RANGE = {np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max))
                    for t in (np.uint8, np.int8, np.int16, np.int32, np.uint16, np.uint32,
                              np.uint64)}


_SCALAR_FIXES = set(_SMALL_INT_RANGE) | {_dt.bfloat16.np}


def _scalar_as(value, np_dtype):
    """A Python number as NumPy must see it to compute in `np_dtype`, PyTorch's way: a float
    with bfloat16 as a bfloat16 (NumPy would give float32); an int beyond a small integer
    dtype's range cast with wrap-around (`uint8_tensor + -3` subtracts 3 modulo 256), where
    NumPy would raise."""
    if np_dtype is _dt.bfloat16.np:
        return np_dtype.type(value) if type(value) is builtins.float else value
    if type(value) is not builtins.int:
        return value
    lo, hi = _SMALL_INT_RANGE[np_dtype]
    if lo <= value <= hi:
        return value
    bits = 8 * np_dtype.itemsize
    value %= 1 << bits
    if lo < 0 and value > hi:
        value -= 1 << bits
    return np_dtype.type(value)


def _host_operand(arr, like):
    from ..creation import tensor
    return tensor(arr)


def common_device(a, b):
    """The device of an op over a and b: equal devices, or a 0-dim CPU tensor beside a
    tensor elsewhere (PyTorch lets CPU scalars mix)."""
    da, db = a._device, b._device
    if da == db:
        return da
    if db.type == "cpu" and b._array.ndim == 0:
        return da
    if da.type == "cpu" and a._array.ndim == 0:
        return db
    if da.type == "meta" or db.type == "meta":  # PyTorch's meta kernels word it so
        raise RuntimeError(f"Tensor on device {db} is not on the expected device {da}!")
    raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                       f"devices, {da} and {db}!")


def _on(arr, dev, src_dev):
    """Move a 0-dim CPU operand's array to `dev` when it mixes with a device tensor."""
    if dev is src_dev or dev.type == "cpu":
        return arr
    return _BACKENDS[dev.type].from_host(arr, dev.index)


# The binary ops that take PyTorch's barebones dtypes (2.13, CPU), by the dtypes' kinds, and
# the kernel each op's refusal names; a Python-number operand with a float8 tensor goes to
# PyTorch's "reduced float" kernel, which refuses float8 even where the tensor kernel takes it.
_U, _F8, _C32, _F4 = _dt.UINT, _dt.FLOAT8, _dt.COMPLEX32, _dt.FLOAT4
_BAREBONES_TAKES = {
    "add": {_C32}, "sub": {_C32}, "rsub": {_C32}, "mul": {_U, _F8, _C32}, "div": {_U},
    "eq": {_U, _F8, _C32, _F4}, "ne": {_U, _F8, _C32, _F4}}
_KERNEL = {"add": "add_stub", "sub": "add_stub", "rsub": "add_stub", "mul": "mul_cpu",
           "div": "div_cpu", "floor_divide": "div_floor_cpu", "remainder": "remainder_cpu",
           "pow": "pow", "fmod": "fmod_cpu", "eq": "eq_cpu", "ne": "ne_cpu", "lt": "lt_cpu",
           "le": "le_cpu", "gt": "gt_cpu", "ge": "ge_cpu", "bitwise_left_shift": "lshift_cpu",
           "bitwise_right_shift": "rshift_cpu"}
_REDUCED_FLOAT = {"mul": "mul_cpu_reduced_float", "div": "div_cpu_reduced_float",
                  "floor_divide": "div_floor_cpu_reduced_float"}


def _barebones_operands(a, b, x, y, d, fname):
    """Check that op `fname` takes barebones dtype `d`, and give its operands as arrays of the
    dtype it computes in (complex64 for complex32, float32 for float8: the result is rounded
    back, PyTorch's way, by `_casts.astype`)."""
    kind = d._kind
    number = not (isinstance(a, Tensor) and isinstance(b, Tensor))
    if fname == "pow" and any(type(v) is builtins.float and v == 0.5 for v in (a, b)):  # PyTorch's pow(x, 0.5) is a sqrt
        raise _casts.not_implemented("sqrt_vml_cpu", d)
    if kind in (_F4, _dt.BITS, _dt.SUB_INT, _dt.SUB_UINT) and number and fname != "pow":
        raise _casts.not_implemented("copy_", d)  # PyTorch fails making the number a tensor
    if kind is _F8 and number and fname in _REDUCED_FLOAT:
        raise _casts.not_implemented(_REDUCED_FLOAT[fname], d)
    if kind not in _BAREBONES_TAKES.get(fname, ()):
        raise _casts.not_implemented(_KERNEL.get(fname, fname + "_cpu"), d)
    if kind is _F4:  # equality of the packed bytes
        return x.view(np.uint8), y.view(np.uint8)
    if kind is _C32:
        x = _casts.complex32_to_complex64(x) if hasattr(x, "dtype") else x
        y = _casts.complex32_to_complex64(y) if hasattr(y, "dtype") else y
    elif kind is _F8:
        # through the host on CuPy, which has no float8 kernels
        x = _casts.astype(x, _dt.float32) if hasattr(x, "dtype") else x
        y = _casts.astype(y, _dt.float32) if hasattr(y, "dtype") else y
    return x, y


# The unary ops that take barebones kinds besides the unsigned ones (which every float-valued
# unary op takes, computing in the default dtype), and kernels not named `<op>_cpu` or, for the
# float-valued ones, `<op>_vml_cpu`.
_UNARY_TAKES = {"neg": {_C32}, "abs": {_F8, _C32}, "conj": {_C32}, "sgn": {_C32},
                "isnan": {_U, _F8, _C32, _F4}, "floor": {_U}, "ceil": {_U}, "trunc": {_U},
                "round": {_U}}
_UNARY_KERNEL = {"reciprocal": "reciprocal_cpu", "sigmoid": "sigmoid_cpu", "isnan": "ne_cpu"}


def barebones_unary(input, fname, to_float):
    """The array unary op `fname` computes on for a barebones-dtype `input` (complex32's as
    complex64, float8's as float32), and the dtype its result is rounded back to (None: as
    computed); or PyTorch's refusal."""
    d, arr = input.dtype, input._array
    kind = d._kind
    if kind is _U and (to_float and fname not in _UNARY_TAKES or kind in _UNARY_TAKES.get(fname, ())):
        return arr, None
    if kind not in _UNARY_TAKES.get(fname, ()) or (d is _dt.float8_e8m0fnu and fname == "abs"):
        if kind in (_F8, _F4) and fname == "sigmoid":
            raise _casts.not_implemented("sigmoid_cpu_reduced_float", d)
        kernel = _UNARY_KERNEL.get(fname) or (f"{fname}_vml_cpu" if to_float else f"{fname}_cpu")
        raise _casts.not_implemented(kernel, d)
    if kind is _C32:
        return _casts.complex32_to_complex64(arr), d
    if kind is _F4:
        return arr.view(np.uint8), None
    return arr.astype(np.float32), d


def round_back(res, d):
    """A barebones op's result, computed wider, rounded to `d` (a complex32 op's real result,
    abs, to float16)."""
    if d is _dt.complex32 and res.dtype.kind != "c":
        return res.astype(np.float16)
    return _casts.astype(res, d) if res.dtype.kind != "b" else res


def binary(a, b, fn, node_cls, fname, out=None, save=(True, True), float_result=False):
    """The body of a binary op: promote, compute `fn(x, y)` on arrays, record the node."""
    x, y, d, dev = operands(a, b, fname)
    if d._kind:
        x, y = _barebones_operands(a, b, x, y, d, fname)
    if float_result and not (d.is_floating_point or d.is_complex):
        f = _dt.get_default_dtype().np
        # a Python number stays itself (operands may have cast it to the integer dtype)
        x = x.astype(f) if isinstance(a, Tensor) or type(a) is np.ndarray else _as_scalar(a, fname)
        y = y.astype(f) if isinstance(b, Tensor) or type(b) is np.ndarray else _as_scalar(b, fname)
    if dev.type != "cpu":
        if isinstance(a, Tensor) and a._device is not dev:
            x = _on(x, dev, a._device)
        if isinstance(b, Tensor) and b._device is not dev:
            y = _on(y, dev, b._device)
    try:
        res = fn(x, y)
        try:  # a C-ordered first operand orders both NumPy's result and PyTorch's (C order)
            first_in_c_order = x.flags.c_contiguous
        except AttributeError:  # a number first (2 - t): both follow the tensor
            first_in_c_order = True
        if not first_in_c_order:
            res = in_iterator_order(res, (x, y), dev)
        if d._kind and res.dtype.kind != "b" and not float_result:
            res = _casts.astype(res, d)
        res = _make(Tensor, res, dev)
    except ValueError:
        _raise_if_not_broadcastable(x, y)
        raise
    if node_cls is not None and _grad_state.enabled:
        ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
        if ta and tb:
            node = record(node_cls, (a, b), res)
            if node is not None and node_cls.saves:
                # as PyTorch, an operand that serves only the other's gradient is kept
                # only when that gradient is wanted (forward AD wants both)
                every = _fw.level is not None and on_dual_node(node)
                node.save_for_backward(
                    a if every or b._requires_grad or not node_cls.a_only_for_b else None,
                    b if every or a._requires_grad or not node_cls.b_only_for_a else None)
        else:
            t, number = (a, b) if ta else (b, a)
            if node_cls.number_edge:
                node = record_number(node_cls, t, number, res, not ta)
            else:
                node = record(node_cls, (t,), res)
            if node is not None:  # nodes default to two tensor operands (BinaryNode)
                node.scalar = number
                node.scalar_first = not ta
                if node_cls.saves and (node_cls.saves_with_number_first if not ta
                                       else node_cls.saves_with_number):
                    node.save_for_backward(t)
    if out is not None:  # after recording: write_out refuses a result that requires grad
        return write_out(out, res, fname)
    return res


class BinaryNode(Node):
    """A node of a binary op; `scalar` holds a Python-number operand, if one was given.

    `number_edge`: PyTorch wraps a Python-number operand of this op into a 0-dim tensor
    input, so the node has an edge (None, 0) for it (record_number) and its backward
    returns a gradient slot (None) for it: `_for_tensor` puts one gradient in its place."""
    saves = True
    saves_with_number = True        # tensor op number: the tensor is saved
    saves_with_number_first = True  # number op tensor: the tensor is saved
    a_only_for_b = b_only_for_a = False  # an operand only the other's gradient reads
    number_edge = False
    scalar = None
    scalar_first = False

    def _for_tensor(self, g):
        return (None, g) if self.scalar_first else (g, None)

    # PyTorch saves a wrapped number that the backward reads (x * 2, x / 2): after the
    # graph is freed a second backward through such a node raises, as for a saved tensor
    number_saved = False

    def _release(self):
        if self.number_saved and self.scalar is not None:
            self._freed = True
        super()._release()

    def _saved_number(self):
        self._raise_if_freed()
        return self.scalar


def broadcast_error(a, b):
    """PyTorch's RuntimeError for shapes `a` and `b` that do not broadcast, or None when
    they do (it names the last mismatching dim, counted in the broadcast rank)."""
    n = builtins.max(len(a), len(b))
    for i in range(n - 1, -1, -1):
        ia, ib = i - n + len(a), i - n + len(b)
        da = a[ia] if ia >= 0 else 1
        db = b[ib] if ib >= 0 else 1
        if da != db and da != 1 and db != 1:
            return RuntimeError(f"The size of tensor a ({da}) must match the size of tensor b "
                                f"({db}) at non-singleton dimension {i}")
    return None


def _raise_if_not_broadcastable(*operands):
    shapes = [np.shape(x) for x in operands]
    for k in range(1, len(shapes)):
        err = broadcast_error(np.broadcast_shapes(*shapes[:k]) if k > 1 else shapes[0], shapes[k])
        if err is not None:
            raise err


def broadcast_shapes_or_none(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None
