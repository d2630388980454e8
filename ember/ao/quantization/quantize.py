"""Eager-mode dynamic quantization: give each layer its qconfig, then swap every layer whose
type has a quantized counterpart (PyTorch's `torch.ao.quantization.quantize`)."""
import copy
import itertools
import warnings

from ... import dtypes as _dt
from ...nn.modules.linear import Linear, NonDynamicallyQuantizableLinear
from ...nn.modules.rnn import LSTM
from ..nn.quantized import dynamic as nnqd
from .qconfig import default_dynamic_qconfig, float16_dynamic_qconfig

__all__ = ["quantize_dynamic", "propagate_qconfig_", "convert", "swap_module",
           "get_default_dynamic_quant_module_mappings", "get_dynamic_quant_module_class"]

_DEPRECATION = (
    "torch.ao.quantization is deprecated and will be removed in 2.10. \n"
    "For migrations of users: \n"
    "1. Eager mode quantization (torch.ao.quantization.quantize, "
    "torch.ao.quantization.quantize_dynamic), please migrate to use torchao eager mode "
    "quantize_ API instead \n"
    "2. FX graph mode quantization (torch.ao.quantization.quantize_fx.prepare_fx,"
    "torch.ao.quantization.quantize_fx.convert_fx, please migrate to use torchao pt2e "
    "quantization API instead (prepare_pt2e, convert_pt2e) \n"
    "3. pt2e quantization has been migrated to torchao "
    "(https://github.com/pytorch/ao/tree/main/torchao/quantization/pt2e) \n"
    "see https://github.com/pytorch/ao/issues/2259 for more details")


def get_default_dynamic_quant_module_mappings():
    """float layer type -> its dynamically quantized type."""
    return {Linear: nnqd.Linear, NonDynamicallyQuantizableLinear: nnqd.Linear, LSTM: nnqd.LSTM}


def get_dynamic_quant_module_class(float_module_class, additional_dynamic_quant_mapping=None):
    mapping = get_default_dynamic_quant_module_mappings()
    mapping.update(additional_dynamic_quant_mapping or {})
    if float_module_class not in mapping:
        raise AssertionError(f"Floating point module class {float_module_class} "
                             "does not have a corresponding quantized module class")
    return copy.deepcopy(mapping[float_module_class])


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None):
    """Set `.qconfig` on every submodule: its own entry (by qualified name, else by type),
    else its parent's."""
    _propagate(module, qconfig_dict or {}, None, "")


def _propagate(module, qconfig_dict, parent_qconfig, prefix):
    qconfig = qconfig_dict.get(type(module), parent_qconfig)
    qconfig = qconfig_dict.get(prefix, qconfig)
    module.qconfig = qconfig
    for name, child in module.named_children():
        _propagate(child, qconfig_dict, qconfig, prefix + "." + name if prefix else name)


def swap_module(mod, mapping, custom_module_class_mapping=None):
    """`mod`'s quantized counterpart when it has a qconfig and its type a mapping, else `mod`."""
    if getattr(mod, "qconfig", None) is not None and type(mod) in mapping:
        return mapping[type(mod)].from_float(mod)
    return mod


def convert(module, mapping=None, inplace=False, remove_qconfig=True,
            is_reference=False, convert_custom_config_dict=None,
            use_precomputed_fake_quant=False):
    """Swap the layers of `module` (children first) for their quantized counterparts."""
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        module = copy.deepcopy(module)
    _convert(module, mapping)
    if remove_qconfig:
        for sub in module.modules():
            if hasattr(sub, "qconfig"):
                del sub.qconfig
    return module


def _convert(module, mapping):
    for name, child in list(module.named_children()):
        if type(child) not in mapping:
            _convert(child, mapping)
        swapped = swap_module(child, mapping)
        if swapped is not child:
            setattr(module, name, swapped)


def quantize_dynamic(model, qconfig_spec=None, dtype=_dt.qint8, mapping=None, inplace=False):
    """A copy of `model` (or `model` itself with inplace=True) whose Linear layers hold
    quantized weights and quantize their input in each call.

    qconfig_spec: None (every Linear), a set of layer types or qualified names, or a dict from
    types or names to a QConfig (None leaves that part float)."""
    warnings.warn(_DEPRECATION, DeprecationWarning, stacklevel=2)
    if qconfig_spec is None:
        if dtype is _dt.qint8:
            default = default_dynamic_qconfig
            qconfig_spec = {Linear: default, LSTM: default}
        elif dtype is _dt.float16:
            default = float16_dynamic_qconfig
            qconfig_spec = {Linear: default}
        else:
            raise ValueError(f"Don't know how to quantize with default settings for {dtype}. "
                             "Provide full qconfig please")
    elif isinstance(qconfig_spec, set):
        if dtype is _dt.qint8:
            default = default_dynamic_qconfig
        elif dtype is _dt.float16:
            default = float16_dynamic_qconfig
        else:
            raise RuntimeError("Unknown dtype specified for quantize_dynamic: ", str(dtype))
        qconfig_spec = dict(zip(qconfig_spec, itertools.repeat(default)))
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping, inplace=True)
    return model
