"""How a DTensor lies on one dimension of its device mesh: `Shard(dim)` (each rank holds
one chunk of tensor dimension `dim`, chunked as `Tensor.chunk` does, so the last ranks may
hold less or nothing), `Replicate()` (each rank holds all of it), `Partial(op)` (each rank
holds a summand: the tensor is their reduction). `_StridedShard(dim, split_factor)` is a
shard of a dimension already split `split_factor` ways: each rank holds its chunk of every
one of those parts, concatenated."""
from ... import ops as _ops

__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class Placement:
    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False

    def is_partial(self, reduce_op=None):
        return False


class Shard(Placement):
    def __init__(self, dim=0):
        self.dim = dim

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    @staticmethod
    def local_shard_size_and_offset(curr_local_size, num_chunks, rank):
        """(size, offset) of `rank`'s chunk of a dimension of `curr_local_size` split in
        `num_chunks` as `chunk` splits: full chunks first, then the remainder, then nothing."""
        chunk = -(-curr_local_size // num_chunks)
        offset = min(chunk * rank, curr_local_size)
        return max(0, min(curr_local_size, offset + chunk) - offset), offset

    _local_shard_size_and_offset = local_shard_size_and_offset

    def _split_tensor(self, tensor, num_chunks, *, with_padding=True, contiguous=True):
        """(the num_chunks chunks, empty ones included; the padding each needed to reach
        the first's size). `with_padding` pads them with zeros to that size."""
        if self.dim >= tensor.dim() or self.dim < -tensor.dim():
            raise AssertionError(f"Sharding dim {self.dim} greater than tensor ndim "
                                 f"{tensor.dim()}")
        pieces = list(tensor.chunk(num_chunks, dim=self.dim)) if tensor.size(self.dim) else []
        empty_shape = list(tensor.shape)
        empty_shape[self.dim] = 0
        while len(pieces) < num_chunks:
            pieces.append(tensor.new_zeros(empty_shape))
        pad = []
        if with_padding:
            full = -(-tensor.size(self.dim) // num_chunks)
            pad = [full - p.size(self.dim) for p in pieces]
            pieces = [_pad(p, self.dim, n) for p, n in zip(pieces, pad)]
        if contiguous:
            pieces = [p.contiguous() for p in pieces]
        return pieces, pad

    def _local_piece(self, tensor, num_chunks, index):
        return self._split_tensor(tensor, num_chunks, with_padding=False)[0][index]

    def _assemble(self, pieces):
        """The tensor whose chunks, in rank order, are `pieces`."""
        return _ops.cat(pieces, dim=self.dim)

    def __eq__(self, other):
        return type(other) is type(self) and other.dim == self.dim

    def __hash__(self):
        return hash((type(self), self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):
        return f"S({self.dim})"


def _pad(tensor, dim, extra):
    """`tensor` with `extra` zeros appended along `dim`."""
    if not extra:
        return tensor
    shape = list(tensor.shape)
    shape[dim] = extra
    return _ops.cat([tensor, tensor.new_zeros(shape)], dim=dim)


class _StridedShard(Shard):
    def __init__(self, dim, *, split_factor):
        super().__init__(dim)
        self.split_factor = split_factor

    def _local_piece(self, tensor, num_chunks, index):
        parts = Shard(self.dim)._split_tensor(tensor, self.split_factor, with_padding=False)[0]
        return _ops.cat([Shard(self.dim)._local_piece(p, num_chunks, index) for p in parts],
                        dim=self.dim)

    def _assemble(self, pieces):
        """Each rank's piece holds its chunk of every part: regroup by part."""
        split = [self._part_sizes(p) for p in pieces]
        by_rank = [list(p.split(sizes, dim=self.dim)) for p, sizes in zip(pieces, split)]
        parts = [_ops.cat([chunks[i] for chunks in by_rank], dim=self.dim)
                 for i in range(self.split_factor)]
        return _ops.cat(parts, dim=self.dim)

    def _part_sizes(self, piece):
        """How a rank's piece divides among the parts: equal shares of an evenly divisible
        dimension (the layout transformers' fused projections use)."""
        size = piece.size(self.dim)
        if size % self.split_factor:
            raise NotImplementedError("_StridedShard: gathering a dimension that does not "
                                      "divide evenly into split_factor parts")
        return [size // self.split_factor] * self.split_factor

    def __eq__(self, other):
        return type(other) is type(self) and (other.dim, other.split_factor) == \
            (self.dim, self.split_factor)

    def __hash__(self):
        return hash((type(self), self.dim, self.split_factor))

    def __repr__(self):
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"

    def __str__(self):
        return f"_S({self.dim}, {self.split_factor})"


class Replicate(Placement):
    def is_replicate(self):
        return True

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return -1

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"


class Partial(Placement):
    def __init__(self, reduce_op="sum"):
        self.reduce_op = reduce_op

    def is_partial(self, reduce_op=None):
        return reduce_op is None or reduce_op == self.reduce_op

    def __eq__(self, other):
        return isinstance(other, Partial) and other.reduce_op == self.reduce_op

    def __hash__(self):
        return 1 + hash(self.reduce_op)

    def __repr__(self):
        return f"Partial({self.reduce_op})"

    def __str__(self):
        return f"P({self.reduce_op})"
