"""`torch.nn.parallel.comm`: moving tensors between GPUs for data parallelism: broadcast copies
to several devices, scatter splits across them, gather concatenates back, reduce_add sums.
Devices are CUDA indices (ints), `"cuda:i"` strings or devices; gather also takes "cpu"
(or, deprecated, -1). ember copies device to device through its `Tensor.to`, so every result
is part of the autograd graph of its input, as the functions PyTorch builds on these are."""
import warnings

from ... import ops
from ...cuda._utils import _get_device_index
from ...device import device as _device

__all__ = ["broadcast", "broadcast_coalesced", "reduce_add", "reduce_add_coalesced", "scatter",
           "gather"]


def _target(index):
    return _device("cpu") if index == -1 else _device("cuda", index)


def _on(tensor, index):
    """`tensor` on the device of `index`: itself when it is there already."""
    target = _target(index)
    return tensor if tensor.device == target else tensor.to(target)


def _one_of(devices, out, what="devices"):
    if (devices is None) == (out is None):
        raise RuntimeError(f"Exactly one of '{what}' and 'out' must be specified, but got "
                           f"{what}={devices} and out={out}")


def broadcast(tensor, devices=None, *, out=None):
    """`tensor` copied to each of `devices` (a tuple), or into each tensor of `out`."""
    _one_of(devices, out)
    if devices is not None:
        return tuple(_on(tensor, _get_device_index(d)) for d in devices)
    for o in out:
        if o.shape != tensor.shape:
            raise RuntimeError(f"output tensor shape {list(o.shape)} does not match input "
                               f"shape {list(tensor.shape)}")
        o.copy_(tensor)
    return tuple(out)


def broadcast_coalesced(tensors, devices, buffer_size=10485760):
    """Each of `tensors` (all on `devices[0]`) broadcast to `devices`: one tuple of copies per
    device. (PyTorch packs small tensors into buffers of `buffer_size` bytes for the transfer;
    the copies are the same.)"""
    devices = [_get_device_index(d) for d in devices]
    for t in tensors:
        if t.get_device() != devices[0]:
            raise RuntimeError("all tensors must be on devices[0]: "
                               f"{devices[0]}")
    return [tuple(_on(t, d) for t in tensors) for d in devices]


def reduce_add(inputs, destination=None):
    """The sum of `inputs` (one per GPU, all the same size), on `destination` (which must hold
    one of them)."""
    destination = _get_device_index(destination, optional=True)
    size = inputs[0].size()
    root = None
    for i, inp in enumerate(inputs):
        if inp.device.type == "cpu":
            raise AssertionError(f"reduce_add expects all inputs to be on GPUs, but input {i} is "
                                 "on CPU")
        if inp.get_device() == destination:
            root = i
        if inp.size() != size:
            got, expected = "x".join(map(str, inp.size())), "x".join(map(str, size))
            raise ValueError(f"input {i} has invalid size: got {got}, but expected {expected}")
    if root is None:
        raise RuntimeError("reduce_add expects destination to be on the same GPU with one of the "
                           "tensors")
    if len(inputs) == 1:
        return inputs[0]
    result = inputs[root].clone()
    for i, inp in enumerate(inputs):
        if i != root:
            result = result + _on(inp, destination)
    return result


def reduce_add_coalesced(inputs, destination=None, buffer_size=10485760):
    """`inputs[d][k]` is tensor k on device d: the k-th result is the sum over d, on
    `destination`."""
    if len({len(per_device) for per_device in inputs}) > 1:
        raise AssertionError("inputs must hold the same number of tensors for every device")
    return tuple(reduce_add(list(same), destination) for same in zip(*inputs))


def scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None, *, out=None):
    """`tensor` split along `dim` (evenly, or by `chunk_sizes`), one piece per device (or copied
    into the tensors of `out`)."""
    if out is None:
        if devices is None:
            raise RuntimeError("Exactly one of 'devices' and 'out' must be specified, but got "
                               "devices=None and out=None")
        devices = [_get_device_index(d) for d in devices]
        if chunk_sizes is not None:
            if len(chunk_sizes) != len(devices):
                raise RuntimeError(f"Expected devices and chunk_sizes to be of same length, but "
                                   f"got len(chunk_sizes) == {len(chunk_sizes)} and "
                                   f"len(devices) == {len(devices)}")
            pieces = ops.split(tensor, list(chunk_sizes), dim)
        else:
            pieces = ops.chunk(tensor, len(devices), dim)
        return tuple(_on(p.contiguous(), d) for p, d in zip(pieces, devices))
    if devices is not None:
        raise RuntimeError("'devices' must not be specified when 'out' is specified, but got "
                           f"devices={devices}")
    if chunk_sizes is not None:
        raise RuntimeError("'chunk_sizes' must not be specified when 'out' is specified, but got "
                           f"chunk_sizes={chunk_sizes}")
    pieces = ops.split(tensor, [o.size(dim) for o in out], dim)
    for o, p in zip(out, pieces):
        o.copy_(p)
    return tuple(out)


def gather(tensors, dim=0, destination=None, *, out=None):
    """`tensors` (from several GPUs) concatenated along `dim` on `destination` (a GPU, "cpu",
    or the current GPU for None), or into `out`."""
    if out is not None:
        if destination is not None:
            raise RuntimeError("'destination' must not be specified when 'out' is specified, but "
                               f"got destination={destination}")
        out.copy_(ops.cat([t.to(out.device) for t in tensors], dim))
        return out
    if destination == -1:
        warnings.warn('Using -1 to represent CPU tensor is deprecated. Please use a device object '
                      'or string instead, e.g., "cpu".', FutureWarning, stacklevel=2)
    destination = _get_device_index(destination, optional=True, allow_cpu=True)
    return ops.cat([_on(t, destination) for t in tensors], dim)
