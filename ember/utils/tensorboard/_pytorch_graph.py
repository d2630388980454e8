"""`SummaryWriter.add_graph`'s graph: the model run once on the example inputs under the
exporting fx tracer (every op recorded with its example value), written as the GraphDef that
TensorBoard's graph plugin draws and PyTorch writes: a node per op named by its module scope
(`Net/Linear[fc1]/linear`), typed `aten::<op>`, with its output shapes; the parameters as
`prim::GetAttr` nodes in their modules' scopes; the inputs and outputs as `IO Node`s."""
import warnings

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ..._tensor import Tensor
from ...export._capture import _example_list, _ExportTracer
from ...fx.node import Node

__all__ = ["graph"]


class _ScopeTracer(_ExportTracer):
    """Traces through every module, and stamps each node with the modules it was made in."""

    def __init__(self):
        super().__init__()
        self.scope = []  # (path, class name) of each module being run, outermost first

    def call_module(self, m, forward, args, kwargs):
        try:
            path = self.path_of_module(m)
        except NameError:
            return super().call_module(m, forward, args, kwargs)
        self.scope.append((path, type(m).__name__))
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.scope.pop()

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        node.meta["scope"] = tuple(self.scope)
        return node

    # As PyTorch's trace, a value read from a traced tensor follows the example (the graph
    # holds the branch it took), with PyTorch's warning; an export refuses it instead.
    def to_bool(self, proxy):
        _warn("boolean")
        return bool(proxy.node.meta["val"])

    def call_method(self, name, args, kwargs):
        if name in ("item", "tolist", "__bool__"):
            _warn("boolean" if name == "__bool__" else "number")
            return getattr(args[0].node.meta["val"], name)(*args[1:], **kwargs)
        return super().call_method(name, args, kwargs)


def _warn(kind):
    from ...jit import TracerWarning
    warnings.warn(f"Converting a tensor to a Python {kind} might cause the trace to be "
                  "incorrect. We can't record the data flow of Python values, so this value "
                  "will be treated as a constant in the future. This means that the trace "
                  "might not generalize to other inputs!", TracerWarning, stacklevel=3)


def _scope_name(root, scope):
    """`Net/Sequential[features]/Conv2d[0]`: the root's class, then each module's class and
    attribute name, as PyTorch names a scope."""
    return "/".join([root] + [f"{kind}[{path.rsplit('.', 1)[-1]}]" for path, kind in scope
                              if path])


def _shapes(value):
    """The output shapes of a node's example value (a tensor, or a tuple of them)."""
    values = value if isinstance(value, (tuple, list)) else (value,)
    return [TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(n)) for n in v.shape])
            for v in values if isinstance(v, Tensor)]


def _node(name, op, inputs, attr, shapes=None):
    attrs = {"attr": AttrValue(s=attr.encode())}
    if shapes:
        attrs["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=shapes))
    return NodeDef(name=name, op=op, input=inputs, attr=attrs)


def _graph_def(traced, root):
    names, nodes = {}, []

    def inputs_of(node):
        found = []

        def visit(a):
            if isinstance(a, Node):
                found.append(names[a])
            elif isinstance(a, (tuple, list)):
                for x in a:
                    visit(x)
            elif isinstance(a, dict):
                for x in a.values():
                    visit(x)
        visit(node.args)
        visit(node.kwargs)
        return [n for n in found if n is not None]

    for node in traced.nodes:
        scope = _scope_name(root, node.meta.get("scope", ()))
        value = node.meta.get("val")
        if node.op == "placeholder":
            names[node] = f"input/{node.name}" if isinstance(value, Tensor) else None
            if names[node]:
                nodes.append(_node(names[node], "IO Node", [], "", _shapes(value)))
        elif node.op == "get_attr":
            names[node] = f"{scope}/{node.name}"
            leaf = node.target.rsplit(".", 1)[-1]
            nodes.append(_node(names[node], "prim::GetAttr", [], f"{{ name :  {leaf} }}"))
        elif node.op == "output":
            nodes.append(_node("output/output.1", "IO Node", inputs_of(node), "",
                               _shapes(value)))
        else:
            target = node.target if isinstance(node.target, str) else \
                getattr(node.target, "__name__", str(node.target))
            names[node] = f"{scope}/{node.name}"
            nodes.append(_node(names[node], f"aten::{target.strip('_')}", inputs_of(node), "{}",
                               _shapes(value)))
    return GraphDef(node=nodes, versions=VersionDef(producer=22))


def graph(model, args, verbose=False, use_strict_trace=True):
    """(GraphDef, RunMetadata) of `model` run on `args` (a tensor, or a tuple or list of the
    forward's arguments), in eval mode as PyTorch traces it. `verbose` prints the traced
    graph. `use_strict_trace` is accepted for PyTorch's signature: ember's trace records
    containers as they are."""
    if isinstance(args, Tensor):
        args = (args,)
    elif args is None:
        args = ()
    training = model.training
    model.eval()
    try:
        examples, given = _example_list(model, tuple(args), {})
        tracer = _ScopeTracer()
        tracer.given = given
        traced = tracer.trace(model, example_inputs=examples)
        traced.eliminate_dead_code()  # as PyTorch's traced graph: what the outputs need
    except Exception:
        print("Error occurs, No graph saved")
        raise
    finally:
        model.train(training)
    if verbose:
        print(traced)
    stats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return _graph_def(traced, type(model).__name__), stats
