"""`ember.nn`: modules, parameters, functional, init and utils, as `torch.nn`."""
from . import attention, common_types, functional, grad, init, parallel, utils
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = list(_modules_all) + ["DataParallel", "Parameter", "Buffer", "UninitializedParameter",
                                 "UninitializedBuffer", "functional", "init", "parallel", "utils"]
# (attention, common_types and grad are submodules, outside __all__ as in torch.nn)
