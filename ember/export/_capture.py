"""`export()`: the fx Tracer run on the example inputs (every op also computed on them), then
parameters, buffers and constant tensors lifted from `get_attr` nodes to leading inputs."""
import inspect

from ..fx._symbolic_trace import Tracer
from ..fx.graph_module import GraphModule
from ..nn.modules.module import Module
from ._program import (ExportedProgram, ExportGraphSignature, InputKind, InputSpec,
                       OutputKind, OutputSpec, TensorArgument)

__all__ = ["export"]


class _ExportTracer(Tracer):
    """Traces through every module (the graph holds functions) except the classes named in
    `leaf_names`; runs each op on the example values."""

    def __init__(self, leaf_names=(), dynamic=frozenset()):
        super().__init__()
        self.concrete, self.dynamic = True, dynamic
        self.leaf_names = tuple(leaf_names)

    def is_leaf_module(self, m, module_qualified_name):
        return type(m).__name__ in self.leaf_names and m is not self.root


def _example_list(mod, args, kwargs):
    sig = inspect.signature(type(mod).forward)
    bound = sig.bind(mod, *args, **(kwargs or {}))
    bound.apply_defaults()
    return [v for k, v in list(bound.arguments.items())[1:]]


def _dynamic_sizes(dynamic_shapes, mod, examples):
    """The example sizes of the dims `dynamic_shapes` declares dynamic. A size of a traced
    tensor equal to one of them is read at run time (a `size` node); any other size is a
    constant of the graph. (Reading a size that happens to be equal but static costs a node and
    stays right; a size computed from a dynamic one the trace recorded as arithmetic.)"""
    if not dynamic_shapes:
        return frozenset()
    names = list(inspect.signature(type(mod).forward).parameters)[1:]
    if isinstance(dynamic_shapes, dict):
        pairs = [(examples[names.index(k)] if k in names else None, v)
                 for k, v in dynamic_shapes.items()]
    else:
        pairs = list(zip(examples, dynamic_shapes))
    sizes = set()
    for example, spec in pairs:
        if spec is None or not hasattr(example, "shape"):
            continue
        items = spec.items() if isinstance(spec, dict) else enumerate(spec)
        for dim, d in items:
            if d is not None:
                sizes.add(int(example.shape[dim]))
    return frozenset(sizes)


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
           preserve_module_call_signature=(), _leaf_modules=()):
    """Capture `mod(*args, **kwargs)` as an ExportedProgram. Shape-based Python control
    flow follows the example; with `dynamic_shapes`, sizes are read from the inputs at run
    time (size nodes) rather than baked into the graph."""
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got "
                         f"{type(mod)}.")
    if not isinstance(args, tuple):
        raise ValueError(f"Expecting `args` to be a tuple of example positional inputs, got "
                         f"{type(args)}")
    examples = _example_list(mod, args, kwargs)
    tracer = _ExportTracer(_leaf_modules, dynamic=_dynamic_sizes(dynamic_shapes, mod, examples))
    graph = tracer.trace(mod, example_inputs=examples)
    gm = GraphModule(mod, graph, type(mod).__name__)
    specs, state, constants = _lift(gm, mod, tracer)
    out = next(n for n in gm.graph.nodes if n.op == "output")
    outputs = []
    from ..fx.node import map_aggregate, Node
    map_aggregate(out.args[0], lambda a: outputs.append(a) if isinstance(a, Node) else None)
    output_specs = [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(n.name), None)
                    for n in outputs]
    gm.recompile()
    return ExportedProgram(gm, ExportGraphSignature(specs, output_specs), state, constants,
                           example_inputs=(args, kwargs or {}))


def _lift(gm, mod, tracer):
    """Turn the get_attr nodes of tensors into placeholders ahead of the user inputs."""
    params = dict(mod.named_parameters())
    buffers = dict(mod.named_buffers())
    graph = gm.graph
    user = [n for n in graph.nodes if n.op == "placeholder"]
    first = user[0] if user else next(iter(graph.nodes))
    lifted = {InputKind.PARAMETER: [], InputKind.BUFFER: [], InputKind.CONSTANT_TENSOR: []}
    state, constants = {}, {}
    for node in list(graph.nodes):
        if node.op != "get_attr":
            continue
        target = node.target
        if target in params:
            kind, prefix, state[target] = InputKind.PARAMETER, "p_", params[target]
        elif target in buffers:
            kind, prefix, state[target] = InputKind.BUFFER, "b_", buffers[target]
        else:
            value = tracer._tensor_constants.get(target)
            if value is None:
                continue  # a submodule or other attribute: stays a get_attr
            kind, prefix, constants[target] = InputKind.CONSTANT_TENSOR, "c_", value
        with graph.inserting_before(first):
            ph = graph.placeholder(prefix + target.replace(".", "_"))
        ph.meta = dict(node.meta)
        node.replace_all_uses_with(ph)
        graph.erase_node(node)
        lifted[kind].append((ph, target))
    # the order PyTorch uses: parameters, buffers, constants, then user inputs
    order = [ph for kind in lifted.values() for ph, _ in kind]
    for ph in order:
        first.prepend(ph)
    specs = [InputSpec(kind, TensorArgument(ph.name), target,
                       True if kind == InputKind.BUFFER else None)
             for kind, items in lifted.items() for ph, target in items]
    specs += [InputSpec(InputKind.USER_INPUT, TensorArgument(n.name), None) for n in user]
    for name in list(tracer._tensor_constants):
        if hasattr(gm, name):
            delattr(gm, name)
    return specs, state, constants
