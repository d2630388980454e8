"""`torch.export`: whole-graph capture of a module on example inputs, built on ember.fx's
tracer: an ExportedProgram holds a graph of functions with the parameters and buffers lifted
to inputs. `save`/`load` write ember's own programs in a format that holds no code."""
from ._capture import export
from ._program import (Dim, dims, ExportedProgram, ExportGraphSignature, InputKind, InputSpec,
                       OutputKind, OutputSpec, TensorArgument)
from ._serialize import load, save

__all__ = ["export", "ExportedProgram", "ExportGraphSignature", "Dim", "dims", "save", "load",
           "InputKind", "InputSpec", "OutputKind", "OutputSpec", "TensorArgument"]
