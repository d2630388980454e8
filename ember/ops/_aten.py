"""PyTorch's ATen operators as ember names them: `ember.ops.aten` (`torch.ops.aten` under
compat), whose `aten.mm` packet and `aten.mm.default` overload stand for ember's own `mm`.

Selective activation checkpointing names ops this way (a policy sees `aten.mm.default`), so
`TABLE` also says which of ember's graph nodes each overload records: `overload_of_node`
answers, for a node class `record` is making, which overload that op call is. The table is
the one place that knows the correspondence; an op missing from it is simply not one the
policy can name.
"""
import importlib
import math

from .. import dtypes as _dt
from . import _custom

__all__ = ["OpOverload", "OpOverloadPacket", "TABLE", "overload_of_node", "IGNORED"]


class OpOverload:
    """One overload of an operator (`aten.mm.default`, `aten.add.Tensor`): callable, it runs
    the ember op it stands for."""

    def __init__(self, packet, overload, function):
        self.overloadpacket = packet
        self._overloadname = overload
        self._function = function

    @property
    def namespace(self):
        return self.overloadpacket.namespace

    @property
    def _opname(self):
        return self.overloadpacket._opname

    @property
    def __name__(self):
        return f"{self._opname}.{self._overloadname}"

    def name(self):
        suffix = "" if self._overloadname == "default" else "." + self._overloadname
        return f"{self.namespace}::{self._opname}{suffix}"

    def _resolved(self):
        """The ember function this overload runs (an op named in the table is looked up in
        the ops package, which is still loading when the table is built)."""
        function = self._function
        if isinstance(function, str):
            ops = importlib.import_module("ember.ops")
            found = getattr(ops, function, None)
            function = self._function = found if found is not None \
                else ops.functional_op(function)
        return function

    def __call__(self, *args, **kwargs):
        return self._resolved()(*args, **kwargs)

    def __repr__(self):
        return (f"<OpOverload(op='{self.namespace}.{self._opname}', "
                f"overload='{self._overloadname}')>")

    def __str__(self):
        return f"{self.namespace}.{self._opname}.{self._overloadname}"


class OpOverloadPacket:
    """An operator with all its overloads (`aten.add`: `.Tensor`, `.Scalar`); called, it
    runs its first overload (ember's op takes every form the overloads split between them)."""

    def __init__(self, namespace, name):
        self.namespace = namespace
        self._opname = name
        self._overloads = {}

    @property
    def __name__(self):
        return self._opname

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, overload):
        found = self.__dict__["_overloads"].get(overload)
        if found is None:
            raise AttributeError(f"The underlying op of '{self}' has no overload name "
                                 f"'{overload}'")
        return found

    def __call__(self, *args, **kwargs):
        return next(iter(self._overloads.values()))(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self.namespace}.{self._opname}')>"

    def __str__(self):
        return f"{self.namespace}.{self._opname}"


def _softmax(self, dim, half_to_float):
    return importlib.import_module("ember.ops").softmax(self, dim)


def _log_softmax(self, dim, half_to_float):
    return importlib.import_module("ember.ops").log_softmax(self, dim)


def _slice(self, dim=0, start=None, end=None, step=1):
    index = [slice(None)] * self.ndim
    index[dim] = slice(start, end, step)
    return self[tuple(index)]


def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    return self.to(device=device, dtype=dtype, non_blocking=non_blocking, copy=True)


def _sdpa_flash_for_cpu(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None,
                        scale=None):
    """(attention output, logsumexp of each query's scaled scores): the form PyTorch's CPU
    attention kernel returns."""
    ops = importlib.import_module("ember.ops")
    output = ops.functional_op("scaled_dot_product_attention")(
        query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
        scale=scale)
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = ops.matmul(query, key.transpose(-2, -1)) * factor
    if is_causal:
        attn_mask = ops.ones(scores.shape[-2:], dtype=_dt.bool, device=scores.device).tril()
    if attn_mask is not None:
        scores = (scores.masked_fill(attn_mask.logical_not(), float("-inf"))
                  if attn_mask.dtype is _dt.bool else scores + attn_mask)
    return output, ops.logsumexp(scores, -1)


def _convolution_backward(*args, **kwargs):
    conv = importlib.import_module("ember.ops.conv._graph_ops")
    return conv.convolution_backward(*args, **kwargs)


def _method(name):
    """The Tensor method `name` as an op taking the tensor first."""
    return lambda self, *args, **kwargs: getattr(self, name)(*args, **kwargs)


