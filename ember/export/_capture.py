"""`export()`: the fx Tracer run on the example inputs (every op also computed on them), then
parameters, buffers and constant tensors lifted from `get_attr` nodes to leading inputs."""
import inspect

from ..fx._symbolic_trace import Tracer
from ..fx.graph_module import GraphModule
from ..nn.modules.module import Module
from . import _inputs
from .._tensor import Tensor
from ._program import (ConstantArgument, ExportedProgram, ExportGraphSignature, InputKind,
                       InputSpec, OutputKind, OutputSpec, TensorArgument)

__all__ = ["export"]


class _ExportTracer(Tracer):
    """Traces through every module (the graph holds functions) except the classes named in
    `leaf_names`; runs each op on the example values."""

    def __init__(self, leaf_names=(), dynamic=frozenset()):
        super().__init__()
        self.concrete, self.dynamic = True, dynamic
        self.leaf_names = tuple(leaf_names)
        self.input_structures = {}  # argument name -> its structure (_inputs)
        self.given = set()  # the names of the arguments the call passed

    def is_leaf_module(self, m, module_qualified_name):
        return type(m).__name__ in self.leaf_names and m is not self.root

    def _non_tensor_input(self, name, value):
        """As PyTorch's export: a tuple, list or dict is one graph input per leaf (`hidden` =
        (h, c): `hidden_0`, `hidden_1`); a leaf that is no tensor is a constant of the graph,
        yet an input too (unused by the graph, checked by `module()`)."""
        if name not in self.given:  # a default the call left alone is no input
            return value
        structure = _inputs.describe(value)
        self.input_structures[name] = structure
        names = {path: leaf for leaf, path, _ in _inputs.leaves(structure, name)}

        def placeholder(path, leaf_structure):
            leaf = value
            for key in path:
                leaf = leaf[key]
            node = self.create_node("placeholder", names[path], (), {})
            node.meta["val"] = leaf
            return self.proxy(node) if leaf_structure == "tensor" else leaf
        return _inputs.build(structure, placeholder)


def _example_list(mod, args, kwargs):
    """Every forward argument's example value (defaults filled in), and the names passed."""
    sig = inspect.signature(type(mod).forward)
    bound = sig.bind(mod, *args, **(kwargs or {}))
    given = set(list(bound.arguments)[1:])
    bound.apply_defaults()
    return [v for k, v in list(bound.arguments.items())[1:]], given


def _declared_dims(dynamic_shapes, mod, examples):
    """(input name or position, example tensor, dim, Dim) for each dim `dynamic_shapes`
    declares dynamic."""
    if not dynamic_shapes:
        return []
    names = list(inspect.signature(type(mod).forward).parameters)[1:]
    if isinstance(dynamic_shapes, dict):
        pairs = [(k, examples[names.index(k)] if k in names else None, v)
                 for k, v in dynamic_shapes.items()]
    else:
        pairs = [(names[i] if i < len(names) else i, example, spec)
                 for i, (example, spec) in enumerate(zip(examples, dynamic_shapes))]
    found = []
    for name, example, spec in pairs:
        if spec is None or not hasattr(example, "shape"):
            continue
        items = spec.items() if isinstance(spec, dict) else enumerate(spec)
        found += [(name, example, dim, d) for dim, d in items if d is not None]
    return found


def _dynamic_sizes(declared):
    """The example sizes of the dims declared dynamic. A size of a traced tensor equal to one
    of them is read at run time (a `size` node); any other size is a constant of the graph.
    (Reading a size that happens to be equal but static costs a node and stays right; a size
    computed from a dynamic one the trace recorded as arithmetic.)"""
    return frozenset(int(example.shape[dim]) for _, example, dim, _ in declared)


class ConstraintViolationError(RuntimeError):
    """An example input outside the range its `Dim` declares (PyTorch raises this class, of
    torch.fx.experimental.symbolic_shapes, a RuntimeError)."""


def _check_ranges(declared):
    for name, example, dim, d in declared:
        size = int(example.shape[dim])
        low = getattr(d, "min", None)
        high = getattr(d, "max", None)
        if (low is not None and size < low) or (high is not None and size > high):
            shown_high = "int_oo" if high is None else high
            raise ConstraintViolationError(
                f"{size} not in range [{2 if low is None else low}, {shown_high}] "
                f"(size of dim {dim} of input {name!r}, declared {d!r})")


