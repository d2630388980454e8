"""Op-table entries for splitting, flipping, rolling, repeating, triangles, diagonals and
stacking (ember/ops/rearrange.py)."""
import numpy as np

from . import OpInfo, Sample, randn, register


def x345(rng):
    return [Sample((randn(rng, 3, 4, 5),))]


def vec(rng):
    return [Sample((randn(rng, 4),))]


def mat(rng):
    return [Sample((randn(rng, 4, 5),)), Sample((randn(rng, 3, 3),))]


def two_vecs(rng):
    return [Sample((randn(rng, 3), randn(rng, 2)))]


def two_mats(rng):
    return [Sample((randn(rng, 2, 3), randn(rng, 4, 3)))]


E = OpInfo
register(
    E("split", lambda lib, t: t.split(2, 1), x345, covers=("Tensor.split",)),
    E("split", lambda lib, t: lib.split(t, [1, 3], 1), x345, variant="sizes"),
    E("chunk", lambda lib, t: t.chunk(3, 2), x345),
    E("tensor_split", lambda lib, t: lib.tensor_split(t, [1, 4], 2), x345),
    E("tensor_split", lambda lib, t: t.tensor_split(3, 2), x345, variant="sections"),
    E("hsplit", lambda lib, t: lib.hsplit(t, 2), x345),
    E("vsplit", lambda lib, t: lib.vsplit(t, [1]), x345),
    E("dsplit", lambda lib, t: lib.dsplit(t, [2, 3]), x345),
    E("unflatten", lambda lib, t: t.unflatten(2, (5, 1)), x345),
    E("flip", lambda lib, t: t.flip(0, 2), x345),
    E("fliplr", lambda lib, t: lib.fliplr(t), x345),
    E("flipud", lambda lib, t: lib.flipud(t), x345),
    E("roll", lambda lib, t: lib.roll(t, (1, -2), (0, 2)), x345),
    E("roll", lambda lib, t: t.roll(5), x345, variant="flat"),
    E("rot90", lambda lib, t: lib.rot90(t, 1, (1, 2)), x345),
    E("rot90", lambda lib, t: t.rot90(3, (0, 2)), x345, variant="k3"),
    E("repeat", lambda lib, t: t.repeat(2, 1, 1, 2), x345),
    E("tile", lambda lib, t: lib.tile(t, (2,)), x345),
    E("repeat_interleave", lambda lib, t: t.repeat_interleave(2, 1), x345),
    E("repeat_interleave", lambda lib, t: t.repeat_interleave(lib.tensor([1, 0, 3]), 0), x345,
      variant="tensor"),
    E("tril", lambda lib, t: t.tril(1), x345),
    E("triu", lambda lib, t: lib.triu(t, -1), x345),
    E("tril_", lambda lib, t: t.clone().tril_(1), x345),
    E("triu_", lambda lib, t: t.clone().triu_(), x345),
    E("diagonal", lambda lib, t: t.diagonal(1, 1, 2), x345),
    E("diagonal", lambda lib, t: lib.diagonal(t, -1, 0, 2), x345, variant="neg"),
    E("diag_embed", lambda lib, t: lib.diag_embed(t, 1, 0, 2), x345),
    E("diag", lambda lib, t: lib.diag(t, 1), mat),
    E("diag", lambda lib, t: t.diag(-1), vec, variant="1d"),
    E("trace", lambda lib, t: lib.trace(t), mat),
    E("block_diag", lambda lib, a, b: lib.block_diag(a, b), two_mats),
    E("meshgrid", lambda lib, a, b: lib.meshgrid(a, b, indexing="xy"), two_vecs),
    E("meshgrid", lambda lib, a, b: lib.meshgrid(a, b, indexing="ij"), two_vecs, variant="ij"),
    E("cartesian_prod", lambda lib, a, b: lib.cartesian_prod(a, b), two_vecs),
    E("combinations", lambda lib, t: lib.combinations(t, 2), vec),
    E("combinations", lambda lib, t: lib.combinations(t, 3, with_replacement=True), vec,
      variant="replacement"),
    E("atleast_1d", lambda lib, t: lib.atleast_1d(t.sum()), vec),
    E("atleast_2d", lambda lib, t: lib.atleast_2d(t), vec),
    E("atleast_3d", lambda lib, t: lib.atleast_3d(t), mat),
    E("broadcast_tensors", lambda lib, a, b: lib.broadcast_tensors(a[:, :1], b[:1]), two_mats),
    E("hstack", lambda lib, a, b: lib.hstack([a, b[:2]]), two_mats),
    E("vstack", lambda lib, a, b: lib.vstack([a, b]), two_mats, covers=("row_stack",)),
    E("dstack", lambda lib, a, b: lib.dstack([a, b[:2]]), two_mats),
    E("column_stack", lambda lib, a, b: lib.column_stack([a[:2], b]), two_vecs),
    E("tril_indices", lambda lib: lib.tril_indices(3, 4, 1), lambda rng: [Sample(())],
      grad=False),
    E("triu_indices", lambda lib: lib.triu_indices(4, 3, -1), lambda rng: [Sample(())],
      grad=False),
)
