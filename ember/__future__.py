"""`torch.__future__`: opt-in switches for how `nn.Module` conversions (`.to()`, `.float()`,
`.cuda()` ...) and `load_state_dict` replace parameters.

overwrite: a conversion registers a new Parameter object in place of the old one.
swap: a conversion (and `load_state_dict`, through `Tensor.module_load`) swaps the new value
into the existing parameter object with `ember.utils.swap_tensors`, so every reference to the
parameter (an optimizer's, say) sees it. Both off: the parameter keeps its object and takes the
new value as its data."""

_overwrite_module_params_on_conversion = False
_swap_module_params_on_conversion = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Whether a module conversion gives each parameter a new Parameter object (rather than
    setting the new value as the existing parameter's data); swap takes precedence."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Whether module conversions and `load_state_dict` swap new values into the existing
    parameter objects with `swap_tensors` (`load_state_dict` builds each value with
    `param.module_load(state_dict_value, assign)`)."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    return _swap_module_params_on_conversion
