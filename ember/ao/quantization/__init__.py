"""`torch.ao.quantization`, the part ember has: dynamic quantization (`quantize_dynamic`),
the qconfigs and observers it uses, and the eager-mode helpers it is built from."""
from .observer import (MinMaxObserver, ObserverBase, PlaceholderObserver,
                       default_dynamic_quant_observer, default_placeholder_observer,
                       default_weight_observer)
from .qconfig import QConfig, default_dynamic_qconfig, float16_dynamic_qconfig, qconfig_equals
from .quantize import (convert, get_default_dynamic_quant_module_mappings,
                       get_dynamic_quant_module_class, propagate_qconfig_, quantize_dynamic,
                       swap_module)

__all__ = ["MinMaxObserver", "ObserverBase", "PlaceholderObserver",
           "default_dynamic_quant_observer", "default_placeholder_observer",
           "default_weight_observer", "QConfig", "default_dynamic_qconfig",
           "float16_dynamic_qconfig", "qconfig_equals", "convert",
           "get_default_dynamic_quant_module_mappings", "get_dynamic_quant_module_class",
           "propagate_qconfig_", "quantize_dynamic", "swap_module"]
