"""`torch.nn.parallel.parallel_apply`: run module i on input i, one thread per module (each on
its device, under the caller's grad mode and autocast), and return the outputs in order; an
exception in a replica is raised again in the caller, naming the replica and its device."""
import contextlib
import threading

from ..._state import autocast as _autocast_state
from ..._state import grad as _grad_state
from ..._tensor import Tensor
from ...amp.autocast_mode import autocast
from ...autograd.grad_mode import set_grad_enabled
from . import comm

__all__ = ["get_a_var", "parallel_apply"]


def get_a_var(obj):
    """The first tensor found in `obj` (searching tuples, lists and dict items), or None."""
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, (list, tuple)):
        for result in map(get_a_var, obj):
            if isinstance(result, Tensor):
                return result
    if isinstance(obj, dict):
        for result in map(get_a_var, obj.items()):
            if isinstance(result, Tensor):
                return result
    return None


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """`[modules[i](*inputs[i], **kwargs_tup[i]) for i]`, computed in parallel threads."""
    # here, not at the top: ember.utils.data (multiprocessing, datapipes) loads on first use
    from ...utils.data._utils.worker import ExceptionWrapper
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of inputs {len(inputs)}")
    if kwargs_tup is not None:
        if len(modules) != len(kwargs_tup):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                                 f"number of kwargs_tup {len(kwargs_tup)}")
    else:
        kwargs_tup = ({},) * len(modules)
    if devices is not None:
        if len(modules) != len(devices):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                                 f"number of devices {len(devices)}")
    else:
        devices = [None] * len(modules)
    devices = [None if d is None else comm._get_device_index(d, True) for d in devices]
    lock = threading.Lock()
    results = {}
    grad_enabled = _grad_state.enabled
    autocast_dtypes = dict(_autocast_state.thread.dtypes)

    def worker(i, module, input, kwargs, device):
        # grad mode and autocast are per thread: the workers run under the caller's
        with set_grad_enabled(grad_enabled), contextlib.ExitStack() as modes:
            for device_type, dtype in autocast_dtypes.items():
                modes.enter_context(autocast(device_type, dtype=dtype))
            if device is None:
                t = get_a_var(input)
                if t is None:
                    with lock:
                        results[i] = ExceptionWrapper(
                            where=f"in replica {i}, no device was provided and no tensor input "
                                  "was found; device cannot be resolved")
                    return
                device = t.get_device()
            try:
                args = input if isinstance(input, (list, tuple)) else (input,)
                output = module(*args, **kwargs)
                with lock:
                    results[i] = output
            except Exception:
                with lock:
                    results[i] = ExceptionWrapper(where=f"in replica {i} on device {device}")

    jobs = list(zip(range(len(modules)), modules, inputs, kwargs_tup, devices))
    if len(jobs) > 1:
        threads = [threading.Thread(target=worker, args=job) for job in jobs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:
        worker(*jobs[0])
    outputs = []
    for i in range(len(inputs)):
        output = results[i]
        if isinstance(output, ExceptionWrapper):
            output.reraise()
        outputs.append(output)
    return outputs
