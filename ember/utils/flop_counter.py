"""`torch.utils.flop_counter`: `FlopCounterMode` counts the floating-point operations of the
matrix products and convolutions run in its block, forward and backward, by module (the
names ModuleTracker gives) and by ATen operator, with PyTorch's formulas: a product of
(m, k) and (k, n) matrices is 2mkn; a convolution 2 x batch x output positions x kernel
size x input channels per group x output channels (input positions for a transposed one);
its backward the convolutions that compute the input and weight gradients asked for.

ember's ops tell the counter (`ember._state.flop_counter`) of each product and convolution
as the ATen operator PyTorch's dispatcher would see: `mm` (also for a batch folded into one
product, and for the gradients of mm, addmm and linear), `addmm` (linear of a batch of
vectors), `bmm` (also a broadcast batched matmul, at its expanded shape), `baddbmm`,
`convolution`, `convolution_backward`; and of each call of a custom operator
(torch.library), which a formula may be registered for. Vector products (mv, dot) are not
counted, nor is the fused attention kernel of PyTorch's CPU build (attention's math path
counts its bmm), as in PyTorch.
"""
import math
import threading
import warnings
from collections import defaultdict

from .. import _state
from .._tensor import Tensor
from ..ops import _aten, _custom
from ._pytree import tree_map
from .module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula"]

aten = _custom.namespace("aten")


def get_shape(i):
    return i.shape if isinstance(i, Tensor) else i


def shape_wrapper(f):
    """A formula over shapes, called with the op's arguments (tensors become their shapes)
    and its result's shape as `out_shape`."""
    def nf(*args, out_val=None, **kwargs):
        args, kwargs, out_shape = tree_map(get_shape, (args, kwargs, out_val))
        return f(*args, out_shape=out_shape, **kwargs)
    nf.__name__ = getattr(f, "__name__", "formula")
    nf.__doc__ = getattr(f, "__doc__", None)
    return nf


flop_registry = {}


def register_flop_formula(targets, get_raw=False):
    """Decorate a FLOP formula for the operator packet(s) `targets` (`torch.ops.aten.mm`, a
    custom operator's `torch.ops.mylib.foo`): it is called with the op's arguments and
    `out_shape` (with `get_raw`, the arguments as they are and `out_val`)."""
    def register_fun(formula):
        if not get_raw:
            formula = shape_wrapper(formula)

        def register(target):
            if not isinstance(target, _aten.OpOverloadPacket):
                raise ValueError(
                    "register_flop_formula(targets): expected each target to be "
                    "OpOverloadPacket (i.e. torch.ops.mylib.foo), JitFunction, "
                    f"or HigherOrderOperator, got {target} which is of type {type(target)}")
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = formula
        for target in (targets if isinstance(targets, (list, tuple)) else [targets]):
            register(target)
        return formula
    return register_fun


@register_flop_formula(aten.mm)
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """FLOPs of a matrix product: 2mkn (a multiply and an add per term)."""
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"matmul: inner dimensions must match (k == k2), got {k} and {k2}")
    return m * n * 2 * k


@register_flop_formula(aten.addmm)
def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """FLOPs of addmm: its product's (the addition is not counted)."""
    return mm_flop(a_shape, b_shape)


@register_flop_formula(aten.bmm)
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """FLOPs of a batch of matrix products: 2bmkn."""
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2:
        raise AssertionError(f"bmm: batch dimensions must match (b == b2), got {b} and {b2}")
    if k != k2:
        raise AssertionError(f"bmm: inner dimensions must match (k == k2), got {k} and {k2}")
    return b * m * n * 2 * k


@register_flop_formula(aten.baddbmm)
def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """FLOPs of baddbmm: its products'."""
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed=False) -> int:
    """FLOPs of a convolution (the bias not counted): for each output position (input
    position, for a transposed one) and batch element, the kernel's multiply-adds over the
    input channels of its group, for every output channel."""
    batch = x_shape[0]
    positions = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *kernel = w_shape
    return math.prod(positions) * math.prod(kernel) * batch * c_out * c_in * 2


