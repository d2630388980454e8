"""`torch._dynamo.config`: the settings scripts commonly set, with PyTorch's defaults. ember
compiles nothing (compiled code runs eagerly), so they change no behaviour; an unknown name
is refused as PyTorch refuses it, so a misspelt setting does not pass silently."""
import contextlib
import sys
import types

_DEFAULTS = {
    "suppress_errors": False, "verbose": False, "cache_size_limit": 8, "recompile_limit": 8,
    "accumulated_cache_size_limit": 256, "accumulated_recompile_limit": 256,
    "fail_on_recompile_limit_hit": False, "error_on_recompile": False,
    "capture_scalar_outputs": False, "capture_dynamic_output_shape_ops": False,
    "automatic_dynamic_shapes": True, "assume_static_by_default": True, "dynamic_shapes": True,
    "specialize_int": False, "specialize_float": False, "force_parameter_static_shapes": True,
    "force_nn_module_property_static_shapes": True, "allow_unspec_int_on_nn_module": False,
    "optimize_ddp": True, "inline_inbuilt_nn_modules": True, "guard_nn_modules": True,
    "skip_nnmodule_hook_guards": True, "use_lazy_graph_module": True, "compiled_autograd": False,
    "raise_on_ctx_manager_usage": True, "allow_rnn": False,
    "prefer_deferred_runtime_asserts_over_guards": False,
}


class _Config(types.ModuleType):
    def __setattr__(self, name, value):
        if name.startswith("_") or name in _DEFAULTS:
            super().__setattr__(name, value)
        else:
            raise AttributeError(f"{self.__name__.replace('ember.', 'torch.', 1)}.{name} "
                                 "does not exist")


def patch(arg=None, value=None, **changes):
    """Settings changed for a `with` block or a decorated function (`patch("name", value)`,
    `patch(name=value)` or `patch({"name": value})`), put back afterwards."""
    if isinstance(arg, str):
        changes[arg] = value
    elif isinstance(arg, dict):
        changes.update(arg)
    module = sys.modules[__name__]
    for name in changes:
        if name not in _DEFAULTS:
            raise AttributeError(f"torch._dynamo.config.{name} does not exist")

    class _Patch(contextlib.ContextDecorator):
        def __enter__(self):
            self.saved = {name: getattr(module, name) for name in changes}
            for name, v in changes.items():
                setattr(module, name, v)

        def __exit__(self, *exc):
            for name, v in self.saved.items():
                setattr(module, name, v)
    return _Patch()


def get_config_copy():
    return {name: getattr(sys.modules[__name__], name) for name in _DEFAULTS}


globals().update(_DEFAULTS)
sys.modules[__name__].__class__ = _Config
