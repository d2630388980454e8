"""`ember.nn`: modules, parameters, functional, init and utils, as `torch.nn`."""
from . import _reduction, attention, common_types, functional, grad, init, parallel, utils
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter



def factory_kwargs(kwargs):
    """The device/dtype/memory_format keyword arguments of `kwargs` as one dict for a factory
    call, merged with an explicit `factory_kwargs` entry; anything else is a TypeError."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple_keys:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r


__all__ = list(_modules_all) + ["DataParallel", "Parameter", "Buffer", "UninitializedParameter",
                                 "UninitializedBuffer", "functional", "init", "parallel", "utils"]
# attention, common_types, grad, _reduction: submodules, reached as torch.nn.attention ...