@register_flop_formula(aten.convolution)
def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args,
              out_shape=None, **kwargs) -> int:
    """FLOPs of a convolution."""
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


def _swap_batch_and_channels(shape):
    return [shape[1], shape[0]] + list(shape[2:])


@register_flop_formula(aten.convolution_backward)
def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation,
                       transposed, _output_padding, _groups, output_mask, out_shape) -> int:
    """FLOPs of a convolution's backward: the input gradient is the transposed convolution
    (the plain one, for a transposed convolution) of the output gradient by the weight; the
    weight gradient a convolution of the input by the output gradient (of the output
    gradient by the input, for a transposed one), batch and channels swapped."""
    flops = 0
    if output_mask[0]:
        flops += conv_flop_count(grad_out_shape, w_shape, get_shape(out_shape[0]),
                                 not transposed)
    if output_mask[1]:
        t = _swap_batch_and_channels
        gw_shape = t(get_shape(out_shape[1]))
        if transposed:
            flops += conv_flop_count(t(grad_out_shape), t(x_shape), gw_shape)
        else:
            flops += conv_flop_count(t(x_shape), t(grad_out_shape), gw_shape)
    return flops


def sdpa_flop_count(query_shape, key_shape, value_shape):
    """FLOPs of attention's two batched products (q k^T, then by v); key and value may have
    fewer heads than the query (grouped-query attention)."""
    b, h_q, s_q, d_q = query_shape
    _, h_kv, s_k, _ = key_shape
    *_, d_v = value_shape
    if h_q < h_kv or h_q % h_kv:
        raise AssertionError(f"sdpa_flop_count: query heads ({h_q}) must be a multiple of "
                             f"key/value heads ({h_kv})")
    return (bmm_flop((b * h_q, s_q, d_q), (b * h_q, d_q, s_k))
            + bmm_flop((b * h_q, s_q, s_k), (b * h_q, s_k, d_v)))


def sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape):
    """FLOPs of attention's backward: the scores again, then the gradients of the scores,
    of v, of q and of k, each a batched product."""
    b, h_q, s_q, d_q = query_shape
    _, h_kv, s_k, _ = key_shape
    *_, d_v = value_shape
    if h_q < h_kv or h_q % h_kv:
        raise AssertionError(f"sdpa_backward_flop_count: query heads ({h_q}) must be a "
                             f"multiple of key/value heads ({h_kv})")
    n = b * h_q
    return (bmm_flop((n, s_q, d_q), (n, d_q, s_k)) + bmm_flop((n, s_q, d_v), (n, d_v, s_k))
            + bmm_flop((n, s_k, s_q), (n, s_q, d_v)) + bmm_flop((n, s_q, s_k), (n, s_k, d_q))
            + bmm_flop((n, d_q, s_q), (n, s_q, s_k)))


# ---- the table ---------------------------------------------------------------------------
suffixes = ["", "K", "M", "B", "T"]


def get_suffix_str(number):
    """The suffix a total is shown with: one step per three digits, keeping at least two
    digits before the point (1001M, not 1.001B)."""
    return suffixes[max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))]


def convert_num_with_suffix(number, suffix):
    return f"{number / 1000 ** suffixes.index(suffix):.3f}" + suffix


def convert_to_percent_str(num, denom) -> str:
    return "0%" if denom == 0 else f"{num / denom:.2%}"


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def _table(rows, headers, align):
    """The rows as a text table. PyTorch prints it with the tabulate package, which ember
    uses too where it is installed (so the table is PyTorch's to the character, whatever
    tabulate's version does with the indentation); without it (where PyTorch's FlopCounterMode
    fails) ember lays out tabulate's "simple" format itself, keeping the indentation as
    PyTorch asks: a column at least two wider than its header, a rule of dashes under the
    headers, two spaces between columns, a column of numbers shown as `format(x, "g")`."""
    try:
        import tabulate
    except ImportError:
        return _simple_table(rows, headers, align)
    tabulate.PRESERVE_WHITESPACE = True
    return tabulate.tabulate(rows, headers=headers, colalign=align)


