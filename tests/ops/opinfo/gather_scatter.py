"""Op-table entries for `ember/ops/gather_scatter/`: gather, the scatter family, index_*,
masked ops, take/put, take_along_dim, searchsorted, bucketize."""
import numpy as np

from . import OpInfo, Sample, method, positive, randn, register, top as fn


def idx(rng, *shape, high):
    return rng.integers(0, high, shape, dtype=np.int64)


def perm_rows(rng, n, k):
    """k distinct indices below n (scatter without repeats: a gradient exists)."""
    return rng.permutation(n)[:k].astype(np.int64)


def distinct(rng, *shape):
    n = int(np.prod(shape, dtype=np.int64))
    return ((rng.permutation(n) - n / 2 + 0.25) * 0.5).reshape(shape)


def unique_scatter_index(rng, shape, dim, high):
    """An index of `shape` whose entries along `dim` are distinct within each line."""
    lines = np.moveaxis(np.zeros(shape, np.int64), dim, -1)
    flat = lines.reshape(-1, shape[dim])
    for r in range(flat.shape[0]):
        flat[r] = rng.permutation(high)[:shape[dim]]
    return np.moveaxis(flat.reshape(lines.shape), -1, dim)


def mask(rng, *shape):
    m = rng.random(shape) < 0.5
    m.reshape(-1)[0] = True
    return m


def inplace(name):
    return lambda lib, x, *a, **k: getattr(x.clone(), name)(*a, **k)


# ---- samples ------------------------------------------------------------------------------------
def gather_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 0, idx(rng, 2, 4, high=3))),
        Sample((randn(rng, 3, 4), 1, idx(rng, 3, 6, high=4))),
        Sample((randn(rng, 3, 4), -1, idx(rng, 2, 2, high=4))),                   # smaller index
        Sample((randn(rng, 2, 3, 4), 1, idx(rng, 2, 5, 4, high=3))),
        Sample((randn(rng, 4, 3), 0, idx(rng, 2, 3, high=4)), noncontig=(0,)),
        Sample((randn(rng), 0, np.array(0))),
        Sample((randn(rng, 3), 0, np.zeros(0, np.int64))),
        Sample((randn(rng, 3, 4), 0, np.array([[0, 3]])), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 1, np.array([[0, -1]])), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 0, np.array([[0, 1]], np.int16)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 0, np.array([0, 1])), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 0, np.zeros((1, 5), np.int64)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 2, np.zeros((1, 2), np.int64)), raises=IndexError),
    ]


def scatter_src_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 0, unique_scatter_index(rng, (2, 4), 0, 3), randn(rng, 2, 4))),
        Sample((randn(rng, 3, 5), 1, unique_scatter_index(rng, (3, 2), 1, 5), randn(rng, 3, 2))),
        # a src larger than the index: PyTorch's backward has no gradient for src then
        Sample((randn(rng, 3, 5), 1, unique_scatter_index(rng, (3, 2), 1, 5), randn(rng, 3, 4)),
               grad=(0,)),
        Sample((randn(rng, 2, 3, 4), -1, unique_scatter_index(rng, (2, 2, 3), 2, 4),
                randn(rng, 2, 2, 3))),
        Sample((randn(rng, 4, 3), 0, unique_scatter_index(rng, (2, 3), 0, 4), randn(rng, 2, 3)),
               noncontig=(0, 3)),
        Sample((randn(rng, 3, 4), 0, np.array([[0, 3]]), randn(rng, 1, 2)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 0, np.array([[0, 1]]), randn(rng, 1, 1)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 0, np.array([[0, 1]]), np.ones((1, 2), np.float32)),
               raises=RuntimeError),
        Sample((randn(rng, 3, 4), 0, np.array([0, 1]), randn(rng, 2)), raises=RuntimeError),
    ]


