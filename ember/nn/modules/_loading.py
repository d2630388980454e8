"""`Module.load_state_dict`'s work on one parameter or buffer: the checks of the
checkpoint's value against it (each failure a line in the error message, the rest still
loaded) and the load itself, as a copy into the tensor, as the tensor itself (`assign`), or
through `module_load` under torch.__future__'s swap switch."""
import warnings

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, is_lazy


def load_entry(module, name, param, key, value, assign, error_msgs):
    """Load `value` (the checkpoint's under `key`) into `param`, `module`'s parameter or
    persistent buffer `name`, or append why not to `error_msgs`."""
    if not isinstance(value, Tensor):
        error_msgs.append(f'While copying the parameter named "{key}", expected '
                          f"torch.Tensor or Tensor-like object from checkpoint but "
                          f"received {type(value)}")
        return
    if is_lazy(param):  # still lazy: the checkpoint's is an uninitialized one too
        return
    if value.shape != param.shape:
        error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                          f"{value.shape} from checkpoint, the shape in current model is "
                          f"{param.shape}.")
        return
    if param.is_meta and not value.is_meta and not assign:
        warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint "
                      "to a meta parameter in the current model, which is a no-op. (Did "
                      "you mean to pass `assign=True` to assign items in the state "
                      "dictionary to their corresponding key in the module instead of "
                      "copying them in place?)")
    try:
        with no_grad():
            if _swaps_on_load():
                _swap_loaded(param, value, assign)
            elif assign:  # the checkpoint's tensor itself: how a meta model is filled
                if isinstance(param, Parameter):
                    if isinstance(value, Parameter):
                        value.requires_grad_(param.requires_grad)
                    else:
                        value = Parameter(value, requires_grad=param.requires_grad)
                setattr(module, name, value)
            else:
                param.copy_(value)
    except Exception as ex:
        error_msgs.append(f'While copying the parameter named "{key}", whose dimensions '
                          f"in the model are {param.size()} and whose dimensions in the "
                          f"checkpoint are {value.size()}, an exception occurred : "
                          f"{ex.args}.")


def _swaps_on_load():
    from ... import __future__ as future
    return future.get_swap_module_params_on_conversion()


def _swap_loaded(param, value, assign):
    """load_state_dict under torch.__future__'s swap switch: `param.module_load` makes the
    new value from the checkpoint's, and it is swapped into the parameter object itself."""
    new = param.module_load(value, assign=assign)
    if new is value or new is param:
        raise RuntimeError("module_load returned one of self or other, please .detach() the "
                           "result if returning one of the inputs in module_load")
    if isinstance(param, Parameter):
        if isinstance(new, Parameter):
            new.requires_grad_(param.requires_grad)
        else:
            new = Parameter(new, requires_grad=param.requires_grad)
    from ...utils import swap_tensors
    swap_tensors(param, new)
