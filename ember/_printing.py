"""Text form of tensors: `repr(t)` / `str(t)` and the print options behind them.

The output is meant to be character-for-character what PyTorch 2.x prints for the same
values, so that doctests and logs read the same under ember. The rules reproduced here:

* One layout is chosen per tensor (not per element) from the values that will actually be
  shown: floats print either as whole numbers with a trailing dot (`1.`), in fixed point
  with `precision` decimals, or in scientific notation; every element is right-aligned
  to the widest one.
* Past `threshold` elements, only `edgeitems` rows/columns at each end of every long
  dimension are shown, with `...` between them.
* Rows wrap at `linewidth`; nested dimensions are separated by blank lines (one fewer than
  the dimension's depth from the innermost).
* Suffixes (`device=`, `size=`, `dtype=`, `grad_fn=` / `requires_grad=`) follow the
  contents, each moved to its own line when it would overflow `linewidth`.
"""
import math

import numpy as np

__all__ = ["tensor_repr", "set_printoptions", "get_printoptions"]

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}

# Module-level state, as PyTorch's print options are process-wide.
_OPTS = dict(_PROFILES["default"], sci_mode=None)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Change how tensors print. A profile is applied first, then explicit values.

    `sci_mode` is always assigned (as in PyTorch): leaving it out restores automatic
    choice between fixed and scientific notation.
    """
    if profile is not None:
        _OPTS.update(_PROFILES[profile])
    for key, value in (("precision", precision), ("threshold", threshold),
                       ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            _OPTS[key] = value
    _OPTS["sci_mode"] = sci_mode


def get_printoptions():
    """The current print options as a new dict."""
    return dict(_OPTS)


def _default_dtype_name():
    # Imported lazily: dtypes may import modules that import this one. Kept as its own
    # function so tests can substitute it.
    try:
        from .dtypes import get_default_dtype
    except ImportError:
        return "torch.float32"
    return str(get_default_dtype())


class _Layout:
    """The shared layout of every element of one tensor (or of one complex part).

    Decided from the values that will be displayed; `width` is the column width every
    element is padded to.
    """

    def __init__(self, values, floating):
        self.floating = floating
        self.whole = True    # every finite non-zero value is an integer: print as `3.`
        self.sci = False
        self.width = 1
        if not floating:
            self.width = max([1] + [len(str(v)) for v in values.reshape(-1).tolist()])
            return
        shown = values[np.isfinite(values) & (values != 0)]
        if shown.size == 0:
            # Only zeros, nan and inf: nothing to measure, and the sci_mode option is
            # deliberately not applied either (PyTorch prints `tensor([0., 0.])`).
            return
        magnitudes = np.abs(shown)
        smallest, largest = float(magnitudes.min()), float(magnitudes.max())
        self.whole = bool(np.all(shown == np.ceil(shown)))
        forced = _OPTS["sci_mode"]
        if forced is None:
            self.sci = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci = bool(forced)
        # Widths are measured on the finite non-zero values only; nan/inf/0 may then
        # stick out by a character, exactly as in PyTorch.
        p = _OPTS["precision"]
        if self.sci:
            sizes = (len(f"{v:.{p}e}") for v in shown.tolist())
        elif self.whole:
            sizes = (len(f"{v:.0f}") + 1 for v in shown.tolist())  # +1 for the dot
        else:
            sizes = (len(f"{v:.{p}f}") for v in shown.tolist())
        self.width = max(1, max(sizes))

    def format(self, v):
        if not self.floating:
            text = str(v)
        elif self.sci:
            text = f"{v:{self.width}.{_OPTS['precision']}e}"
        elif self.whole:
            text = f"{v:.0f}"
            if math.isfinite(v):
                text += "."  # the dot marks a float tensor holding whole numbers
        else:
            text = f"{v:.{_OPTS['precision']}f}"
        return text.rjust(self.width)


def _displayed(a, edge):
    """The elements that a summarised print shows (order is irrelevant: only widths and
    layouts are computed from them)."""
    if a.ndim == 0:
        return a
    if edge == 0:
        # A summarised print with no edge items shows `[...]`: nothing to measure.
        return a.reshape(-1) if a.ndim == 1 else a.reshape(-1)[:0]
    for axis, n in enumerate(a.shape):
        if n > 2 * edge:
            a = a.take(np.r_[0:edge, n - edge:n], axis=axis)
    return a


class _Cells:
    """Formats single elements, real or complex, and knows their column width."""

    def __init__(self, a, summarize, floating, is_complex):
        edge = _OPTS["edgeitems"]
        if is_complex:
            # Real and imaginary parts get independent layouts.
            self.re = _Layout(_displayed(a.real, edge) if summarize else a.real, True)
            self.im = _Layout(_displayed(a.imag, edge) if summarize else a.imag, True)
            self.width = self.re.width + self.im.width + 1
        else:
            self.re = _Layout(_displayed(a, edge) if summarize else a, floating)
            self.im = None
            self.width = self.re.width

    def __call__(self, v):
        if self.im is None:
            return self.re.format(v)
        real = self.re.format(v.real)
        imag = (self.im.format(v.imag) + "j").lstrip()
        # A sign (also of -0.0 or from sci notation) already separates the two parts.
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _render(a, indent, summarize, cell):
    """Bracketed text of `a`, whose first line starts at column `indent`."""
    edge = _OPTS["edgeitems"]
    n = a.shape[0] if a.ndim else 0
    if a.ndim == 0:
        return cell(a.item())
    if a.ndim == 1:
        # Line capacity is computed from the column width plus ", ", even though the
        # last element of a line has no separator: this matches where PyTorch wraps.
        per_line = max(1, math.floor((_OPTS["linewidth"] - indent) / (cell.width + 2)))
        if summarize and not edge:
            items = ["..."]
        elif summarize and n > 2 * edge:
            items = ([cell(v) for v in a[:edge].tolist()] + [" ..."]
                     + [cell(v) for v in a[-edge:].tolist()])
        else:
            items = [cell(v) for v in a.tolist()]
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if summarize and n > 2 * edge:
        rows = ([_render(a[i], indent + 1, summarize, cell) for i in range(edge)] + ["..."]
                + [_render(a[i], indent + 1, summarize, cell) for i in range(n - edge, n)])
    else:
        rows = [_render(a[i], indent + 1, summarize, cell) for i in range(n)]
    # Blocks of a d-dim tensor are separated by d-2 blank lines.
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _append_suffixes(text, suffixes, indent):
    # PyTorch measures the current line as its length plus two (one more than the ", "
    # about to be written would need); kept so wrapping happens at the same point.
    line_len = len(text) - text.rfind("\n") + 1
    parts = [text]
    for suffix in suffixes:
        if line_len + len(suffix) + 2 > _OPTS["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _printable(a, dtype):
    """The values of a barebones dtype's array, as PyTorch prints them: complex32 and float8
    by value; float4_e2m1fn_x2 by its raw bytes (PyTorch prints each packed byte as a
    number); the bits and sub-byte types not at all (PyTorch cannot read their elements)."""
    kind = getattr(dtype, "_kind", "")
    if not kind or kind == "uint":
        return a
    from . import _dtype_casts, dtypes as _dt
    if kind is _dt.FLOAT4:
        return a.view(np.uint8)
    if kind in (_dt.BITS, _dt.SUB_INT, _dt.SUB_UINT):
        raise _dtype_casts.not_implemented("_local_scalar_dense_cpu", dtype)
    a = _dtype_casts.astype(a, _dt.complex64 if kind is _dt.COMPLEX32 else _dt.float32)
    if dtype is _dt.float8_e8m0fnu:
        # PyTorch's printer tells zeros by `t != 0`, and 0 becomes e8m0's smallest value,
        # 2**-127: so that value is laid out, and printed, as a zero.
        a = np.where(a.view(np.uint32) == 0x00400000, np.float32(0), a)
    return a


def _meta_repr(t, prefix, contents=None):
    """A meta tensor has no values: PyTorch prints `...`, its size, and any dtype but the
    default one."""
    suffixes = ["device='meta'", f"size={tuple(t.shape)}"]
    if str(t.dtype) != _default_dtype_name():
        suffixes.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _append_suffixes(prefix + ("..." if contents is None else contents), suffixes,
                            len(prefix))


def tensor_repr(t, prefix="tensor(", contents=None):
    """PyTorch's `repr` of ember tensor `t`, e.g. `tensor([1., 2.], dtype=torch.float64)`.
    `prefix` replaces "tensor(" for subclasses that print under their own name; `contents`
    (`repr(t, tensor_contents=...)`) the values' text, the suffixes kept."""
    a = t._array
    device = t.device
    if device.type == "meta":
        return _meta_repr(t, prefix, contents)
    if not isinstance(a, np.ndarray):
        a = t._host()  # through the backend: printing reads the device, as in PyTorch
    dtype = t.dtype
    name = str(dtype)
    is_complex = bool(getattr(dtype, "is_complex", a.dtype.kind == "c"))
    floating = bool(getattr(dtype, "is_floating_point", a.dtype.kind == "f"))
    indent = len(prefix)
    suffixes = []

    if getattr(device, "type", str(device).split(":")[0]) != "cpu":
        suffixes.append(f"device='{device}'")

    default = _default_dtype_name()
    if a.size == 0:
        body = "[]"
        if a.ndim != 1:  # (0,) is implied by `[]`; any other empty shape is spelled out
            suffixes.append(f"size={tuple(a.shape)}")
        if name != default:  # no values to hint at the dtype, so even int64 is named
            suffixes.append(f"dtype={name}")
    else:
        if not _OPTS["edgeitems"]:
            suffixes.append(f"size={tuple(a.shape)}")
        default_complex = "torch.complex128" if default == "torch.float64" else "torch.complex64"
        if name not in (default, default_complex, "torch.int64", "torch.bool"):
            suffixes.append(f"dtype={name}")
        a = _printable(a, dtype)
        # Half, bfloat16 and float32 widen to float64 exactly, and Python formats floats
        # in double precision, as PyTorch does via `.item()`.
        if is_complex:
            a = a.astype(np.complex128)
        elif floating:
            a = a.astype(np.float64)
        summarize = a.size > _OPTS["threshold"]
        if contents is None:
            body = _render(a, indent, summarize, _Cells(a, summarize, floating, is_complex))

    if contents is not None:
        body = contents
    grad_fn = getattr(t, "grad_fn", None)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
    elif getattr(t, "requires_grad", False):
        suffixes.append("requires_grad=True")
    if getattr(t, "_fw_grad", None) is not None:
        from ._autograd_meta import forward_grad  # (imports _tensor, which imports this one)
        tangent = forward_grad(t)
        if tangent is not None:
            suffixes.append(f"tangent={tangent}")  # 0-dim: formats as its number
    return _append_suffixes(prefix + body, suffixes, indent)
