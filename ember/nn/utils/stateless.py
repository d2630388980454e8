"""Calling a module with other parameters and buffers (`functional_call`, as
torch.nn.utils.stateless and torch.func): the given tensors are swapped in by name for the
call and the module's own are put back afterwards, also when the call raises."""
import contextlib
import warnings

__all__ = ["functional_call"]

_ABSENT = object()


def _tied_names(module):
    """For every parameter or buffer registered under several names: name -> all its names."""
    by_tensor = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        by_tensor.setdefault(id(t), set()).add(name)
    return {name: names for names in by_tensor.values() if len(names) > 1 for name in names}


def _untie(module, values):
    tied = _tied_names(module)
    given = [name for name in values if name in tied]
    for name in given:
        names = tied[name]
        if len(names.intersection(given)) > 1 and \
                len({id(values[n]) for n in names if n in values}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    out = dict(values)
    for name in given:
        for other in tied[name]:
            out[other] = values[name]
    return out


def _owner(module, name):
    path, _, leaf = name.rpartition(".")
    return (module.get_submodule(path) if path else module), leaf


def _swap(module, name, value):
    """Put `value` under `name`; returns what was there (_ABSENT when nothing was)."""
    owner, leaf = _owner(module, name)
    d = owner.__dict__
    for store in ("_parameters", "_buffers"):
        if leaf in d[store]:
            old = d[store][leaf]
            if value is _ABSENT:
                del d[store][leaf]
            else:
                d[store][leaf] = value
            return old
    old = d.get(leaf, _ABSENT)
    if value is _ABSENT:
        d.pop(leaf, None)
    else:
        d[leaf] = value
    return old


def _check_keys(module, values):
    valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
    valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
    missing = sorted(valid - set(values))
    unexpected = sorted(set(values) - valid)
    msgs = []
    if unexpected:
        msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if msgs:
        raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                           + "\n\t".join(msgs))


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    values = _untie(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        _check_keys(module, values)
    originals = {}
    try:
        for name, value in values.items():
            originals[name] = _swap(module, name, value)
        yield
    finally:
        current = {}
        for name, old in reversed(list(originals.items())):
            current[name] = _swap(module, name, old)
        # what the call left in the module (a buffer it reassigned) goes back to the caller
        for name in parameters_and_buffers:
            if name in current and current[name] is not _ABSENT:
                parameters_and_buffers[name] = current[name]


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights, strict):
        return module(*args, **kwargs)


def merge_dicts(parameter_and_buffer_dicts):
    """One name -> tensor dict from a dict or a sequence of dicts (no name twice)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        return parameter_and_buffer_dicts
    if isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        seen, repeated = set(), set()
        for d in parameter_and_buffer_dicts:
            for k in d:
                (repeated if k in seen else seen).add(k)
        if repeated:
            raise ValueError(f"{sorted(repeated)} appeared in multiple dictionaries; behavior "
                             "of functional call is ambiguous")
        return {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                     f"dicts, but got {type(parameter_and_buffer_dicts)}")


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Deprecated spelling of torch.func.functional_call."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)

