"""`functional_call`: run a module with the given parameters and buffers in place of its own."""
from ..nn.utils.stateless import _functional_call, merge_dicts

__all__ = ["functional_call"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """`module(*args, **kwargs)` with the named tensors of `parameter_and_buffer_dicts` (a
    dict, or a sequence of dicts) swapped in; the module's own are restored afterwards."""
    values = merge_dicts(parameter_and_buffer_dicts)
    return _functional_call(module, values, args, kwargs, tie_weights=tie_weights,
                            strict=strict)
