"""`torch.onnx.export`: the model is captured by `ember.export` (the fx tracer run on the
example inputs, so every node carries its example value), then each node is lowered to ONNX
operators by the `_lower_*` tables, parameters and buffers becoming initializers."""
import contextlib
import operator
import os

from .._tensor import Tensor
from ._builder import GraphBuilder, Value
from ._lower_math import LOWERINGS
from ._lower_nn import MODULE_LOWERINGS  # (and, through it, the shape lowerings)
from .errors import OnnxExporterError, UnsupportedOperatorError

__all__ = ["export_model", "is_in_onnx_export", "MIN_OPSET", "MAX_OPSET", "DEFAULT_OPSET"]

MIN_OPSET, MAX_OPSET, DEFAULT_OPSET = 17, 23, 20
_exporting = [0]

# Python operators a traced graph calls, by the name of the op they are
_OPERATORS = {operator.add: "add", operator.sub: "sub", operator.mul: "mul",
              operator.truediv: "div", operator.floordiv: "floor_divide",
              operator.mod: "remainder", operator.pow: "pow", operator.matmul: "matmul",
              operator.neg: "neg", operator.getitem: "getitem", operator.eq: "eq",
              operator.ne: "ne", operator.lt: "lt", operator.le: "le", operator.gt: "gt",
              operator.ge: "ge", operator.and_: "logical_and", operator.or_: "logical_or",
              operator.xor: "logical_xor", operator.invert: "logical_not",
              operator.iadd: "add", operator.imul: "mul", operator.isub: "sub",
              getattr: "getattr"}


def is_in_onnx_export():
    """True while `torch.onnx.export` captures a model."""
    return _exporting[0] > 0


@contextlib.contextmanager
def _in_export():
    _exporting[0] += 1
    try:
        yield
    finally:
        _exporting[0] -= 1


def _op_name(node):
    if node.op == "call_method":
        return node.target
    target = node.target
    if target in _OPERATORS:
        return _OPERATORS[target]
    return getattr(target, "__name__", str(target))


def _example(val):
    """The shape/dtype description (a nameless Value) of a node's example value."""
    if isinstance(val, Tensor):
        return Value(None, tuple(val.shape), val.dtype)
    if isinstance(val, (tuple, list)):
        return tuple(_example(v) for v in val)
    if isinstance(val, bool):
        from .. import dtypes
        return Value(None, (), dtypes.bool)
    if isinstance(val, int):
        from .. import dtypes
        return Value(None, (), dtypes.int64)
    return val


def _annotate(result, example):
    """Give the lowering's result Values the example's shape and dtype."""
    if isinstance(result, Value) and isinstance(example, Value):
        if result.shape is None or result.dtype is None:
            result.shape, result.dtype = example.shape, example.dtype
    elif isinstance(result, (tuple, list)) and isinstance(example, (tuple, list)):
        for r, e in zip(result, example):
            _annotate(r, e)


def _map(obj, env):
    """Node arguments with graph nodes replaced by their ONNX Values (or Python values)."""
    from ..fx import Node
    if isinstance(obj, Node):
        return env[obj]
    if isinstance(obj, (list, tuple)):
        mapped = [_map(o, env) for o in obj]
        return type(obj)(mapped) if not hasattr(obj, "_fields") else type(obj)(*mapped)
    if isinstance(obj, dict):
        return {k: _map(v, env) for k, v in obj.items()}
    return obj


def lower_graph(g, graph_module, env, user_inputs):
    """Lower every node of `graph_module` into `g`; `env` maps placeholder nodes to Values
    (parameters and buffers already there); `user_inputs` the placeholders left, in order.
    Returns the output Values."""
    inputs = iter(user_inputs)
    for node in graph_module.graph.nodes:
        example = _example(node.meta.get("val"))
        if node.op == "placeholder":
            if node not in env:  # a constant input (a number...) is no ONNX input: baked in
                env[node] = next(inputs) if isinstance(node.meta.get("val"), Tensor) \
                    or "val" not in node.meta else node.meta["val"]
            continue
        if node.op == "get_attr":
            owner, name = graph_module, node.target
            for part in name.split("."):
                owner = getattr(owner, part)
            env[node] = g.add_parameter(name, owner.detach().cpu().numpy()) \
                if isinstance(owner, Tensor) else owner
            continue
        if node.op == "output":
            return _map(node.args[0], env)
        args, kwargs = _map(node.args, env), _map(node.kwargs, env)
        if node.op == "call_module":
            module = graph_module.get_submodule(node.target)
            kind = type(module).__name__
            fn = MODULE_LOWERINGS.get(kind)
            if fn is None:
                raise UnsupportedOperatorError(f"aten::{kind}", g.opset, None)
            g.current = kind
            result = fn(g, example, module, *args, **kwargs)
        else:
            name = _op_name(node)
            fn = LOWERINGS.get(name)
            if fn is None:
                raise UnsupportedOperatorError(f"aten::{name}", g.opset, None)
            g.current = name
            result = fn(g, example, *args, **kwargs)
        _annotate(result, example)
        env[node] = result
    raise OnnxExporterError("the captured graph has no output")


