"""`ember.optim`: optimisers with PyTorch's update formulas, and `lr_scheduler`."""
import importlib

from .optimizer import Optimizer
from ._stateless import swap_in_optimizer_params_and_state
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "swap_in_optimizer_params_and_state"]
# Optimisers written alongside, one file each (each lists its class in __all__).
for _name in ("adam", "adamw", "adamax", "rmsprop", "adagrad", "adadelta", "nadam", "radam",
              "lbfgs", "asgd", "rprop", "_adafactor", "sparse_adam", "_muon"):
    try:
        _mod = importlib.import_module(f".{_name}", __name__)
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{_name}":
            raise
        continue
    globals()[_name] = _mod
    # the classes; the functional forms (adam.adam ...) stay in their modules, as in PyTorch
    _classes = [n for n in _mod.__all__ if n[0].isupper()]
    globals().update({n: getattr(_mod, n) for n in _classes})
    __all__ += _classes
for _name in ("lr_scheduler", "swa_utils"):
    try:
        globals()[_name] = importlib.import_module(f".{_name}", __name__)
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{_name}":
            raise