def scatter_value_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 0, idx(rng, 2, 4, high=3), 1.5)),
        Sample((randn(rng, 3, 4), 1, idx(rng, 3, 2, high=4)), {"value": -2.0}),
        Sample((np.arange(12).reshape(3, 4), 1, idx(rng, 3, 2, high=4), 7)),
    ]


def scatter_reduce_kw_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 0, idx(rng, 4, 4, high=3), randn(rng, 4, 4)),
               {"reduce": "add"}, grad=()),
        Sample((randn(rng, 3, 4), 0, idx(rng, 4, 4, high=3), randn(rng, 4, 4)),
               {"reduce": "multiply"}, grad=()),
        Sample((randn(rng, 3, 4), 1, idx(rng, 3, 4, high=4), 2.0), {"reduce": "multiply"},
               grad=()),
        Sample((np.arange(12).reshape(3, 4), 1, idx(rng, 3, 4, high=4), 3), {"reduce": "add"}),
        Sample((randn(rng, 3, 4), 1, idx(rng, 3, 4, high=4), 2.0), {"reduce": "mean"},
               raises=RuntimeError),
    ]


def scatter_add_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 0, idx(rng, 5, 4, high=3), randn(rng, 5, 4))),
        Sample((randn(rng, 3, 4), 1, idx(rng, 2, 6, high=4), randn(rng, 2, 6))),
        Sample((randn(rng, 3, 4), 1, idx(rng, 2, 6, high=4), randn(rng, 3, 7)), grad=(0,)),
        Sample((randn(rng, 2, 3, 4), 1, idx(rng, 2, 5, 2, high=3), randn(rng, 2, 5, 2))),
        Sample((randn(rng), 0, np.array([0, 0]), randn(rng, 2))),
        Sample((np.arange(12).reshape(3, 4), 0, idx(rng, 5, 4, high=3),
                np.arange(20).reshape(5, 4))),
        Sample((randn(rng, 3, 4), 0, np.array([[0, 5]]), randn(rng, 1, 2)), raises=RuntimeError),
    ]


def scatter_reduce_samples(rng):
    out = []
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            vals = positive(rng, 32) if reduce == "prod" else distinct(rng, 32)
            out.append(Sample((vals[:12].reshape(3, 4), 0, idx(rng, 5, 4, high=3),
                               vals[12:].reshape(5, 4), reduce), {"include_self": include_self}))
    out += [
        Sample((distinct(rng, 3, 5), 1, idx(rng, 3, 6, high=5), distinct(rng, 3, 6) + 0.125,
                "amax")),
        Sample((np.arange(6).reshape(2, 3), 0, np.zeros((1, 3), np.int64),
                np.array([[1, 2, 4]]), "mean")),
        Sample((np.arange(6).reshape(2, 3), 0, np.zeros((2, 3), np.int64),
                np.array([[1, 2, 4], [3, -1, 2]]), "amin"), {"include_self": False}),
        Sample((randn(rng, 3, 4), 0, idx(rng, 2, 4, high=3), randn(rng, 2, 4), "max"), grad=()),
        Sample((randn(rng, 3, 4), 0, idx(rng, 2, 4, high=3), randn(rng, 2, 4), "foo"),
               raises=RuntimeError),
    ]
    return out


def scatter_reduce_zero_samples(rng):
    """prod with zeros in self and src (one zero per slot and several): values and gradients."""
    x = positive(rng, 3, 4)
    x[0, 1] = 0.0
    src = positive(rng, 4, 4)
    src[0, 0] = 0.0
    return [Sample((x, 0, np.array([[0, 1, 2, 0], [1, 0, 2, 1], [2, 2, 0, 0], [0, 1, 1, 2]]),
                    src, "prod"))]