def _flat_values(obj):
    if isinstance(obj, Value):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [v for o in obj for v in _flat_values(o)]
    if isinstance(obj, dict):
        return [v for o in obj.values() for v in _flat_values(o)]
    if obj is None:
        return []
    raise OnnxExporterError(f"the model returns a {type(obj).__name__}; ONNX outputs are "
                            "tensors")


def _flat_tensors(obj):
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _flat_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _flat_tensors(o)]
    return []


def export_model(model, args, f, kwargs=None, input_names=None, output_names=None,
                 opset_version=None, dynamic_axes=None, export_params=True,
                 do_constant_folding=True, training=None):
    """Capture `model` on `args`, lower it and write the ONNX model to `f` (a path or a
    binary file); returns the onnx.ModelProto."""
    from ..export import export as capture
    from ..nn.modules.module import Module
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise ValueError(f"Unsupported ONNX opset version: {opset}. ember's exporter writes "
                         f"opsets {MIN_OPSET} to {MAX_OPSET}")
    if not isinstance(args, tuple):
        args = (args,)
    if not isinstance(model, Module):
        raise TypeError(f"torch.onnx.export expects an nn.Module, got {type(model).__name__}")
    with _in_export(), _eval_mode(model, training):
        flat_args = _flat_tensors(list(args) + list((kwargs or {}).values()))
        names = list(input_names or [])
        dynamic = None
        if dynamic_axes:  # those sizes are then read from the inputs at run time
            from ..export import Dim
            dynamic = tuple(
                {axis: Dim(label) for axis, label in _axes_for(
                    dynamic_axes, names[i] if i < len(names) else None, i, a.dim())} or None
                for i, a in enumerate(args))
        program = capture(model, tuple(args), kwargs, dynamic_shapes=dynamic,
                          _leaf_modules=tuple(MODULE_LOWERINGS))
        g = GraphBuilder(opset)
        user = []
        for i, t in enumerate(flat_args):
            name = names[i] if i < len(names) else f"input_{i}" if i else "input"
            shape = list(t.shape)
            for axis, label in _axes_for(dynamic_axes, name, i, len(shape)):
                shape[axis] = label
            user.append(g.add_input(name, shape, t.dtype))
        env = _lifted(g, program)
        outputs = lower_graph(g, program.graph_module, env, user)
        outs = _flat_values(outputs)
        examples = _flat_tensors(program.module()(*args, **(kwargs or {})))
        names = list(output_names or [])
        for i, (v, t) in enumerate(zip(outs, examples)):
            final = names[i] if i < len(names) else f"output_{i}" if i else "output"
            shape = list(t.shape)
            for axis, label in _axes_for(dynamic_axes, final, None, len(shape)):
                shape[axis] = label
            g.outputs.append(_rename(g, v, final, shape, t.dtype))
        model_proto = g.model()
    if not export_params:
        del model_proto.graph.initializer[:]
    _write(model_proto, f)
    return model_proto


def _lifted(g, program):
    """The placeholders the capture lifted (parameters, buffers, constant tensors) as
    initializers named after their targets."""
    by_name = {n.name: n for n in program.graph_module.graph.nodes if n.op == "placeholder"}
    env = {}
    for spec in program.graph_signature.input_specs:
        if spec.target is None:  # a user input
            continue
        store = program.state_dict if spec.target in program.state_dict else program.constants
        env[by_name[spec.arg.name]] = g.add_parameter(spec.target,
                                                      store[spec.target].detach().cpu().numpy())
    return env


def _rename(g, v, name, shape, dtype):
    out = Value(name, tuple(shape), dtype)
    g._used.add(name)
    g.nodes.append(__import__("onnx").helper.make_node("Identity", [v.name], [name],
                                                       name=g.fresh("n_output")))
    return out


def _axes_for(dynamic_axes, name, index, rank):
    """(axis, label) pairs `dynamic_axes` gives the input or output `name`."""
    if not dynamic_axes or name not in dynamic_axes:
        return []
    spec = dynamic_axes[name]
    if isinstance(spec, dict):
        return [(a + rank if a < 0 else a, str(label)) for a, label in spec.items()]
    return [(a + rank if a < 0 else a, f"{name}_dynamic_axes_{k + 1}")
            for k, a in enumerate(spec)]


@contextlib.contextmanager
def _eval_mode(model, training):
    """Export in evaluation mode unless asked otherwise (PyTorch's TrainingMode.EVAL)."""
    from . import TrainingMode
    was = model.training
    if training in (None, TrainingMode.EVAL):
        model.train(False)
    elif training == TrainingMode.TRAINING:
        model.train(True)
    try:
        yield
    finally:
        model.train(was)


def _write(model_proto, f):
    if f is None:
        return
    data = model_proto.SerializeToString()
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        f.write(data)
