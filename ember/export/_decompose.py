"""`ExportedProgram.run_decompositions`: each call of a function in the table is replaced by
the graph of its decomposition (traced from a plain Python definition)."""
import operator

from ..fx.interpreter import Transformer
from ._program import ExportedProgram

__all__ = ["decompose", "default_decompositions"]


def _linear(input, weight, bias=None):
    out = input.matmul(weight.t())
    return out if bias is None else operator.add(out, bias)


def _relu6(input, inplace=False):
    return input.clamp(0, 6)


def _silu(input, inplace=False):
    return input * input.sigmoid()


def default_decompositions():
    from ..nn import functional as F
    return {F.linear: _linear, F.relu6: _relu6, F.silu: _silu}


def decompose(program, table=None):
    table = default_decompositions() if table is None else table

    class Decompose(Transformer):
        def call_function(self, target, args, kwargs):
            fn = table.get(target)
            if fn is None:
                return super().call_function(target, args, kwargs)
            with self.tracer._patched():
                return fn(*args, **kwargs)

    gm = Decompose(program.graph_module).transform()
    return ExportedProgram(gm, program.graph_signature, program.state_dict, program.constants,
                           program.example_inputs, program.range_constraints,
                           program._input_structures, program._input_sizes)