def _snapshot_state(mod):
    """The example run computes every op for real, so a module that updates its buffers in
    forward (BatchNorm in training) would change the model; PyTorch's export leaves it as it
    was. Kept: a copy of each parameter and buffer, put back after the trace."""
    return [(t, t.detach().clone())
            for t in [*mod.parameters(), *mod.buffers()]]


def _restore_state(saved):
    from ..autograd import no_grad
    with no_grad():
        for tensor, copy in saved:
            tensor.copy_(copy)


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
    examples, given = _example_list(mod, args, kwargs)
    declared = _declared_dims(dynamic_shapes, mod, examples)
    _check_ranges(declared)
    tracer = _ExportTracer(_leaf_modules, dynamic=_dynamic_sizes(declared))
    tracer.given = given
    saved = _snapshot_state(mod)
    try:
        graph = tracer.trace(mod, example_inputs=examples)
    finally:
        _restore_state(saved)
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
                           example_inputs=(args, kwargs or {}),
                           input_structures=tracer.input_structures,
                           input_sizes=_input_sizes(gm, specs, declared))


def _input_sizes(gm, specs, declared):
    """Each tensor user input's sizes as the program was specialized on them: the example's,
    with None for a dim declared dynamic (PyTorch's module() guards the others)."""
    dynamic = {(id(example), dim) for _, example, dim, _ in declared}
    users = {s.arg.name for s in specs if s.kind == InputKind.USER_INPUT}
    sizes = {}
    for node in gm.graph.nodes:
        value = node.meta.get("val")
        if node.op == "placeholder" and node.name in users and isinstance(value, Tensor):
            sizes[node.name] = [None if (id(value), d) in dynamic else int(n)
                                for d, n in enumerate(value.shape)]
    return sizes


def _lift(gm, mod, tracer):
    """Turn the get_attr nodes of tensors into placeholders ahead of the user inputs. As
    PyTorch does, every parameter and buffer of the model is lifted (an unused one too), in
    the model's own order: parameters, buffers, then constants; a non-persistent buffer's value
    goes with the constants (it is not in the state_dict)."""
    params = dict(mod.named_parameters())
    buffers = dict(mod.named_buffers())
    persistent = set(mod.state_dict(keep_vars=True))
    graph = gm.graph
    user = [n for n in graph.nodes if n.op == "placeholder"]
    first = user[0] if user else next(iter(graph.nodes))
    reads = {}
    for node in list(graph.nodes):
        if node.op == "get_attr":
            reads.setdefault(node.target, []).append(node)
    state, constants = {}, {}
    order = [(InputKind.PARAMETER, "p_", name, value) for name, value in params.items()]
    order += [(InputKind.BUFFER, "b_", name, value) for name, value in buffers.items()]
    order += [(InputKind.CONSTANT_TENSOR, "c_", name, tracer._tensor_constants[name])
              for name in reads if name not in params and name not in buffers
              and tracer._tensor_constants.get(name) is not None]
    specs = []
    for kind, prefix, target, value in order:
        with graph.inserting_before(first):
            ph = graph.placeholder(prefix + target.replace(".", "_"))
        for node in reads.get(target, ()):
            ph.meta.update(node.meta)
            node.replace_all_uses_with(ph)
            graph.erase_node(node)
        if "val" not in ph.meta:
            ph.meta["val"] = value
        keep = None
        if kind == InputKind.BUFFER:
            keep = target in persistent
        if kind == InputKind.CONSTANT_TENSOR or keep is False:
            constants[target] = value
        else:
            state[target] = value
        specs.append(InputSpec(kind, TensorArgument(ph.name), target, keep))
    specs += [InputSpec(InputKind.USER_INPUT, TensorArgument(n.name)
                        if isinstance(n.meta.get("val"), Tensor) or "val" not in n.meta
                        else ConstantArgument(n.name, n.meta["val"]), None) for n in user]
    for name in list(tracer._tensor_constants):
        if hasattr(gm, name):
            delattr(gm, name)
    return specs, state, constants
