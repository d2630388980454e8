"""What `torch.export.export` returns: the ExportedProgram, its graph signature, and `Dim`."""
import dataclasses
import enum

from ._inputs import guard_sizes, input_leaves, leaves

__all__ = ["Dim", "dims", "InputKind", "OutputKind", "TensorArgument", "ConstantArgument",
           "InputSpec", "OutputSpec", "ExportGraphSignature", "ExportedProgram"]


class _DimHint(enum.Enum):
    AUTO = "auto"
    STATIC = "static"
    DYNAMIC = "dynamic"


class Dim:
    """A named dynamic size for `dynamic_shapes` (`Dim("batch", min=1, max=1024)`)."""
    AUTO, STATIC, DYNAMIC = _DimHint.AUTO, _DimHint.STATIC, _DimHint.DYNAMIC

    def __init__(self, name, *, min=None, max=None):
        if min is not None and max is not None and min > max:
            raise ValueError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        self.__name__, self.min, self.max = name, min, max

    def __repr__(self):
        return f"Dim('{self.__name__}', min={self.min}, max={self.max})"


def dims(*names, min=None, max=None):
    """Several Dims with the same range at once: `batch, seq = dims("batch", "seq")`."""
    return tuple(Dim(name, min=min, max=max) for name in names)


class InputKind(enum.Enum):
    USER_INPUT = enum.auto()
    PARAMETER = enum.auto()
    BUFFER = enum.auto()
    CONSTANT_TENSOR = enum.auto()
    CUSTOM_OBJ = enum.auto()
    TOKEN = enum.auto()


class OutputKind(enum.Enum):
    USER_OUTPUT = enum.auto()
    LOSS_OUTPUT = enum.auto()
    BUFFER_MUTATION = enum.auto()
    GRADIENT_TO_PARAMETER = enum.auto()
    GRADIENT_TO_USER_INPUT = enum.auto()
    USER_INPUT_MUTATION = enum.auto()
    TOKEN = enum.auto()


@dataclasses.dataclass
class TensorArgument:
    name: str


@dataclasses.dataclass
class ConstantArgument:
    """An input of the graph that is no tensor (a number, a flag, None): the program was
    specialized on `value`."""
    name: str
    value: object


@dataclasses.dataclass
class InputSpec:
    kind: InputKind
    arg: TensorArgument
    target: object
    persistent: object = None


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: object
    target: object


@dataclasses.dataclass
class ExportGraphSignature:
    input_specs: list
    output_specs: list

    def _targets(self, kind):
        return [s.target for s in self.input_specs if s.kind == kind]

    @property
    def parameters(self):
        return self._targets(InputKind.PARAMETER)

    @property
    def buffers(self):
        return self._targets(InputKind.BUFFER)

    @property
    def lifted_tensor_constants(self):
        return self._targets(InputKind.CONSTANT_TENSOR)

    @property
    def user_inputs(self):
        return tuple(s.arg.value if isinstance(s.arg, ConstantArgument) else s.arg.name
                     for s in self.input_specs if s.kind == InputKind.USER_INPUT)

    @property
    def user_outputs(self):
        return tuple(getattr(s.arg, "name", s.arg) for s in self.output_specs)

    @property
    def inputs_to_parameters(self):
        return {s.arg.name: s.target for s in self.input_specs if s.kind == InputKind.PARAMETER}

    @property
    def inputs_to_buffers(self):
        return {s.arg.name: s.target for s in self.input_specs if s.kind == InputKind.BUFFER}


