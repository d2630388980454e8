"""Op-table entries for advanced indexing (`ember/ops/indexing.py`): `x[idx]` and `x[idx] = v`
with integer/boolean tensors and lists mixed with slices, None, Ellipsis and ints;
`index_put`/`index_put_`; `nonzero`/`argwhere`."""
import numpy as np

from . import OpInfo, Sample, randn, register


def ints(rng, *shape, high):
    return rng.integers(-high, high, shape, dtype=np.int64)


def mask(rng, *shape):
    m = rng.random(shape) < 0.5
    m.reshape(-1)[0] = True
    return m


def getitem(lib, x, idx):
    return x[idx]


def setitem(lib, x, idx, v):
    y = x.clone()
    y[idx] = v
    return y


def setitem_scalar(lib, x, idx, v):
    y = x.clone()
    y[idx] = v
    return y


def getitem_samples(rng):
    s = slice(None)
    return [
        Sample((randn(rng, 5, 4), (ints(rng, 6, high=5),))),                      # repeats, negatives
        Sample((randn(rng, 5, 4), [0, 2, -1, 2])),                                  # a list
        Sample((randn(rng, 3, 4, 5), (s, ints(rng, 2, 3, high=4)))),                # after a slice
        Sample((randn(rng, 3, 4, 5), (ints(rng, 4, high=3), s, ints(rng, 4, high=5)))),  # separated
        Sample((randn(rng, 3, 4, 5), (0, s, ints(rng, 2, high=5)))),                # int then adv
        Sample((randn(rng, 3, 4, 5), (ints(rng, 2, 1, high=3), ints(rng, 3, high=4)))),  # broadcast
        Sample((randn(rng, 3, 4, 5), (Ellipsis, ints(rng, 2, high=5)))),
        Sample((randn(rng, 3, 4, 5), (None, ints(rng, 2, high=3), None, slice(1, 3)))),
        Sample((randn(rng, 3, 4), (mask(rng, 3, 4),))),                             # full mask
        Sample((randn(rng, 3, 4, 2), (mask(rng, 3, 4),))),                          # leading dims
        Sample((randn(rng, 3, 4), (s, mask(rng, 4)))),
        Sample((randn(rng, 3, 4), (mask(rng, 3), ints(rng, 1, high=4)))),
        Sample((randn(rng, 3, 4), (True,))),
        Sample((randn(rng, 3, 4), (np.array(False), 0))),                           # 0-dim bool
        Sample((randn(rng, 3, 4), ([True, False, True],))),
        Sample((randn(rng, 4, 3), (ints(rng, 3, high=4),)), noncontig=(0,)),
        Sample((randn(rng, 3, 4), (np.zeros(0, np.int64),))),
        Sample((randn(rng), (True,))),
        # errors
        Sample((randn(rng, 3, 4), (np.array([0, 3]),)), raises=IndexError),
        Sample((randn(rng, 3, 4), (np.array([1, 0]), np.array([0, 9]))), raises=IndexError),
        Sample((randn(rng, 3, 4), (s, np.array([-5]))), raises=IndexError),
        Sample((randn(rng, 3, 4), (np.array([0, 1]), np.array([0, 1, 2]))), raises=IndexError),
        Sample((randn(rng, 3, 4), (np.ones(2, bool),)), raises=IndexError),
        Sample((randn(rng, 3, 4), (np.array([0.0]),)), raises=IndexError),
        Sample((randn(rng, 3, 4), (np.array([0], np.int16),)), raises=IndexError),
        Sample((randn(rng, 3, 4), (0, 0, [0])), raises=IndexError),
        Sample((randn(rng, 3, 4), 1.5), raises=IndexError),
    ]


def setitem_samples(rng):
    s = slice(None)
    return [
        Sample((randn(rng, 5, 4), (np.array([0, 2, -1]),), randn(rng, 3, 4))),
        Sample((randn(rng, 5, 4), (np.array([0, 2, -1]),), randn(rng, 4))),          # broadcast v
        Sample((randn(rng, 5, 4), (np.array([0, 2]),), randn(rng, 1, 2, 4))),        # leading 1s
        Sample((randn(rng, 3, 4, 5), (0, s, np.array([1, 3])), randn(rng, 4, 2))),  # CopySlices
        Sample((randn(rng, 3, 4, 5), (np.array([0, 2]), s, np.array([1, 3])), randn(rng, 2, 4))),
        Sample((randn(rng, 3, 4), (mask(rng, 3, 4),), randn(rng))),
        Sample((randn(rng, 3, 4), (s, mask(rng, 4)), randn(rng, 3, 1))),
        Sample((randn(rng, 4, 3), (np.array([1, 3]),), randn(rng, 2, 3)), noncontig=(0,)),
        Sample((randn(rng, 3, 4), (np.array([0, 1]),), randn(rng, 3)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), (np.array([0, 5]),), randn(rng, 4)), raises=IndexError),
    ]