def index_select_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 0, np.array([0, 2, 0, 1]))),
        Sample((randn(rng, 3, 4), 1, np.array([3, 3], np.int32))),
        Sample((randn(rng, 3, 4), -1, np.array(2))),
        Sample((randn(rng, 4, 3), 0, np.array([1, 3])), noncontig=(0,)),
        Sample((randn(rng, 3, 4), 0, np.zeros(0, np.int64))),
        Sample((randn(rng), 0, np.array([0]))),
        Sample((randn(rng, 3, 4), 0, np.array([0, 3])), raises=IndexError),
        Sample((randn(rng, 3, 4), 0, np.array([[0, 1]])), raises=IndexError),
        Sample((randn(rng, 3, 4), 0, np.array([0, 1], np.int16)), raises=RuntimeError),
    ]


def index_add_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 0, np.array([0, 2, 0, 1]), randn(rng, 4, 4))),
        Sample((randn(rng, 3, 4), 1, np.array([3, 3], np.int32), randn(rng, 3, 2)),
               {"alpha": 2.5}),
        Sample((randn(rng, 4, 3), 0, np.array([1, 3]), randn(rng, 2, 3)), noncontig=(0, 3)),
        Sample((randn(rng), 0, np.array([0]), randn(rng))),
        Sample((np.arange(12).reshape(3, 4), 0, np.array([0, 0]), np.ones((2, 4), np.int64)),
               {"alpha": 3}),
        Sample((randn(rng, 3, 4), 0, np.array([0, 5]), randn(rng, 2, 4)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 0, np.array([0, 1]), randn(rng, 2, 3)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 0, np.array([0, 1, 1]), randn(rng, 2, 4)), raises=RuntimeError),
    ]


def index_copy_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 0, np.array([2, 0]), randn(rng, 2, 4))),
        Sample((randn(rng, 3, 4), 1, np.array([3, 1, 0]), randn(rng, 3, 3))),
        Sample((randn(rng, 4, 3), 0, np.array([1, 3]), randn(rng, 2, 3)), noncontig=(0, 3)),
        Sample((randn(rng), 0, np.array([0]), randn(rng))),
        Sample((randn(rng, 3, 4), 0, np.array([0, 5]), randn(rng, 2, 4)), raises=IndexError),
        Sample((randn(rng, 3, 4), 0, np.array([0, 1]), randn(rng, 3, 4)), raises=IndexError),
        Sample((randn(rng, 3, 4), 0, np.array([0, 1], np.int32), randn(rng, 2, 4)),
               raises=RuntimeError),
        Sample((randn(rng, 3, 4), 0, np.array([0, 1]), randn(rng, 2, 3)), raises=RuntimeError),
    ]


def index_fill_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 0, np.array([2, 0]), 1.5)),
        Sample((randn(rng, 3, 4), 1, np.array([3, 0]), randn(rng))),
        Sample((randn(rng, 3, 4), 1, np.array([3, -1]), randn(rng)), grad=()),
        Sample((np.arange(12).reshape(3, 4), 1, np.array([1]), 2.5)),
        Sample((randn(rng, 3, 4), 0, np.array([0, 5]), 1.0), raises=IndexError),
        Sample((randn(rng, 3, 4), 0, np.array([0]), randn(rng, 1)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 0, np.array([0], np.int32), 1.0), raises=IndexError),
    ]


def masked_fill_samples(rng):
    return [
        Sample((randn(rng, 3, 4), mask(rng, 3, 4), 1.5)),
        Sample((randn(rng, 3, 4), mask(rng, 4), randn(rng))),
        Sample((randn(rng, 3, 4), mask(rng, 3, 4), -2.0), noncontig=(0, 1)),
        Sample((np.arange(12).reshape(3, 4), mask(rng, 3, 4), 2.7)),
        Sample((randn(rng, 3, 4), np.ones(4, np.uint8), 1.0), raises=RuntimeError),
        Sample((randn(rng, 3, 4), mask(rng, 4), randn(rng, 1)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), mask(rng, 5), 1.0), raises=RuntimeError),
    ]


