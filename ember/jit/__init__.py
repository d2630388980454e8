"""`ember.jit` (`torch.jit`) with eager semantics: what PyTorch compiles to TorchScript, ember
runs as the Python it is (as PyTorch's eager backend would): scripting and tracing give
modules and functions that compute exactly what the original code computes, train, print,
freeze, and save to and load from ember's own file format (a weights-only load).

  _script         script, ScriptModule, ScriptFunction, the markers (ignore, unused, export,
                  interface, Attribute, annotate), freeze, optimize_for_inference
  _trace          trace, trace_module, is_tracing
  _serialization  save, load
  _async          fork, wait, Future
  _fusion         the fuser's switches, and torch.compile (the eager backend)
  _typing         jit.isinstance
  annotations     the annotation types TorchScript code imports
"""
from typing import Final  # noqa: F401 (torch.jit.Final)

from . import annotations  # noqa: F401
from ._async import Future, fork, wait
from ._fusion import (compile, enable_onednn_fusion, onednn_fusion_enabled,  # noqa: F401
                      set_fusion_strategy, strict_fusion)
from ._script import (Attribute, Error, RecursiveScriptModule, ScriptFunction,  # noqa: F401
                      ScriptModule, TopLevelTracedModule, TracedModule, annotate, export, freeze,
                      ignore, interface, is_scripting, optimize_for_inference, script,
                      script_if_tracing, script_method, unused)
from ._serialization import load, save
from ._trace import TracerWarning, TracingCheckError, is_tracing, trace, trace_module  # noqa: F401
from ._typing import isinstance  # noqa: A001

__all__ = ["Attribute", "Error", "Final", "Future", "ScriptFunction", "ScriptModule", "annotate",
           "compile", "enable_onednn_fusion", "export", "fork", "freeze", "ignore", "interface",
           "is_scripting", "is_tracing", "isinstance", "load", "onednn_fusion_enabled",
           "optimize_for_inference", "save", "script", "script_if_tracing", "script_method",
           "set_fusion_strategy", "strict_fusion", "trace", "trace_module", "unused", "wait"]
