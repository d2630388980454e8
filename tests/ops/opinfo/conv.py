"""Op-table entries for `ember/ops/conv.py`: convolutions, transposed convolutions,
`torch.convolution`, and nn.functional's unfold/fold."""
from . import F, OpInfo, Sample, randn, register, top


def conv_samples(nd):
    def samples(rng):
        s = (5, 4, 6)[:nd]
        k = (3, 2, 2)[:nd]
        x, w = randn(rng, 2, 4, *s), randn(rng, 3, 4, *k)
        return [
            Sample((x, w, randn(rng, 3))),
            Sample((x, w), dict(stride=2, padding=1)),
            Sample((x, randn(rng, 4, 2, *k), randn(rng, 4)),
                   dict(stride=(2,) * nd, padding=(1,) * nd, dilation=(2,) * nd, groups=2)),
            Sample((x, randn(rng, 3, 4, *(3,) * nd)), dict(padding="same", dilation=2)),
            Sample((x, w), dict(padding="valid")),
            Sample((randn(rng, 4, *s), w)),                              # unbatched
            Sample((x, w), dict(padding=1), noncontig=(0,)),
            Sample((randn(rng, 2, 3, *s), w), raises=RuntimeError),     # channel mismatch
            Sample((randn(rng, *s), w), raises=RuntimeError),           # wrong rank
            Sample((randn(rng, 2, 4, *(1,) * nd), w), raises=RuntimeError),  # kernel too big
            Sample((x, w, randn(rng, 2)), raises=RuntimeError),         # bad bias
            Sample((x, w), dict(stride=0), raises=RuntimeError),
            Sample((x, w), dict(padding="same", stride=2), raises=RuntimeError),
            Sample((x, randn(rng, 3, 2, *k)), dict(groups=2), raises=RuntimeError),
        ]
    return samples


def conv_transpose_samples(nd):
    def samples(rng):
        s = (4, 3, 3)[:nd]
        k = (3, 2, 2)[:nd]
        x = randn(rng, 2, 4, *s)
        return [
            Sample((x, randn(rng, 4, 3, *k), randn(rng, 3))),
            Sample((x, randn(rng, 4, 3, *k)), dict(stride=2, padding=1, output_padding=1)),
            Sample((x, randn(rng, 4, 2, *k), randn(rng, 4)),
                   dict(stride=(3,) * nd, padding=(1,) * nd, output_padding=(2,) * nd,
                        groups=2)),
            Sample((x, randn(rng, 4, 1, *k)), dict(dilation=2, padding=1, output_padding=1)),
            Sample((randn(rng, 4, *s), randn(rng, 4, 3, *k))),            # unbatched
            Sample((x, randn(rng, 3, 3, *k)), raises=RuntimeError),       # channel mismatch
            Sample((x, randn(rng, 4, 3, *k)), dict(output_padding=1), raises=RuntimeError),
            Sample((x, randn(rng, 4, 3, *k)), dict(padding=4), raises=RuntimeError),
        ]
    return samples


# float32 sums in another order than PyTorch's (its kernels block differently)
TOL = dict(atol=1e-4, rtol=1e-5)

for _nd in (1, 2, 3):
    register(OpInfo(f"conv{_nd}d", top(f"conv{_nd}d"), conv_samples(_nd), **TOL))
    register(OpInfo(f"conv_transpose{_nd}d", top(f"conv_transpose{_nd}d"),
                    conv_transpose_samples(_nd), **TOL))


def convolution_samples(rng):
    x = randn(rng, 2, 2, 4, 4)
    return [
        Sample((x, randn(rng, 3, 2, 2, 2), randn(rng, 3), (1, 1), (1, 0), (1, 1), False, (0, 0), 1)),
        Sample((x, randn(rng, 2, 3, 2, 2), None, (2, 2), (0, 1), (1, 1), True, (1, 0), 1)),
    ]


register(OpInfo("convolution", top("convolution"), convolution_samples))


def unfold_samples(rng):
    return [
        Sample((randn(rng, 2, 3, 5, 4), 2)),
        Sample((randn(rng, 2, 2, 5, 6), (2, 3)), dict(dilation=(1, 2), padding=1, stride=(2, 1))),
        Sample((randn(rng, 3, 4, 4), 3), dict(padding=1)),
        Sample((randn(rng, 2, 3, 4, 4), 3), dict(stride=2), noncontig=(0,)),
        Sample((randn(rng, 1, 2, 3, 4, 5), 2), raises=RuntimeError),
        Sample((randn(rng, 1, 2, 3, 3), 5), raises=RuntimeError),
    ]


def fold_samples(rng):
    return [
        Sample((randn(rng, 2, 12, 12), (4, 5), 2)),
        Sample((randn(rng, 2, 8, 12), (5, 6), 2), dict(dilation=(1, 2), padding=(0, 1),
                                                       stride=(2, 1))),
        Sample((randn(rng, 9, 16), (4, 4), 3), dict(padding=1)),
        Sample((randn(rng, 1, 7, 16), (5, 5), 2), raises=RuntimeError),
        Sample((randn(rng, 1, 8, 15), (5, 5), 2), raises=RuntimeError),
    ]


register(OpInfo("unfold", F("unfold"), unfold_samples, variant="functional"))
register(OpInfo("fold", F("fold"), fold_samples, variant="functional"))