def setitem_scalar_samples(rng):
    return [
        Sample((randn(rng, 3, 4), (np.array([0, 2]),), 1.5)),
        Sample((randn(rng, 3, 4), (mask(rng, 3, 4),), -2.0)),
        Sample((randn(rng, 3, 4), (1, np.array([0, 2])), 0.0)),
    ]


def index_put_samples(rng):
    return [
        Sample((randn(rng, 5, 4), (np.array([0, 2, -1]),), randn(rng, 3, 4))),
        Sample((randn(rng, 5, 4), (np.array([0, 2, 0]),), randn(rng, 4)), {"accumulate": True}),
        Sample((randn(rng, 5, 4), (np.array([0, 2]), np.array([[1], [3]])), randn(rng, 2, 2)),
               {"accumulate": True}),
        Sample((randn(rng, 3, 4), (None, np.array([1, 1, 3])), randn(rng, 3, 3)),
               {"accumulate": True}, raises=TypeError),
        Sample((randn(rng, 3, 4), (mask(rng, 3, 4),), randn(rng))),
        Sample((randn(rng, 3, 4), (mask(rng, 3),), randn(rng, 4)), {"accumulate": True}),
        Sample((randn(rng, 3, 4), (np.array([0, 1]),), randn(rng, 3)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), (np.array([0, 1]),), np.ones(4, np.float32)),
               raises=RuntimeError),
    ]


def copy_samples(rng):
    return [
        Sample((randn(rng, 3, 4), randn(rng, 3, 4))),
        Sample((randn(rng, 3, 4), randn(rng, 4))),                                  # broadcast
        Sample((randn(rng, 3, 4), np.arange(12).reshape(3, 4))),                    # cast
        Sample((randn(rng, 4, 3), randn(rng, 4, 3)), noncontig=(0, 1)),
        Sample((randn(rng, 3, 4), randn(rng, 2, 4)), raises=RuntimeError),
    ]


def copy_into_slice(lib, x, src):
    y = x.clone()
    y[1:, ::2].copy_(src)
    return y


def nonzero_samples(rng):
    return [
        Sample((mask(rng, 3, 4),)),
        Sample((np.array([[1, 0], [2, 3]]),)),
        Sample((np.array(5),)),
        Sample((np.array(0.0),)),
        Sample((randn(rng, 0, 3),)),
        Sample((mask(rng, 3, 4),), {"as_tuple": True}),
        Sample((np.array(5),), {"as_tuple": True}),
    ]


register(
    OpInfo("__getitem__", getitem, getitem_samples, variant="advanced"),
    OpInfo("__setitem__", setitem, setitem_samples, variant="advanced"),
    OpInfo("__setitem__", setitem_scalar, setitem_scalar_samples, variant="advanced_scalar"),
    OpInfo("index_put", lambda lib, x, i, v, **k: lib.index_put(x, i, v, **k), index_put_samples,
           covers=("Tensor.index_put",)),
    OpInfo("index_put_", lambda lib, x, i, v, **k: x.clone().index_put_(i, v, **k),
           index_put_samples),
    OpInfo("index_put", lambda lib, x, i, v, **k: x.index_put(i, v, **k), index_put_samples,
           variant="method"),
    OpInfo("copy_", lambda lib, x, src: x.clone().copy_(src), copy_samples),
    OpInfo("copy_", copy_into_slice, lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 2, 2)))],
           variant="view"),
    OpInfo("nonzero", lambda lib, x, **k: lib.nonzero(x, **k), nonzero_samples, grad=False,
           covers=("argwhere",)),
    OpInfo("argwhere", lambda lib, x, **k: lib.argwhere(x), nonzero_samples, grad=False),
    OpInfo("nonzero", lambda lib, x, **k: x.nonzero(**k), nonzero_samples, grad=False,
           variant="method"),
)