# (namespace.op.overload, the ember op it runs (a name in ember.ops or a function), the
# graph nodes (class names, PyTorch's grad_fn names) that record a call of it). A node is
# listed under one overload only. ember records a batched matmul as one MatmulBackward0
# where PyTorch's ATen runs expand, view and bmm: it is reported as the bmm.
TABLE = (
    # matrix products and convolution
    ("aten.mm.default", "mm", ("MmBackward0",)),
    ("aten.addmm.default", "addmm", ("AddmmBackward0",)),
    ("aten.bmm.default", "bmm", ("BmmBackward0", "MatmulBackward0")),
    ("aten.baddbmm.default", "baddbmm", ("BaddbmmBackward0",)),
    ("aten.addbmm.default", "addbmm", ("AddbmmBackward0",)),
    ("aten.mv.default", "mv", ("MvBackward0",)),
    ("aten.addmv.default", "addmv", ("AddmvBackward0",)),
    ("aten.dot.default", "dot", ("DotBackward0",)),
    ("aten.convolution.default", "convolution", ("ConvolutionBackward0",)),
    ("aten.convolution_backward.default", _convolution_backward, ()),
    # activations
    ("aten.relu.default", "relu", ("ReluBackward0",)),
    ("aten.threshold.default", "threshold", ("ThresholdBackward0",)),
    ("aten.gelu.default", "gelu", ("GeluBackward0",)),
    ("aten.silu.default", "silu", ("SiluBackward0",)),
    ("aten.sigmoid.default", "sigmoid", ("SigmoidBackward0",)),
    ("aten.tanh.default", "tanh", ("TanhBackward0",)),
    ("aten.leaky_relu.default", "leaky_relu", ("LeakyReluBackward0",)),
    ("aten.elu.default", "elu", ("EluBackward0",)),
    ("aten.hardtanh.default", "hardtanh", ("HardtanhBackward0",)),
    ("aten.softplus.default", "softplus", ("SoftplusBackward0",)),
    ("aten.mish.default", "mish", ("MishBackward0",)),
    ("aten._softmax.default", _softmax, ("SoftmaxBackward0",)),
    ("aten._log_softmax.default", _log_softmax, ("LogSoftmaxBackward0",)),
    # normalisation, embedding, dropout (ember's dropout records the mul by its mask)
    ("aten.native_layer_norm.default", "native_layer_norm", ("NativeLayerNormBackward0",)),
    ("aten.native_batch_norm.default", "native_batch_norm", ("NativeBatchNormBackward0",)),
    ("aten.native_group_norm.default", "native_group_norm", ("NativeGroupNormBackward0",)),
    ("aten.embedding.default", "embedding", ("EmbeddingBackward0",)),
    ("aten.native_dropout.default", "native_dropout", ()),
    # ember's attention records its products and softmax, each reported as itself
    ("aten.scaled_dot_product_attention.default", "scaled_dot_product_attention", ()),
    ("aten._scaled_dot_product_flash_attention_for_cpu.default", _sdpa_flash_for_cpu, ()),
    # pointwise arithmetic and math
    ("aten.add.Tensor", "add", ("AddBackward0",)),
    ("aten.sub.Tensor", "sub", ("SubBackward0",)),
    ("aten.rsub.Tensor", "rsub", ("RsubBackward0",)),
    ("aten.mul.Tensor", "mul", ("MulBackward0",)),
    ("aten.div.Tensor", "div", ("DivBackward0",)),
    ("aten.neg.default", "neg", ("NegBackward0",)),
    ("aten.pow.Tensor_Scalar", "pow", ("PowBackward0",)),
    ("aten.pow.Tensor_Tensor", "pow", ("PowBackward1",)),
    ("aten.exp.default", "exp", ("ExpBackward0",)),
    ("aten.log.default", "log", ("LogBackward0",)),
    ("aten.sqrt.default", "sqrt", ("SqrtBackward0",)),
    ("aten.rsqrt.default", "rsqrt", ("RsqrtBackward0",)),
    ("aten.abs.default", "abs", ("AbsBackward0",)),
    ("aten.sin.default", "sin", ("SinBackward0",)),
    ("aten.cos.default", "cos", ("CosBackward0",)),
    ("aten.erf.default", "erf", ("ErfBackward0",)),
    ("aten.where.self", "where", ("WhereBackward0",)),
    ("aten.maximum.default", "maximum", ("MaximumBackward0",)),
    ("aten.minimum.default", "minimum", ("MinimumBackward0",)),
    ("aten.clone.default", "clone", ("CloneBackward0",)),
    ("aten._to_copy.default", _to_copy, ("ToCopyBackward0",)),
    # reductions
    ("aten.sum.default", "sum", ("SumBackward0",)),
    ("aten.sum.dim_IntList", "sum", ("SumBackward1",)),
    ("aten.mean.default", "mean", ("MeanBackward0",)),
    ("aten.mean.dim", "mean", ("MeanBackward1",)),
    ("aten.amax.default", "amax", ("AmaxBackward0",)),
    ("aten.max.default", "max", ("MaxBackward1",)),
    ("aten.max.dim", "max", ("MaxBackward0",)),
    ("aten.min.default", "min", ("MinBackward1",)),
    ("aten.min.dim", "min", ("MinBackward0",)),
    ("aten.logsumexp.default", "logsumexp", ("LogsumexpBackward0",)),
    # views and shapes
    ("aten.t.default", "t", ("TBackward0",)),
    ("aten.transpose.int", "transpose", ("TransposeBackward0",)),
    ("aten.permute.default", "permute", ("PermuteBackward0",)),
    ("aten.view.default", _method("view"), ("ViewBackward0",)),
    ("aten._unsafe_view.default", "reshape", ("UnsafeViewBackward0",)),
    ("aten.expand.default", _method("expand"), ("ExpandBackward0",)),
    ("aten.unsqueeze.default", "unsqueeze", ("UnsqueezeBackward0",)),
    ("aten.squeeze.dim", "squeeze", ("SqueezeBackward1",)),
    ("aten.select.int", "select", ("SelectBackward0",)),
    ("aten.slice.Tensor", _slice, ("SliceBackward0",)),
    ("aten.alias.default", lambda self: self.view_as(self), ("AliasBackward0",)),
    ("aten.cat.default", "cat", ("CatBackward0",)),
    ("aten.stack.default", "stack", ("StackBackward0",)),
    ("aten.split.Tensor", "split", ("SplitBackward0",)),
    # metadata and detach: no graph node; selective checkpointing passes them over
    ("aten.detach.default", _method("detach"), ()),
    ("aten.dim.default", _method("dim"), ()),
    ("aten.numel.default", _method("numel"), ()),
    ("aten.sym_numel.default", _method("numel"), ()),
    ("aten.size.default", _method("size"), ()),
    ("aten.sym_size.default", _method("size"), ()),
    ("aten.stride.default", _method("stride"), ()),
    ("aten.sym_stride.default", _method("stride"), ()),
    ("aten.storage_offset.default", _method("storage_offset"), ()),
    ("aten.sym_storage_offset.default", _method("storage_offset"), ()),
    ("aten.is_contiguous.default", _method("is_contiguous"), ()),
    ("aten.is_contiguous.memory_format", _method("is_contiguous"), ()),
    ("prim.device.default", lambda self: self.device, ()),
)

