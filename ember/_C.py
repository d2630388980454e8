"""`torch._C`: PyTorch's compiled core. ember has none; this holds the few of its functions
that Python libraries call directly (torchmetrics logs each metric class it builds through
`_log_api_usage_once`), with PyTorch's behaviour."""
import os
import sys

__all__ = ["_log_api_usage_once", "_get_tracing_state", "_get_privateuse1_backend_name",
           "_set_grad_enabled", "_is_grad_enabled"]

_logged = set()


def _log_api_usage_once(event):
    """Note that an API was used, once per event: PyTorch's default logger writes
    "PYTORCH_API_USAGE <event>" to stderr when PYTORCH_API_USAGE_STDERR is set, and is
    silent otherwise."""
    if not isinstance(event, str):
        raise TypeError(f"_log_api_usage_once(): argument 'event' must be str, not "
                        f"{type(event).__name__}")
    if event in _logged:
        return
    _logged.add(event)
    if os.environ.get("PYTORCH_API_USAGE_STDERR"):
        print(f"PYTORCH_API_USAGE {event}", file=sys.stderr)


def _get_tracing_state():
    """The TorchScript tracer's state while a trace records, else None: ember's jit.trace
    runs the module eagerly and records no graph, so there is none."""
    return None


def _get_privateuse1_backend_name():
    return "privateuseone"


def _set_grad_enabled(mode):
    from .autograd import set_grad_enabled
    set_grad_enabled(mode)


def _is_grad_enabled():
    from .autograd import is_grad_enabled
    return is_grad_enabled()