def masked_fill_broadcast_samples(rng):
    return [Sample((randn(rng, 4), mask(rng, 3, 4), 1.5)),
            Sample((randn(rng, 4), mask(rng, 3, 4), randn(rng)))]


def masked_select_samples(rng):
    return [
        Sample((randn(rng, 3, 4), mask(rng, 3, 4))),
        Sample((randn(rng, 3, 4), mask(rng, 4))),
        Sample((randn(rng, 4), mask(rng, 2, 4))),
        Sample((randn(rng, 4, 3), mask(rng, 4, 3)), noncontig=(0,)),
        Sample((randn(rng, 3, 4), np.ones(4, np.uint8)), raises=RuntimeError),
    ]


def masked_scatter_samples(rng):
    return [
        Sample((randn(rng, 3, 4), mask(rng, 3, 4), randn(rng, 3, 5))),
        Sample((randn(rng, 3, 4), mask(rng, 4), randn(rng, 12))),
        Sample((randn(rng, 3, 4), np.ones(4, bool), randn(rng, 5)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), np.ones(4, np.uint8), randn(rng, 12)), raises=RuntimeError),
    ]


def take_samples(rng):
    return [
        Sample((randn(rng, 3, 4), np.array([0, 11, -1, 5, 5]))),
        Sample((randn(rng, 3, 4), np.array([[0, 2], [3, 3]]))),
        Sample((randn(rng, 4, 3), np.array([1, 2])), noncontig=(0,)),
        Sample((randn(rng), np.array([0, 0]))),
        Sample((randn(rng, 3, 4), np.array([0, 12])), raises=IndexError),
        Sample((randn(rng, 3, 4), np.array([0, 1], np.int32)), raises=RuntimeError),
    ]


def put_samples(rng):
    return [
        Sample((randn(rng, 3, 4), np.array([0, 11, -2]), randn(rng, 3))),
        Sample((randn(rng, 3, 4), np.array([[0, 5], [5, 5]]), randn(rng, 4)),
               {"accumulate": True}),
        Sample((randn(rng, 3, 4), np.array([0, 13]), randn(rng, 2)), raises=IndexError),
        Sample((randn(rng, 3, 4), np.array([0, 1]), randn(rng, 3)), raises=IndexError),
        Sample((randn(rng, 3, 4), np.array([0, 1], np.int32), randn(rng, 2)), raises=RuntimeError),
    ]


def take_along_dim_samples(rng):
    return [
        Sample((randn(rng, 3, 4), idx(rng, 3, 2, high=4), 1)),
        Sample((randn(rng, 3, 4), idx(rng, 5, 1, high=3), 0)),                 # broadcast
        Sample((randn(rng, 3, 1, 4), idx(rng, 1, 2, 2, high=4), -1)),
        Sample((randn(rng, 3, 4), idx(rng, 5, high=12))),                       # flattened
        Sample((randn(rng, 3, 4), np.array([[0, 1]], np.int32), 0), raises=RuntimeError),
    ]


def searchsorted_samples(rng):
    b = np.array([1.0, 3, 5, 7, 9])
    v = np.array([[3.0, 6, 9], [0, 10, 5]])
    bb = np.sort(rng.standard_normal((2, 6)), axis=-1)
    return [
        Sample((b, v)),
        Sample((b, v), {"right": True}),
        Sample((b, v), {"side": "right", "out_int32": True}),
        Sample((b, 4.0)),
        Sample((np.array([1, 3, 5]), np.array([3.5, 3, 0]))),
        Sample((bb, rng.standard_normal((2, 4)))),
        Sample((bb, bb[:, 1:3]), {"right": True}),
        Sample((np.array([5.0, 1, 3]), np.array([2.0, 4, 5])),
               {"sorter": np.array([1, 2, 0])}),
        Sample((np.array([1.0, np.nan, 3]), np.array([2.0, 4, np.nan]))),
        Sample((np.array([1.0, 2, 3]), np.array([np.nan, 2]))),
        Sample((np.zeros(0), np.array([1.0]))),
        Sample((b, v), {"side": "left", "right": True}, raises=RuntimeError),
        Sample((b, v), {"side": "lft"}, raises=RuntimeError),
        Sample((bb, v.T), raises=RuntimeError),
        Sample((bb, 1.0), raises=RuntimeError),
        Sample((np.array(1.0), v), raises=RuntimeError),
        Sample((b, v), {"sorter": np.array([0, 1, 2])}, raises=RuntimeError),
    ]


