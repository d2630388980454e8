"""Op-table entries for `ember/ops/pooling/`: max/avg/adaptive/lp pooling (functional and
top-level forms) and max unpooling."""
import numpy as np

from . import F, OpInfo, Sample, positive, randn, register, top


def distinct(rng, *shape):
    """Values without ties (max pooling's gradient is ambiguous on ties), well separated so
    finite differences never swap a maximum."""
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) * 0.1 - n * 0.05).astype(np.float64)


def max_samples(nd):
    def samples(rng):
        s = (7, 6, 5)[:nd]
        x = distinct(rng, 2, 2, *s)
        return [
            Sample((x, 2)),
            Sample((x, 3), dict(stride=2, padding=1)),
            Sample((x, (2,) * nd), dict(stride=(1,) * nd, dilation=(2,) * nd, ceil_mode=True)),
            Sample((x, 3), dict(stride=2, ceil_mode=True, padding=1)),
            Sample((distinct(rng, 3, *s), 2)),                       # unbatched
            Sample((x, 2), noncontig=(0,)),
            Sample((x, 3), dict(padding=2), raises=RuntimeError),
            Sample((x, 9), raises=RuntimeError),
            Sample((x, 2), dict(stride=0), raises=RuntimeError),
            Sample((randn(rng, *s[:1]), 2), raises=RuntimeError),
        ]
    return samples


def max_indices_samples(nd, kw=None):
    def samples(rng):
        s = (7, 6, 5)[:nd]
        x = distinct(rng, 2, 2, *s)
        extra = dict(kw or {})
        return [Sample((x, 2), extra), Sample((x, 3), dict(extra, stride=2, padding=1)),
                Sample((x, 2), dict(extra, ceil_mode=True, dilation=1))]
    return samples


for _nd in (1, 2, 3):
    register(OpInfo(f"max_pool{_nd}d", F(f"max_pool{_nd}d"), max_samples(_nd)))
    register(OpInfo(f"max_pool{_nd}d", F(f"max_pool{_nd}d"),
                    max_indices_samples(_nd, {"return_indices": True}), variant="indices",
                    covers=(f"max_pool{_nd}d_with_indices",), grad=False, gradgrad=False))
register(OpInfo("max_pool1d", top("max_pool1d"), max_samples(1), variant="top"))
register(OpInfo("max_pool2d", top("max_pool2d"), max_samples(2), variant="top"))


def avg_samples(nd):
    def samples(rng):
        s = (7, 6, 5)[:nd]
        x = randn(rng, 2, 2, *s)
        out = [
            Sample((x, 2)),
            Sample((x, 3), dict(stride=2, padding=1)),
            Sample((x, 3), dict(stride=2, padding=1, count_include_pad=False, ceil_mode=True)),
            Sample((x, (2,) * nd), dict(stride=(1,) * nd, ceil_mode=True)),
            Sample((randn(rng, 3, *s), 2)),
            Sample((x, 2), noncontig=(0,)),
            Sample((x, 3), dict(padding=2), raises=RuntimeError),
            Sample((x, 2), dict(stride=0), raises=RuntimeError),
        ]
        if nd > 1:
            out.append(Sample((x, 3), dict(padding=1, divisor_override=4, ceil_mode=True)))
            out.append(Sample((x, 2), dict(divisor_override=0), raises=RuntimeError))
        return out
    return samples


for _nd in (1, 2, 3):
    register(OpInfo(f"avg_pool{_nd}d", F(f"avg_pool{_nd}d"), avg_samples(_nd)))
register(OpInfo("avg_pool1d", top("avg_pool1d"), avg_samples(1), variant="top"))


def adaptive_samples(nd, kind):
    def samples(rng):
        s = (7, 6, 5)[:nd]
        gen = distinct if kind == "max" else randn
        x = gen(rng, 2, 2, *s)
        out = [
            Sample((x, 3)),
            Sample((x, (4, 3, 2)[:nd])),
            Sample((x, 1)),
            Sample((x, tuple(s))),
            Sample((gen(rng, 3, *s), 2)),
            Sample((x, 2), noncontig=(0,)),
            Sample((randn(rng, *s[:1]), 2), raises=RuntimeError),
        ]
        if nd > 1:
            out.append(Sample((x, (None,) + (2,) * (nd - 1))))
        return out
    return samples


for _nd in (1, 2, 3):
    register(OpInfo(f"adaptive_avg_pool{_nd}d", F(f"adaptive_avg_pool{_nd}d"),
                    adaptive_samples(_nd, "avg")))
    register(OpInfo(f"adaptive_max_pool{_nd}d", F(f"adaptive_max_pool{_nd}d"),
                    adaptive_samples(_nd, "max")))
    register(OpInfo(f"adaptive_max_pool{_nd}d", F(f"adaptive_max_pool{_nd}d"),
                    lambda rng, nd=_nd: [Sample((distinct(rng, 2, 2, *(7, 6, 5)[:nd]), 3),
                                                dict(return_indices=True))],
                    variant="indices", covers=(f"adaptive_max_pool{_nd}d_with_indices",),
                    grad=False, gradgrad=False))
register(OpInfo("adaptive_avg_pool1d", top("adaptive_avg_pool1d"), adaptive_samples(1, "avg"),
                variant="top"))


def lp_samples(nd):
    def samples(rng):
        s = (7, 6, 5)[:nd]
        x = positive(rng, 2, 2, *s)
        return [Sample((x, 2, 2)), Sample((x, 3, 3), dict(stride=2, ceil_mode=True)),
                Sample((x, 1.5, 2), dict(stride=1))]
    return samples


for _nd in (1, 2, 3):
    register(OpInfo(f"lp_pool{_nd}d", F(f"lp_pool{_nd}d"), lp_samples(_nd)))


def unpool_call(nd):
    """Pool a detached copy for indices, then unpool a differentiable slice of x."""
    def call(lib, x, kernel, **kwargs):
        out, idx = getattr(lib.nn.functional, f"max_pool{nd}d")(x.detach(), kernel,
                                                               return_indices=True)
        return getattr(lib.nn.functional, f"max_unpool{nd}d")(_pooled(lib, x, out), idx, kernel,
                                                             **kwargs)
    return call


def _pooled(lib, x, out):
    """A differentiable tensor with the pooled shape: the first entries of x."""
    return x[tuple(slice(0, s) for s in out.shape)]


def unpool_samples(nd):
    def samples(rng):
        s = (6, 4, 4)[:nd]
        x = distinct(rng, 2, 2, *s)
        out = [Sample((x, 2)), Sample((x, 2), dict(stride=2))]
        if nd == 2:
            out.append(Sample((x, 2), dict(output_size=(7, 5))))
            out.append(Sample((x, 2), dict(output_size=(9, 9)), raises=ValueError))
        return out
    return samples


for _nd in (1, 2, 3):
    register(OpInfo(f"max_unpool{_nd}d", unpool_call(_nd), unpool_samples(_nd)))
