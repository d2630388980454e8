"""`vmap` as a loop: the function runs once per index of the mapped dimension and the
results are stacked along `out_dims`. Same values, shapes and errors as torch.func.vmap; no
batching rules, so it costs one call per sample."""
from .. import random as _random
from .._tensor import Tensor
from ..utils._pytree import broadcast_prefix, describe, flatten, unflatten

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


def _is_dim(value):
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _rng_token():
    """Something that changes when the CPU generator draws."""
    gen = _random.default_generator
    rng = gen._rng
    return (gen._initial, id(rng), None if rng is None else _random._capture(rng))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Map `func` over a dimension of its inputs (`in_dims`) and stack its outputs along
    `out_dims`. `randomness`: 'error' refuses random draws inside, 'different' gives each
    sample its own draws, 'same' gives every sample the same draws."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")
    name = getattr(func, "__name__", repr(func))

    def wrapped(*args, **kwargs):
        where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if not (_is_dim(in_dims) and in_dims is not None) and not isinstance(in_dims, tuple):
            raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) "
                             "tuple matching the structure of inputs, got: "
                             f"{type(in_dims)}.")
        if not args:
            raise ValueError(f"{where}: got no inputs. Maybe you forgot to add inputs, or you "
                             "are trying to vmap over a function with no inputs. The latter is "
                             "unsupported.")
        leaves, spec = flatten(args)
        dims = broadcast_prefix(in_dims, args, _is_dim)
        if dims is None:
            raise ValueError(f"{where}: in_dims is not compatible with the structure of "
                             f"`inputs`. in_dims has structure {_structure(in_dims)} but "
                             f"inputs has structure {_structure(args)}.")
        sizes, normal = [], []
        for leaf, d in zip(leaves, dims):
            if d is None:
                normal.append(None)
                continue
            if not isinstance(leaf, Tensor):
                raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of "
                                 f"type {type(leaf)}. We cannot vmap over non-Tensor "
                                 "arguments, please use None as the respective in_dim")
            n = leaf.dim()
            if not -n <= d < n:
                raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a "
                                 f"Tensor of dimensionality {n} so expected in_dim to satisfy "
                                 f"-{n} <= in_dim < {n}.")
            normal.append(d % n)
            sizes.append(leaf.shape[d % n])
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if len(set(sizes)) != 1:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        batch = sizes[0]
        outputs = _run(func, leaves, normal, spec, kwargs, batch, randomness)
        return _stack(outputs, out_dims, name, batch)
    wrapped.__name__ = name
    wrapped.__doc__ = getattr(func, "__doc__", None)
    return wrapped


def _structure(tree):
    return describe(flatten(tree)[1])


def _sample(leaves, dims, spec, i):
    return unflatten([leaf if d is None else leaf.select(d, i)
                      for leaf, d in zip(leaves, dims)], spec)


def _run(func, leaves, dims, spec, kwargs, batch, randomness):
    if batch == 0:
        # nothing to map over: learn the output's structure and shapes from a zero sample
        from ..ops.creation import zeros
        sample = [leaf if d is None else
                  zeros(leaf.shape[:d] + leaf.shape[d + 1:], dtype=leaf.dtype,
                        device=leaf.device) for leaf, d in zip(leaves, dims)]
        return [func(*unflatten(sample, spec), **kwargs)], True
    before = _rng_token() if randomness == "error" else None
    results = []
    for i in range(batch):
        # 'same': every sample but the last draws inside fork_rng, which puts the generators
        # back, so all see the same numbers and the stream moves on once
        same = randomness == "same" and i < batch - 1
        with _random.fork_rng(enabled=same):
            results.append(func(*_sample(leaves, dims, spec, i), **kwargs))
        if before is not None:
            if _rng_token() != before:
                raise RuntimeError("vmap: called random operation while in randomness error "
                                   "mode. Please either use the 'same' or 'different' "
                                   "randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
            before = None
    return results, False


def _stack(outputs, out_dims, name, batch):
    from ..ops.shape import stack
    results, empty = outputs
    flat = [flatten(r) for r in results]
    spec = flat[0][1]
    dims = broadcast_prefix(out_dims, results[0], _is_dim)
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                         "compatible with the structure of `outputs`. out_dims has structure "
                         f"{_structure(out_dims)} but outputs has structure "
                         f"{_structure(results[0])}.")
    stacked = []
    for k, d in enumerate(dims):
        first = flat[0][0][k]
        if d is None:
            stacked.append(first)
            continue
        if not isinstance(first, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(first)}. Did you mean to set out_dims= to None for output?")
        if empty:
            n = first.dim() + 1
            if not -n <= d < n:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-n}, {n - 1}], but got {d})")
            shape = list(first.shape)
            shape.insert(d % n, 0)
            stacked.append(first.new_zeros(shape))
            continue
        stacked.append(stack([f[0][k] for f in flat], d))
    return unflatten(stacked, spec)
