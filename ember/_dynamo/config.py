"""`torch._dynamo.config`: the settings scripts commonly set, with PyTorch's defaults
(ember/_config_module.py: they change no behaviour; an unknown name is refused)."""
from .._config_module import install

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


install(__name__, _DEFAULTS)
