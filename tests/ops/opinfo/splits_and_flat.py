"""Op-table entries for split_with_sizes, the unsafe splits (pieces sharing memory without
being views), ravel, diagflat and broadcast_shapes (ember/ops/rearrange.py)."""
from . import OpInfo, Sample, integers, randn, register


def _pieces(ts):
    """The pieces with whether each is a view and its storage offset (unsafe ones are not)."""
    return tuple((t, t._is_view(), t.is_contiguous()) for t in ts)


def _sizes(rng):
    return [
        Sample((randn(rng, 3, 4), [1, 2])),
        Sample((randn(rng, 3, 4), [1, 3], 1)),
        Sample((randn(rng, 3, 4), (0, 4, 0), -1)),
        Sample((randn(rng, 4, 3), [2, 2]), noncontig=(0,)),
        Sample((integers(rng, 3, 4), [3, 1], 1)),
        Sample((randn(rng, 3, 4), [1, 1]), raises=RuntimeError),
        Sample((randn(rng, 3, 4), [-1, 4]), raises=RuntimeError),
        Sample((randn(rng, 3, 4), [1, 3], 2), raises=IndexError),
        Sample((randn(rng, 3, 4), 2), raises=TypeError),
    ]


def _split(rng):
    return [
        Sample((randn(rng, 3, 4), 2, 1)),
        Sample((randn(rng, 5, 2), 2)),
        Sample((randn(rng, 3, 4), 4, -1)),
        Sample((randn(rng, 4, 3), 3), noncontig=(0,)),
        Sample((randn(rng, 3, 4), 0, 1), raises=RuntimeError),
    ]


def _chunk(rng):
    return [Sample((randn(rng, 3, 4), 2, 1)), Sample((randn(rng, 5, 2), 3)),
            Sample((randn(rng, 3, 4), 0, 1), raises=RuntimeError)]


def _unsafe_write(lib, x):
    """Writing a piece in place is allowed and tracked (not a view); the input sees it."""
    y = x.clone()
    a, b = lib.unsafe_split(y, 2, 1)
    b.mul_(2)
    return a, b, y.detach().clone(), y._version, b._version


def _flat(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng),)), Sample((randn(rng, 4, 3),), noncontig=(0,)),
            Sample((randn(rng, 2, 0),)), Sample((integers(rng, 2, 3),))]


def _diagflat(rng):
    return [Sample((randn(rng, 3),)), Sample((randn(rng, 2, 2),)), Sample((randn(rng, 3), 1)),
            Sample((randn(rng, 3), -2)), Sample((randn(rng),)),
            Sample((randn(rng, 3, 2),), noncontig=(0,)), Sample((integers(rng, 4), 1))]


def _shapes(rng):
    return [Sample(((3, 1), (4,))), Sample(()), Sample((2, (3, 1))), Sample(([2, 1], [1, 0])),
            Sample(((0,), (1,))), Sample(((1, 3), (2, 1), (5, 1, 1))),
            Sample(((3,), (4,)), raises=RuntimeError),
            Sample(((3, 2), (4, 1, 5)), raises=RuntimeError),
            Sample(((2,), (3,), (4,)), raises=RuntimeError),
            Sample(((-1,), (4,)), raises=ValueError),
            Sample(((2.0,),), raises=TypeError)]


register(
    OpInfo("split_with_sizes", lambda lib, x, *a: _pieces(lib.split_with_sizes(x, *a)), _sizes),
    OpInfo("split_with_sizes", lambda lib, x, *a: x.split_with_sizes(*a), _sizes, variant="method"),
    OpInfo("split_with_sizes", lambda lib, x: x.split_with_sizes([1, 3], dim=1),
           lambda rng: [Sample((randn(rng, 2, 4),))], variant="keyword"),
    OpInfo("unsafe_split", lambda lib, x, *a: _pieces(lib.unsafe_split(x, *a)), _split),
    OpInfo("unsafe_split", lambda lib, x, *a: x.unsafe_split(*a), _split, variant="method"),
    # PyTorch's gradient ignores the write into the input through the piece ("unsafe"), so
    # only parity runs here
    OpInfo("unsafe_split", _unsafe_write, lambda rng: [Sample((randn(rng, 3, 4),))], variant="write",
           grad=False),
    OpInfo("unsafe_chunk", lambda lib, x, *a: _pieces(lib.unsafe_chunk(x, *a)), _chunk),
    OpInfo("unsafe_chunk", lambda lib, x, *a: x.unsafe_chunk(*a), _chunk, variant="method"),
    OpInfo("unsafe_split_with_sizes", lambda lib, x, *a: _pieces(lib.unsafe_split_with_sizes(x, *a)),
           _sizes),
    OpInfo("unsafe_split_with_sizes", lambda lib, x, *a: x.unsafe_split_with_sizes(*a), _sizes,
           variant="method"),
    OpInfo("ravel", lambda lib, x: lib.ravel(x), _flat),
    OpInfo("ravel", lambda lib, x: (x.ravel(), x.ravel()._is_view()), _flat, variant="method"),
    OpInfo("diagflat", lambda lib, x, *a: lib.diagflat(x, *a), _diagflat),
    OpInfo("diagflat", lambda lib, x, *a: x.diagflat(*a), _diagflat, variant="method"),
    OpInfo("broadcast_shapes", lambda lib, *s: lib.broadcast_shapes(*s), _shapes, grad=False),
)
