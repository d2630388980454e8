"""What `torch.export.export` returns: the ExportedProgram, its graph signature, and `Dim`."""
import dataclasses
import enum

__all__ = ["Dim", "dims", "InputKind", "OutputKind", "TensorArgument", "InputSpec", "OutputSpec",
           "ExportGraphSignature", "ExportedProgram"]


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
        return [s.arg.name for s in self.input_specs if s.kind == InputKind.USER_INPUT]

    @property
    def user_outputs(self):
        return [getattr(s.arg, "name", s.arg) for s in self.output_specs]

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
                 example_inputs=None, range_constraints=None):
        self.graph_module, self.graph_signature = graph_module, graph_signature
        self.state_dict, self.constants = state_dict, constants
        self.example_inputs = example_inputs
        self.range_constraints = range_constraints or {}

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
        """A Module that runs the program on the user inputs alone."""
        from ..nn.modules.module import Module
        program = self

        class _Unlifted(Module):
            def forward(self, *args, **kwargs):
                flat = list(args) + list(kwargs.values())
                return program.graph_module(*program._lifted_values(), *flat)
        return _Unlifted()

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