class ExportedProgram:
    """A captured program: a graph of functions with the model's parameters, buffers and
    constants lifted to inputs (`graph_signature` says which), and their values."""

    def __init__(self, graph_module, graph_signature, state_dict, constants,
                 example_inputs=None, range_constraints=None, input_structures=None,
                 input_sizes=None):
        self.graph_module, self.graph_signature = graph_module, graph_signature
        self.state_dict, self.constants = state_dict, constants
        self.example_inputs = example_inputs
        self.range_constraints = range_constraints or {}
        # argument name -> the tuple/list/dict structure its graph inputs came from (_inputs)
        self._input_structures = dict(input_structures or {})
        # tensor input name -> its sizes, None where dynamic: module() guards the others
        self._input_sizes = dict(input_sizes or {})

    @property
    def graph(self):
        return self.graph_module.graph

    def _lifted_values(self):
        values = []
        for spec in self.graph_signature.input_specs:
            if spec.kind == InputKind.USER_INPUT:
                continue
            in_constants = spec.kind == InputKind.CONSTANT_TENSOR or spec.persistent is False
            store = self.constants if in_constants else self.state_dict
            values.append(store[spec.target])
        return values

    def module(self):
        """The program as a GraphModule on the user inputs alone, as PyTorch unlifts it: the
        parameters and buffers live on it again (at their state_dict paths, so `state_dict()`,
        `parameters()` and fine-tuning work) and the graph reads them with get_attr nodes; a
        buffer the program updates in place (BatchNorm's statistics) is updated on it."""
        from ..fx.graph import Graph
        from ..fx.graph_module import GraphModule, _copy_attr
        from ..nn.modules.module import Module
        from ..nn.parameter import Parameter
        root = Module()
        for node in self.graph.nodes:  # modules kept whole (the ONNX exporter's LSTM)
            if node.op == "call_module":
                _copy_attr(self.graph_module, root, node.target)
        lifted = {}
        for spec in self.graph_signature.input_specs:
            if spec.kind == InputKind.USER_INPUT:
                continue
            in_constants = spec.kind == InputKind.CONSTANT_TENSOR or spec.persistent is False
            value = (self.constants if in_constants else self.state_dict)[spec.target]
            *path, field = spec.target.split(".")
            owner = root
            for item in path:
                if not hasattr(owner, item):
                    owner.add_module(item, Module())
                owner = getattr(owner, item)
            if spec.kind == InputKind.PARAMETER:
                owner.register_parameter(field, value if isinstance(value, Parameter)
                                         else Parameter(value))
            elif spec.kind == InputKind.BUFFER:
                owner.register_buffer(field, value, persistent=spec.persistent is not False)
            else:
                setattr(owner, field, value)
            lifted[spec.arg.name] = spec.target
        graph, env = Graph(), {}
        owner_of = {leaf: arg for arg, structure in self._input_structures.items()
                    for leaf, _, _ in leaves(structure, arg)}
        read = {}  # an argument's leaves, as nodes reading them from the argument
        for node in self.graph.nodes:
            if node.op == "placeholder" and node.name in lifted:
                env[node] = graph.get_attr(lifted[node.name])
                env[node].meta = dict(node.meta)
            elif node.op == "placeholder" and node.name in owner_of:
                arg = owner_of[node.name]
                if arg not in read:  # the argument itself is the input, flattened here
                    read[arg] = self._read_leaves(graph, arg)
                env[node] = read[arg][node.name]
                env[node].meta = dict(node.meta)
            else:
                env[node] = graph.node_copy(node, lambda n: env[n])
            if node.op == "placeholder" and node.name in self._input_sizes:
                graph.create_node("call_function", guard_sizes,
                                  (env[node], self._input_sizes[node.name], node.name), {},
                                  name=f"_guard_{node.name}")
        for node in list(graph.nodes):
            if node.op == "get_attr" and not node.users:
                graph.erase_node(node)
        gm = GraphModule(root, graph, type(self.graph_module).__name__)
        for target in lifted.values():  # unused ones too, as PyTorch keeps every parameter
            *path, field = target.split(".")
            owner = gm
            for item in path:
                owner = getattr(owner, item, None)
            if owner is None or not hasattr(owner, field):
                _copy_attr(root, gm, target)
        return gm

    def _read_leaves(self, graph, arg):
        """A placeholder for container argument `arg` and, by name, a node per tensor leaf:
        one call checks the structure and lists the leaves, then one getitem each."""
        import operator
        structure = self._input_structures[arg]
        listed = graph.create_node("call_function", input_leaves,
                                   (graph.placeholder(arg), structure, arg), {},
                                   name=f"{arg}_leaves")
        return {leaf: graph.create_node("call_function", operator.getitem, (listed, i), {},
                                        name=leaf)
                for i, (leaf, _, _) in enumerate(leaves(structure, arg))}

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops=False):
        from ._decompose import decompose
        return decompose(self, decomp_table)

    def __str__(self):
        code = self.graph_module.print_readable(print_output=False)
        return ("ExportedProgram:\n" + "\n".join("    " + line for line in code.split("\n"))
                + f"\nGraph signature: {self.graph_signature}\n")

    __repr__ = __str__
