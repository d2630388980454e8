"""`torch.jit.trace` with eager semantics: the function or module runs on the example inputs
(with `is_tracing()` true), its inputs and outputs are checked as PyTorch's tracer checks them,
and what comes back runs the same Python code again, so it gives the same results for any
input (a trace would have frozen the control flow taken on the examples; ember's does not).
`check_trace` reruns the examples (and `check_inputs`) and warns when the results differ, as
PyTorch does for nondeterministic traces.
"""
import contextlib
import threading
import warnings

from .._tensor import Tensor
from ..nn.modules.module import Module
from ._script import ScriptFunction, ScriptModule, TopLevelTracedModule, wrap_module

_state = threading.local()


class TracerWarning(Warning):
    pass


class TracingCheckError(Exception):
    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if tensor_compare_error is not None:
            self.message += tensor_compare_error
        super().__init__(self.message)


def is_tracing():
    """True while `trace` runs the example inputs through the traced code."""
    return getattr(_state, "depth", 0) > 0


@contextlib.contextmanager
def _tracing():
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


def _type_name(x):
    if isinstance(x, Tensor):
        return "Tensor"
    if isinstance(x, tuple):
        return f"Tuple[{', '.join(_type_name(v) for v in x)}]"
    if isinstance(x, list):
        return f"List[{_type_name(x[0]) if x else 'Tensor'}]"
    if isinstance(x, dict):
        return "Dict[str, Tensor]"
    return type(x).__name__


def _traceable(x):
    if isinstance(x, Tensor):
        return True
    if isinstance(x, (tuple, list)):
        return all(_traceable(v) for v in x)
    if isinstance(x, dict):
        return all(_traceable(v) for v in x.values())
    return False


def _as_args(example_inputs):
    # as PyTorch: one tensor (or dict) is the only argument; any other sequence is the arguments
    if isinstance(example_inputs, (Tensor, dict)):
        args = (example_inputs,)
    else:
        args = tuple(example_inputs)
    if not _traceable(args):
        raise RuntimeError(f"Type '{_type_name(args)}' cannot be traced. Only Tensors and "
                           "(possibly nested) Lists, Dicts, and Tuples of Tensors can be traced")
    return args


def _check_output(out, strict):
    if strict and isinstance(out, (list, dict)):
        kind = "list" if isinstance(out, list) else "dict"
        raise RuntimeError(
            f"Encountering a {kind} at the output of the tracer might cause the trace to be "
            "incorrect, this is only valid if the container structure does not change based on "
            "the module's inputs. Consider using a constant container instead (e.g. for `list`, "
            "use a `tuple` instead. for `dict`, use a `NamedTuple` instead). If you absolutely "
            "need this and know the side effects, pass strict=False to trace() to allow this "
            "behavior.")


def _flat(x):
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for v in x for t in _flat(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _flat(v)]
    return []


def _run(fn, args, kwargs, strict):
    with _tracing():
        out = fn(*args, **kwargs)
    _check_output(out, strict)
    return out


def _check(fn, first, runs, tolerance):
    """Rerun each example; results that differ from the first run mean the code is
    nondeterministic (dropout, random ops), which a trace would have frozen."""
    from ..autograd import no_grad
    from ..ops import allclose
    with no_grad():
        for args, kwargs, want in runs:
            got = fn(*args, **kwargs)
            a, b = _flat(got), _flat(want if want is not None else first)
            same = len(a) == len(b) and all(
                x.shape == y.shape and (not x.is_floating_point() or
                                        allclose(x.detach(), y.detach(), rtol=tolerance,
                                                 atol=tolerance, equal_nan=True))
                for x, y in zip(a, b))
            if not same:
                warnings.warn("Trace had nondeterministic nodes. Did you forget call .eval() on "
                              "your model? Output nr 1. of the traced function does not match "
                              "the corresponding output of the Python function.",
                              TracerWarning, stacklevel=3)
                return


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    if isinstance(func, (ScriptModule, ScriptFunction)):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. "
                      "Returning the object as is.", stacklevel=2)
        return func
    if isinstance(func, Module):
        inputs = example_kwarg_inputs if example_inputs is None else example_inputs
        return trace_module(func, {"forward": inputs}, None, check_trace,
                            None if check_inputs is None else [{"forward": c} for c in check_inputs],
                            check_tolerance, strict,
                            example_inputs_is_kwarg=example_inputs is None)
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("example_kwarg_inputs or example_inputs must be provided")
    if example_inputs is None:
        args, kwargs = (), dict(example_kwarg_inputs)
    else:
        args, kwargs = _as_args(example_inputs), {}
    first = _run(func, args, kwargs, strict)
    if check_trace:
        runs = [(args, kwargs, None)] + [(_as_args(c), {}, func(*_as_args(c)))
                                         for c in (check_inputs or ())]
        _check(func, first, runs, check_tolerance)
    return ScriptFunction(func)


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
                 _compilation_unit=None, example_inputs_is_kwarg=False, _store_inputs=True):
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        method = getattr(mod, name)
        if example_inputs_is_kwarg:
            args, kwargs = (), dict(example)
        else:
            args, kwargs = _as_args(example), {}
        first = _run(method, args, kwargs, strict)
        if check_trace:
            runs = [(args, kwargs, None)]
            for c in check_inputs or ():
                c_args = _as_args(c[name])
                runs.append((c_args, {}, method(*c_args)))
            _check(method, first, runs, check_tolerance)
    traced = wrap_module(mod, TopLevelTracedModule)
    if "forward" in inputs and not example_inputs_is_kwarg:
        # kept for jit.save, which stores the trace as a program too (see _serialization)
        traced.__dict__["_trace_examples"] = _as_args(inputs["forward"])
    return traced