def bucketize_samples(rng):
    b = np.array([1.0, 3, 5, 7, 9])
    return [
        Sample((np.array([[3.0, 6, 9], [0, 10, 5]]), b)),
        Sample((np.array([[3.0, 6, 9], [0, 10, 5]]), b), {"right": True, "out_int32": True}),
        Sample((3, b)),
        Sample((np.array([1.0]), np.ones((2, 2))), raises=RuntimeError),
    ]


register(
    OpInfo("gather", fn("gather"), gather_samples, covers=("Tensor.gather",)),
    OpInfo("gather", method("gather"), gather_samples, variant="method"),
    OpInfo("scatter", fn("scatter"), scatter_src_samples, covers=("Tensor.scatter",)),
    OpInfo("scatter", method("scatter"), scatter_value_samples, variant="value"),
    OpInfo("scatter_", inplace("scatter_"), scatter_src_samples),
    OpInfo("scatter_", inplace("scatter_"), scatter_value_samples, variant="value"),
    OpInfo("scatter", method("scatter"), scatter_reduce_kw_samples, variant="reduce", grad=False),
    OpInfo("scatter_add", fn("scatter_add"), scatter_add_samples),
    OpInfo("scatter_add", method("scatter_add"), scatter_add_samples, variant="method"),
    OpInfo("scatter_add_", inplace("scatter_add_"), scatter_add_samples),
    OpInfo("scatter_reduce", fn("scatter_reduce"), scatter_reduce_samples),
    OpInfo("scatter_reduce", method("scatter_reduce"), scatter_reduce_zero_samples,
           variant="zeros", gradgrad=False),
    OpInfo("scatter_reduce_", inplace("scatter_reduce_"), scatter_reduce_samples),
    OpInfo("index_select", fn("index_select"), index_select_samples,
           covers=("Tensor.index_select",)),
    OpInfo("index_add", fn("index_add"), index_add_samples, covers=("Tensor.index_add",)),
    OpInfo("index_add_", inplace("index_add_"), index_add_samples),
    OpInfo("index_copy", fn("index_copy"), index_copy_samples, covers=("Tensor.index_copy",)),
    OpInfo("index_copy_", inplace("index_copy_"), index_copy_samples),
    OpInfo("index_fill", method("index_fill"), index_fill_samples),
    OpInfo("index_fill_", inplace("index_fill_"), index_fill_samples),
    OpInfo("masked_fill", fn("masked_fill"), masked_fill_samples),
    OpInfo("masked_fill", fn("masked_fill"), masked_fill_broadcast_samples, variant="broadcast"),
    OpInfo("masked_fill_", inplace("masked_fill_"), masked_fill_samples),
    OpInfo("masked_select", fn("masked_select"), masked_select_samples),
    OpInfo("masked_scatter", fn("masked_scatter"), masked_scatter_samples),
    OpInfo("masked_scatter_", inplace("masked_scatter_"), masked_scatter_samples),
    OpInfo("take", fn("take"), take_samples),
    OpInfo("put", method("put"), put_samples),
    OpInfo("put_", inplace("put_"), put_samples),
    OpInfo("take_along_dim", fn("take_along_dim"), take_along_dim_samples),
    OpInfo("searchsorted", fn("searchsorted"), searchsorted_samples, grad=False),
    OpInfo("bucketize", fn("bucketize"), bucketize_samples, grad=False),
)