_BY_NODE = {}


def _build():
    for qualified, function, nodes in TABLE:
        namespace_name, op_name, overload_name = qualified.split(".")
        namespace = _custom.namespace(namespace_name)
        packet = namespace._ops.get(op_name)
        if packet is None:
            packet = namespace._ops[op_name] = OpOverloadPacket(namespace_name, op_name)
        overload = packet._overloads[overload_name] = OpOverload(packet, overload_name, function)
        for node in nodes:
            if node in _BY_NODE:
                raise AssertionError(f"{node} is listed under two overloads")
            _BY_NODE[node] = overload


_build()


def overload_of_node(node_class):
    """The overload whose call records a `node_class` node, or None."""
    return _BY_NODE.get(node_class.__name__)


def _overload(qualified):
    namespace_name, op_name, overload_name = qualified.split(".")
    return _custom.NAMESPACES[namespace_name]._ops[op_name]._overloads[overload_name]


# PyTorch's SAC_IGNORED_OPS (detach, the metadata queries, prim.device), as far as ember has them
IGNORED = frozenset(_overload(q) for q in (
    "aten.detach.default", "aten.dim.default", "aten.numel.default", "aten.sym_numel.default",
    "aten.size.default", "aten.sym_size.default", "aten.stride.default",
    "aten.sym_stride.default", "aten.storage_offset.default", "aten.sym_storage_offset.default",
    "aten.is_contiguous.default", "aten.is_contiguous.memory_format", "prim.device.default"))
