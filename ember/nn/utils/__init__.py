"""`ember.nn.utils`: gradient clipping, parameter vectors, and the like (as torch.nn.utils)."""
import importlib

from . import clip_grad, convert_parameters, stateless  # noqa: F401
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,
                        clip_grads_with_norm_, get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters

# Utilities written alongside (rnn packing, weight/spectral norm), imported if present;
# parametrize and parametrizations are reached only as submodules, as in torch.nn.utils.
_SUBMODULE_ONLY = ("parametrize", "parametrizations")
for _name in ("rnn", "weight_norm", "spectral_norm", "parametrize", "parametrizations", "fusion",
              "init", "memory_format"):
    try:
        _mod = importlib.import_module(f".{_name}", __name__)
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{_name}":
            raise
        continue
    globals()[_name] = _mod
    if _name in _SUBMODULE_ONLY:
        continue
    globals().update({n: getattr(_mod, n) for n in getattr(_mod, "__all__", ())})
