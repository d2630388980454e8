"""`torch.nn._reduction`: the loss-reduction names as the integer codes of PyTorch's kernels,
and the translation of the deprecated `size_average`/`reduce` flags, which custom losses
written against older PyTorch still call."""
import warnings

_CODES = {"none": 0, "mean": 1, "sum": 2}


def get_enum(reduction):
    """0 for 'none', 1 for 'mean' (and the deprecated 'elementwise_mean'), 2 for 'sum'."""
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=2)
        return 1
    if reduction not in _CODES:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _CODES[reduction]


def legacy_get_string(size_average, reduce, emit_warning=True):
    """The reduction the old flags meant (None counts as True): 'mean', 'sum' or 'none'."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    if emit_warning:
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=2)
    return ret


def legacy_get_enum(size_average, reduce, emit_warning=True):
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))
