"""Where a rank's shard of a DTensor lies in the whole tensor."""
from .placement_types import Shard, _StridedShard

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(global_shape, mesh, placements):
    """(this rank's local shape, the global index of its first element) for a tensor of
    `global_shape` laid out by `placements` on `mesh`; ((0, ...), ()) for a rank outside it.
    Shards of one dimension on several mesh dimensions nest: each splits the previous one's
    chunk."""
    coordinate = mesh.get_coordinate()
    if coordinate is None:
        return (0,) * len(global_shape), ()
    shape, offset = list(global_shape), [0] * len(global_shape)
    for mesh_dim, placement in enumerate(placements):
        if isinstance(placement, _StridedShard):
            raise NotImplementedError("a _StridedShard's local elements are not one "
                                      "contiguous block of the global tensor")
        if isinstance(placement, Shard):
            dim = placement.dim % len(shape)
            size, start = Shard.local_shard_size_and_offset(shape[dim], mesh.size(mesh_dim),
                                                            coordinate[mesh_dim])
            shape[dim] = size
            offset[dim] += start
    return tuple(shape), tuple(offset)
