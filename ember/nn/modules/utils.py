"""Argument helpers the layers share, under PyTorch's names (`_pair`, `_triple` ... are imported
by users' custom layers from `torch.nn.modules.utils`), and the state-dict prefix stripper
for checkpoints saved from a DataParallel/DistributedDataParallel wrapper."""
import collections.abc
import numbers

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    """A parser that turns one value into an `n`-tuple of it, and any iterable into a tuple."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return (x,) * n

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """`t` reversed with each element repeated `n` times: a layer's per-dimension padding
    turned into `F.pad`'s last-dimension-first (left, right, ...) order."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """Adaptive pooling's output size with each None replaced by the input's own size (taken
    from the trailing entries of `defaults`)."""
    if isinstance(out_size, numbers.Integral):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip `prefix` (e.g. "module.") from the keys of `state_dict` in place, and from its
    `_metadata` keys, so a wrapped model's checkpoint loads into the bare model."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        # "" is the wrapper's own entry, which stays; "module" and "module.x" are the model's
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)
