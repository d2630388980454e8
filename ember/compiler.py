"""`ember.compiler`, as torch.compiler with the eager backend's semantics: ember runs every
program as written, so `compile` returns the model unchanged, nothing is ever compiling or
exporting, there are no caches to reset or save, and the markers a compiler reads
(`disable`, `allow_in_graph`, `assume_constant_result`, `substitute_in_graph`,
`nested_compile_region`) leave functions doing what they did. The settings (`set_stance`,
`set_default_backend`) are checked and remembered. Not here: `config` and
`load_compiled_function` (there is no compiled code to load)."""
import functools
import inspect

import numpy as np

from . import jit
from .utils import _pytree

__all__ = ["compile", "assume_constant_result", "reset", "allow_in_graph",
           "substitute_in_graph", "list_backends", "disable", "set_default_backend",
           "get_default_backend", "set_stance", "set_enable_guard_collectives",
           "cudagraph_mark_step_begin", "wrap_numpy", "is_compiling", "is_dynamo_compiling",
           "is_exporting", "save_cache_artifacts", "load_cache_artifacts",
           "keep_portable_guards_unsafe", "skip_guard_on_inbuilt_nn_modules_unsafe",
           "skip_guard_on_all_nn_modules_unsafe", "keep_tensor_guards_unsafe",
           "skip_guard_on_globals_unsafe", "skip_all_guards_unsafe", "nested_compile_region"]

# The backends `compile` takes (all of them run the program eagerly here), with PyTorch's
# tags: list_backends() leaves the debug ones out unless asked.
_BACKENDS = {"cudagraphs": (), "inductor": (), "eager": ("debug",),
             "aot_eager": ("debug",)}
_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile",
            "eager_then_compile", "aot_eager_then_compile")
_settings = {"default_backend": None, "stance": "default", "guard_collectives": False}


def compile(*args, **kwargs):
    """`ember.compile`: the model or function, to run eagerly."""
    return jit.compile(*args, **kwargs)


def reset():
    """Forget compiled code: eager execution keeps none."""


def cudagraph_mark_step_begin():
    """A new iteration starts (CUDA-graph trees free the previous one's outputs): nothing is
    captured in eager execution, so nothing is held back."""


def list_backends(exclude_tags=("debug", "experimental")):
    excluded = set(exclude_tags or ())
    return sorted(name for name, tags in _BACKENDS.items() if not excluded & set(tags))


def set_default_backend(backend):
    """The backend `compile` uses when none is named; None restores 'inductor'."""
    _settings["default_backend"] = backend


def get_default_backend():
    backend = _settings["default_backend"]
    return "inductor" if backend is None else backend


def set_enable_guard_collectives(enabled):
    """Returns whether guard collectives were enabled before."""
    before, _settings["guard_collectives"] = _settings["guard_collectives"], bool(enabled)
    return before


class set_stance:
    """How compiled functions behave: set at once when called, or for a `with` block, or for
    the calls of a decorated function (then the previous stance comes back)."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if stance not in _STANCES:
            raise RuntimeError(f"invalid torch.compile stance '{stance}'")
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        self.stance = stance
        self.skip_guard_eval_unsafe = skip_guard_eval_unsafe
        self.force_backend = force_backend
        self._prior = _settings["stance"]
        _settings["stance"] = stance

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _settings["stance"] = self._prior

    def __call__(self, fn):
        _settings["stance"] = self._prior  # a decorator sets the stance only for calls
        stance = self.stance

        @functools.wraps(fn)
        def with_stance(*args, **kwargs):
            prior, _settings["stance"] = _settings["stance"], stance
            try:
                return fn(*args, **kwargs)
            finally:
                _settings["stance"] = prior
        return with_stance


def _get_stance():
    return _settings["stance"]


class _Disabled:
    """What disable() gives without a function: a decorator, also usable as `with`."""

    def __call__(self, fn):
        return disable(fn)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def disable(fn=None, recursive=True, *, reason=None):
    """Keep `fn` out of compilation: it runs eagerly, as everything does here."""
    if fn is None:
        return _Disabled()

    @functools.wraps(fn)
    def not_compiled(*args, **kwargs):
        return fn(*args, **kwargs)
    return not_compiled


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False,
                        skip_signature_check=False):
    """A decorator registering a Python stand-in for `original_fn` (for a compiler to trace);
    called eagerly, the stand-in runs. Its signature must be the original's."""
    def register(polyfill):
        if not skip_signature_check:
            try:
                expected = inspect.signature(original_fn)
            except ValueError:
                expected = None
            found = inspect.signature(polyfill)
            if expected is not None and expected != found:
                raise TypeError(f"Signature mismatch between {original_fn} and {polyfill}: "
                                f"{expected} != {found}")

        @functools.wraps(polyfill)
        def stand_in(*args, **kwargs):
            return polyfill(*args, **kwargs)
        stand_in.__torch_original__ = original_fn
        return stand_in
    return register


def nested_compile_region(fn=None, *, options=None, max_reuse_entries=8, reuse_hash_fn=None):
    """Marks a region a compiler would compile once and reuse: it runs as it is."""
    if options is not None:
        raise RuntimeError("nested_compile_region config is an experimental feature for "
                           "testing only.")
    return (lambda f: f) if fn is None else fn


def wrap_numpy(fn):
    """`fn` written on NumPy arrays, callable on tensors: tensor arguments go in as arrays,
    array results come back as tensors."""
    from ._tensor import Tensor
    from .ops.creation import as_tensor

    def convert(tree, kind, how):
        leaves, spec = _pytree.flatten(tree)
        return _pytree.unflatten([how(x) if isinstance(x, kind) else x for x in leaves], spec)

    @functools.wraps(fn)
    def on_tensors(*args, **kwargs):
        args, kwargs = convert((args, kwargs), Tensor, lambda t: t.numpy())
        return convert(fn(*args, **kwargs), np.ndarray, as_tensor)
    return on_tensors


def is_compiling():
    return False


def is_dynamo_compiling():
    return False


def is_exporting():
    return False


def save_cache_artifacts():
    """None: eager execution writes no compile caches."""
    return None


def load_cache_artifacts(serialized_artifacts):
    """None: there are no compile caches to fill."""
    return None


# Guard filters for compile options: each says, per guard entry, whether to keep it.
def keep_portable_guards_unsafe(guard_entries):
    return [g.guard_type in ("GLOBAL_STATE", "SHAPE_ENV")
            or (g.guard_type == "TENSOR_MATCH" and not g.is_global) for g in guard_entries]


def skip_guard_on_inbuilt_nn_modules_unsafe(guard_entries):
    return [not g.orig_guard.source.is_unspecialized_builtin_nn_module() for g in guard_entries]


def skip_guard_on_all_nn_modules_unsafe(guard_entries):
    return [not g.orig_guard.source.is_unspecialized_nn_module() for g in guard_entries]


def keep_tensor_guards_unsafe(guard_entries, keep_parameters=False):
    from .nn.parameter import Parameter
    return [g.guard_type == "TENSOR_MATCH"
            and (keep_parameters or not isinstance(g.value, Parameter)) for g in guard_entries]


def skip_guard_on_globals_unsafe(guard_entries):
    return [not g.is_global for g in guard_entries]


def skip_all_guards_unsafe(guard_entries):
    return [False for _ in guard_entries]
