"""Autograd: the engine (`backward`, `grad`), grad modes, custom Functions, gradcheck."""
from .._tensor import Tensor
from .anomaly_mode import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                           set_detect_anomaly)
from .grad_mode import (enable_grad, enforce_grad_layout_policy, inference_mode,
                        is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
                        set_multithreading_enabled)
from ..ops._graph import Node

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "gradcheck", "gradgradcheck", "GradcheckError", "Node",
           "Variable", "detect_anomaly", "set_detect_anomaly"]


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    from .engine import backward
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


Tensor.backward = _tensor_backward

# the engine (backward, grad), custom Functions, the functional API (jacobian, hessian, ...),
# forward-mode AD, the graph's hooks, gradcheck and the profiler load on first use
# (ember/_lazy.py); torch.autograd.profiler answers without an import, as PyTorch's does.
# Forward AD needs nothing before: only its module opens a dual level.
from .. import _lazy  # noqa: E402
_lazy.lazy_attributes(__import__("sys").modules[__name__], {
    **{name: (f".{name}", None)
       for name in ("functional", "profiler", "profiler_util", "forward_ad", "graph", "engine",
                    "function", "variable")},
    "backward": (".engine", "backward"), "grad": (".engine", "grad"),
    "Variable": (".variable", "Variable"),
    **{name: (".function", name)
       for name in ("Function", "FunctionCtx", "NestedIOFunction", "once_differentiable")},
    **{name: (".gradcheck", name) for name in ("gradcheck", "gradgradcheck", "GradcheckError")}})
# `autograd.gradcheck` is the function, as in PyTorch, even after an import of the submodule of
# that name (which would otherwise set the module as the package's attribute)
_lazy.bind_on_import(__import__("sys").modules[__name__], lambda name, _: name != "gradcheck")
