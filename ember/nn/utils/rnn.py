"""Variable-length sequences for the recurrent layers, as `torch.nn.utils.rnn`: the
`PackedSequence` tuple and the packing, padding and unpacking functions.

A packed sequence holds, time step after time step, the rows of the sequences still running
at that step (sequences sorted longest first); `batch_sizes[t]` says how many. Every move
between padded and packed layouts is one differentiable `index_select`, so gradients flow.
"""
from collections import namedtuple

import numpy as np

from ..._tensor import Tensor
from ... import ops

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

PackedSequence_ = namedtuple("PackedSequence_",
                             ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def _index(array, device):
    return ops.as_tensor(np.ascontiguousarray(array, dtype=np.int64), device=device)


def _cpu_ints(t):
    """A lengths / batch_sizes argument as a NumPy int64 vector."""
    if isinstance(t, Tensor):
        return np.asarray(t.detach().cpu().numpy(), dtype=np.int64).reshape(-1)
    return np.asarray([int(v) for v in t], dtype=np.int64)


def invert_permutation(permutation):
    if permutation is None:
        return None
    inverse = np.empty(permutation.numel(), dtype=np.int64)
    inverse[_cpu_ints(permutation)] = np.arange(permutation.numel(), dtype=np.int64)
    return _index(inverse, permutation.device)


class PackedSequence(PackedSequence_):
    """data: the packed rows; batch_sizes: int64 CPU tensor, rows per time step;
    sorted_indices / unsorted_indices: the batch permutation into and out of length order
    (None when the batch was already sorted)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        if not (isinstance(data, (list, tuple)) and len(data) == 2):
            raise AssertionError("expected data to be a (data, batch_sizes) pair")
        return super().__new__(cls, data[0], data[1], sorted_indices, unsorted_indices)

    def pin_memory(self):
        return self

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        kwargs = {k: v for k, v in kwargs.items() if k not in ("device", "dtype")}
        sorted_indices = None if self.sorted_indices is None else \
            self.sorted_indices.to(data.device, **kwargs)
        unsorted_indices = None if self.unsorted_indices is None else \
            self.unsorted_indices.to(data.device, **kwargs)
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        return self.to(*args, device="cuda", **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to(*args, device="cpu", **kwargs)

    def double(self):
        return self.to(dtype=_dtype("float64"))

    def float(self):
        return self.to(dtype=_dtype("float32"))

    def half(self):
        return self.to(dtype=_dtype("float16"))

    def long(self):
        return self.to(dtype=_dtype("int64"))

    def int(self):
        return self.to(dtype=_dtype("int32"))

    def short(self):
        return self.to(dtype=_dtype("int16"))

    def char(self):
        return self.to(dtype=_dtype("int8"))

    def byte(self):
        return self.to(dtype=_dtype("uint8"))

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def _dtype(name):
    from ... import dtypes
    return getattr(dtypes, name)


def _packed_order(lengths, batch_first, time, batch):
    """Rows of the flattened padded input (time-major or batch-major) in packed order, and
    the batch sizes, for `lengths` sorted longest first."""
    steps = np.arange(time)
    batch_sizes = (lengths[None, :] > steps[:, None]).sum(1)
    batch_sizes = batch_sizes[batch_sizes > 0]
    rows = []
    for t, bs in enumerate(batch_sizes):
        b = np.arange(bs)
        rows.append(b * time + t if batch_first else t * batch + b)
    return np.concatenate(rows) if rows else np.zeros(0, np.int64), batch_sizes


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    ndim = lengths.dim() if isinstance(lengths, Tensor) else np.ndim(lengths)
    if ndim != 1:  # PyTorch makes any lengths a CPU int64 tensor, then wants it 1-d
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {ndim}D "
                           "cpu Long tensor")
    lengths = _cpu_ints(lengths)
    if enforce_sorted:
        sorted_indices = None
    else:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        sorted_indices = _index(order, input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    batch = input.shape[0 if batch_first else 1]
    time = input.shape[1 if batch_first else 0]
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    if len(lengths) and lengths.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if np.any(lengths[1:] > lengths[:-1]):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability.")
    if len(lengths) and lengths[0] > time:
        raise RuntimeError(f"Expected sequence length to be at most {time}, but got "
                           f"{lengths[0]}")
    rows, batch_sizes = _packed_order(lengths, batch_first, time, batch)
    flat = input.reshape((time * batch,) + tuple(input.shape[2:]))
    data = flat.index_select(0, _index(rows, input.device))
    return PackedSequence(data, _index(batch_sizes, "cpu"), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    data, batch_sizes_t = sequence.data, sequence.batch_sizes
    batch_sizes = _cpu_ints(batch_sizes_t)
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_len}")
        max_len = total_length
    batch = int(batch_sizes[0]) if len(batch_sizes) else 0
    lengths = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(1)
    # each padded slot takes a packed row, or the extra padding row at the end
    index = np.full((batch, max_len) if batch_first else (max_len, batch), data.shape[0],
                    dtype=np.int64)
    offset = 0
    for t, bs in enumerate(batch_sizes):
        if batch_first:
            index[:bs, t] = np.arange(offset, offset + bs)
        else:
            index[t, :bs] = np.arange(offset, offset + bs)
        offset += bs
    pad_row = data.new_full((1,) + tuple(data.shape[1:]), padding_value)
    padded = ops.cat([data, pad_row]).index_select(0, _index(index.reshape(-1), data.device))
    padded = padded.reshape(index.shape + tuple(data.shape[1:]))
    lengths_t = _index(lengths, "cpu")
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths_t = _index(lengths[_cpu_ints(sequence.unsorted_indices)], "cpu")
    return padded, lengths_t


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    if not (isinstance(sequences, Tensor) or
            (hasattr(sequences, "__iter__") and
             all(isinstance(s, Tensor) for s in sequences))):
        raise RuntimeError("Expected `sequences` to be a Tensor or an iterable of Tensors, but "
                           f"got {type(sequences)}")
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    sequences = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    lengths = [s.shape[0] if s.ndim else 1 for s in sequences]
    trailing = tuple(sequences[0].shape[1:])
    batch, max_len = len(sequences), max(lengths)
    total = sum(lengths)
    index = np.full((batch, max_len), total, dtype=np.int64)
    offset = 0
    for b, n in enumerate(lengths):
        start = 0 if padding_side == "right" else max_len - n
        index[b, start:start + n] = np.arange(offset, offset + n)
        offset += n
    if not batch_first:
        index = index.T
    first = sequences[0]
    pad_row = first.new_full((1,) + trailing, padding_value)
    flat = ops.cat([_fitted(s, n, trailing) for s, n in zip(sequences, lengths)] + [pad_row])
    out = flat.index_select(0, _index(index.reshape(-1), first.device))
    return out.reshape(index.shape + trailing)


def _fitted(seq, n, trailing):
    """`seq` as the n rows it fills in the padded output, whose trailing sizes are the first
    sequence's: PyTorch copies each one in, so it broadcasts (and names the sizes that do not)."""
    seq = seq.reshape((n,) + tuple(seq.shape[1:]))
    if tuple(seq.shape[1:]) == trailing:
        return seq
    for dim, (want, got) in enumerate(zip(trailing, seq.shape[1:]), 1):
        if got not in (want, 1) and seq.ndim == len(trailing) + 1:
            raise RuntimeError(f"The size of tensor a ({want}) must match the size of tensor b "
                               f"({got}) at non-singleton dimension {dim}")
    return seq.expand((n,) + trailing)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, _cpu_ints(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    lengths = _index([s.size(0) for s in sequences], "cpu")
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
