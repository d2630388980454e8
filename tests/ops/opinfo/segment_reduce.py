"""Op-table entries for `ember/ops/segment_reduce.py`: segment_reduce. Gradient samples avoid
ties (max/min split a tie's gradient, which finite differences cannot see) and outputs that do
not move with the data (an empty segment's NaN or infinity): those, NaN propagation and the
gradient of ties and NaNs are in tests/ops/test_segment_reduce.py. PyTorch has no double
backward for it (gradgrad off; the error is checked there too)."""
import numpy as np

from . import OpInfo, Sample, randn, register, top

REDUCES = ("sum", "mean", "max", "min", "prod")


def _i(*values, dtype=np.int64):
    return np.array(values, dtype)


def _samples(rng):
    out = []
    for r in REDUCES:
        out += [
            Sample((randn(rng, 6), r), {"lengths": _i(2, 1, 3)}),
            Sample((randn(rng, 5, 3), r), {"offsets": _i(0, 2, 5)}, noncontig=(0,)),
            Sample((randn(rng, 2, 5, 3), r), {"lengths": _i([1, 4, 0], [0, 2, 3]), "axis": 1,
                                              "initial": 0.5}),
            Sample((randn(rng, 2, 3, 4), r), {"lengths": _i([[1, 3], [2, 2], [4, 0]],
                                                            [[0, 4], [1, 3], [2, 2]]),
                                              "axis": -1, "initial": -2.0}),
            Sample((randn(rng, 7), r), {"offsets": _i(1, 3, 4, 6), "unsafe": True}),
            Sample((randn(rng, 6), r), {"lengths": _i(2, 0, 4)}, grad=() if r in (
                "mean", "max", "min") else None),  # an empty segment's NaN / -inf / inf
        ]
    x6 = lambda: randn(rng, 6)  # noqa: E731
    out += [
        Sample((np.array([1.0, 0.0, 3.0, 2.0, 0.0, 0.0, 4.0]), "prod"), {"lengths": _i(3, 1, 3)}),
        Sample((np.array([1.0, 0.0, 3.0, 2.0]), "prod"), {"lengths": _i(3, 0, 1),
                                                          "initial": 2.0}),
        Sample((x6(), "amax"), {"lengths": _i(2, 4)}), Sample((x6(), "amin"), {"lengths": _i(6)}),
        Sample((x6(), "sum"), {"lengths": _i(2, 4, dtype=np.int32)}),
        Sample((x6(), "sum"), {"lengths": _i(1, 5), "offsets": _i(0, 3, 6)}),  # offsets win
        Sample((x6(), "sum"), {"lengths": _i(2, 3), "unsafe": True}),
        Sample((np.zeros((0, 3)), "sum"), {"lengths": _i(0, 0)}),
        Sample((np.array([1.0, np.nan, 3.0, 4.0]), "max"), {"lengths": _i(2, 2)}, grad=()),
        Sample((np.array([1.0, np.nan, 3.0, 4.0]), "mean"), {"lengths": _i(2, 2),
                                                            "initial": 1.0}, grad=()),
        Sample((np.array([1.0, 2.0], np.float16), "prod"), {"lengths": _i(1, 0, 1)}, grad=()),
    ]
    bad = lambda kwargs, raises=RuntimeError, reduce="sum", data=None: Sample(  # noqa: E731
        (x6() if data is None else data, reduce), kwargs, raises=raises)
    out += [
        bad({"lengths": _i(6)}, reduce="foo"),
        bad({"lengths": _i(6)}, reduce="Sum"),
        bad({}),
        bad({"lengths": _i(6), "indices": _i(0)}),
        bad({"indices": _i(0)}, reduce="foo"),  # indices are refused first
        bad({"lengths": _i(2, 3)}),
        bad({"lengths": _i(2, -1, 5)}),
        bad({"lengths": _i(2, -1, 5), "unsafe": True}),
        bad({"offsets": _i(0, 4, 3, 6)}),
        bad({"lengths": _i(6), "axis": 1}, IndexError),
        bad({"lengths": _i(6), "axis": -2}, IndexError),
        bad({"lengths": _i([6])}),  # data.dim() >= lengths.dim()
        bad({"lengths": _i([3], [2]), "axis": 0}, data=randn(rng, 2, 3)),
        bad({"lengths": _i([1, 2], [3, 1]), "axis": 1}, data=randn(rng, 2, 3)),
        bad({"offsets": np.array([], np.int64)}),
        bad({"lengths": np.array([], np.int64)}),
        bad({"lengths": _i(6, dtype=np.int16)}, NotImplementedError),
        bad({"offsets": _i(0, 6, dtype=np.uint8)}, NotImplementedError),
        bad({"lengths": _i(6)}, NotImplementedError, data=_i(1, 2, 3, 4, 5, 6)),
        bad({"lengths": _i(3)}, NotImplementedError, data=np.array([1, 2, 3], np.int32)),
        bad({"lengths": _i(6), "initial": 1e300}, data=x6().astype(np.float32)),
        bad({"lengths": _i(6), "initial": "a"}, TypeError),
        bad({"lengths": _i(6), "unsafe": 1}, TypeError),
        bad({"lengths": _i(6), "axis": 0.0}, TypeError),
        bad({"lengths": [6]}, TypeError),
    ]
    return out


register(OpInfo("segment_reduce", top("segment_reduce"), _samples, gradgrad=False))