def _simple_table(rows, headers, align):
    columns = [list(c) for c in zip(*rows)]
    for c in columns:
        values = [_number(v) for v in c]
        if all(v is not None for v in values):
            c[:] = [format(v, "g") for v in values]
    widths = [max([len(h) + 2] + [len(v) for v in c]) for h, c in zip(headers, columns)]

    def line(cells):
        return "  ".join(v.ljust(w) if a == "left" else v.rjust(w)
                         for v, w, a in zip(cells, widths, align)).rstrip()
    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(row) for row in zip(*columns)]
    return "\n".join(out)


# ---- the counter ---------------------------------------------------------------------------
_counting = []  # the FlopCounterModes open now, innermost last


def _tell(op, args, kwargs, out):
    """What ember's ops call while a FlopCounterMode is open (`_state.flop_counter.active`):
    `op` is an ATen operator's name or a custom operator's packet. A counter counts the ops
    of the thread that opened it, as PyTorch's dispatch modes are per thread."""
    packet = aten._ops[op] if isinstance(op, str) else op
    thread = threading.get_ident()
    for counter in list(_counting):
        if counter._thread == thread:
            counter._count_flops(packet, out, args, kwargs or {})


class FlopCounterMode:
    """A context manager counting the FLOPs of what runs in it, by module and by operator::

        with FlopCounterMode(display=False) as counter:
            model(x).sum().backward()
        counter.get_total_flops()

    `depth`: how deep in the module hierarchy the table printed on leaving goes (with
    `display`); `custom_mapping`: {operator packet: formula} added to the registered ones.
    Not reentrant."""

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        super().__init__()
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode = None
        if custom_mapping is None:
            custom_mapping = {}
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it",
                          stacklevel=2)
        self.flop_registry = {
            **flop_registry,
            **{k: v if getattr(v, "_get_raw", False) else shape_wrapper(v)
               for k, v in custom_mapping.items()}}
        self.mod_tracker = ModuleTracker()

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """{module name: {operator: FLOPs}}, "Global" for everything."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        """The counts as a table: each module down to `depth` (sorted by name, indented by
        its depth) with its operators, and "Global" first when some FLOPs ran outside every
        module."""
        if depth is None:
            depth = self.depth
        if depth is None:
            depth = 999999
        total = self.get_total_flops()
        suffix = get_suffix_str(total)
        global_subsumed = False

        def rows_of(name, level):
            nonlocal global_subsumed
            flops = sum(self.flop_counts[name].values())
            global_subsumed |= flops >= total
            pad = " " * level
            rows = [[pad + name, convert_num_with_suffix(flops, suffix),
                     convert_to_percent_str(flops, total)]]
            for op, n in self.flop_counts[name].items():
                rows.append([pad + " - " + str(op), convert_num_with_suffix(n, suffix),
                             convert_to_percent_str(n, total)])
            return rows

        values = []
        for name in sorted(self.flop_counts):
            if name == "Global" or name.count(".") + 1 > depth:
                continue
            values.extend(rows_of(name, name.count(".")))
        # "Global" only when some FLOPs are in no module
        if "Global" in self.flop_counts and not global_subsumed:
            for row in values:
                row[0] = " " + row[0]
            values = rows_of("Global", 0) + values
        if not values:
            values = [["Global", "0", "0%"]]
        return _table(values, ["Module", "FLOP", "% Total"], ("left", "right", "right"))

    def __enter__(self):
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = self
        self._thread = threading.get_ident()
        _counting.append(self)
        _state.flop_counter.active = _tell
        return self

    def __exit__(self, *args):
        if self.mode is None:
            raise AssertionError("Internal error: FlopCounter.__exit__ called but mode is None")
        if self in _counting:
            _counting.remove(self)
        if not _counting:
            _state.flop_counter.active = None
        self.mode = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return False

    def _count_flops(self, func_packet, out, args, kwargs):
        formula = self.flop_registry.get(func_packet)
        if formula is not None:
            flops = formula(*args, **kwargs, out_val=out)
            for parent in set(self.mod_tracker.parents):
                self.flop_counts[parent][func_packet] += flops
        return out
