"""Op-table entries for `ember/ops/spatial.py`: pad, interpolate/upsample, grid_sample,
affine_grid, pixel and channel shuffles."""
import numpy as np

from . import F, OpInfo, Sample, integers, randn, register, top


def pad_samples(rng):
    x = randn(rng, 2, 3, 4, 5)
    out = [
        Sample((x, (1, 2))),
        Sample((x, (1, 2, 0, 3)), dict(value=1.5)),
        Sample((x, (-1, 2, 1, -2, 1, 0, 0, 1))),
        Sample((integers(rng, 3, 4), (2, 1)), dict(value=7)),
        Sample((x, (1, 1)), noncontig=(0,)),
        Sample((x, (1,)), raises=RuntimeError),
        Sample((x, (1,) * 10), raises=RuntimeError),
        Sample((x, (-3, -3)), raises=RuntimeError),
        Sample((x, (1, 1)), dict(mode="foo"), raises=NotImplementedError),
        Sample((x, (1.5, 1)), raises=TypeError),
    ]
    for mode in ("reflect", "replicate", "circular"):
        out += [
            Sample((x, (1, 2, 3, 0)), dict(mode=mode)),
            Sample((x[0], (2, 1)), dict(mode=mode)),
            Sample((randn(rng, 2, 2, 3, 4, 5), (1, 2, 2, 1, 0, 2)), dict(mode=mode)),
            Sample((x, (1, -1, 0, 1)), dict(mode=mode)),
            Sample((x, (1, 1)), dict(mode=mode), raises=NotImplementedError),
            Sample((x, (1, 1, 1, 1)), dict(mode=mode, value=2.0), raises=RuntimeError),
        ]
    out += [Sample((x, (5, 1, 0, 0)), dict(mode="reflect"), raises=RuntimeError),
            Sample((x, (6, 0, 1, 1)), dict(mode="circular"), raises=RuntimeError),
            Sample((x[0], (-6, 0)), dict(mode="replicate"), raises=RuntimeError)]
    return out


register(OpInfo("pad", F("pad"), pad_samples))
register(OpInfo("constant_pad_nd", top("constant_pad_nd"), lambda rng: [
    Sample((randn(rng, 3, 4), (1, 2, -1, 1)), dict(value=2.0)),
    Sample((randn(rng, 2, 3, 4), (2, 0))),
    Sample((randn(rng, 3, 4), (1,)), raises=RuntimeError)]))


def interp_samples(rng):
    x1, x2, x3 = randn(rng, 2, 3, 7), randn(rng, 2, 2, 5, 6), randn(rng, 1, 2, 3, 4, 5)
    out = []
    for mode, x in (("nearest", x2), ("nearest-exact", x2), ("nearest", x1), ("nearest", x3),
                    ("nearest-exact", x3), ("area", x2), ("area", x1)):
        out += [Sample((x,), dict(size=(4,) * (x.ndim - 2), mode=mode)),
                Sample((x,), dict(scale_factor=1.7, mode=mode)),
                Sample((x,), dict(scale_factor=0.6, mode=mode, recompute_scale_factor=True))]
    for mode, x in (("linear", x1), ("bilinear", x2), ("bicubic", x2), ("trilinear", x3)):
        for ac in (False, True):
            out += [Sample((x,), dict(size=(4,) * (x.ndim - 2), mode=mode, align_corners=ac)),
                    Sample((x,), dict(scale_factor=2.3, mode=mode, align_corners=ac)),
                    Sample((x,), dict(scale_factor=0.7, mode=mode, align_corners=ac,
                                      recompute_scale_factor=True))]
    # antialias: the filter widens with the scale when shrinking, so a larger input
    x4 = randn(rng, 1, 2, 11, 13)
    for mode in ("bilinear", "bicubic", "lanczos"):
        for ac in ((False, True) if mode != "lanczos" else (False,)):
            aa = dict(mode=mode, antialias=True, align_corners=ac)
            out += [Sample((x4,), dict(size=(4, 5), **aa)),
                    Sample((x2,), dict(size=(3, 9), **aa)),
                    Sample((x2,), dict(scale_factor=2.3, **aa)),
                    Sample((x4,), dict(scale_factor=(0.45, 1.0), **aa)),
                    Sample((x4,), dict(scale_factor=0.6, recompute_scale_factor=True, **aa))]
    img = rng.integers(0, 256, (1, 3, 9, 10)).astype(np.uint8)
    out += [
        Sample((img,), dict(size=(4, 7), mode="bilinear", antialias=True), grad=()),
        Sample((img,), dict(size=(13, 5), mode="bicubic", antialias=True), grad=()),
        Sample((img,), dict(size=(4, 7), mode="lanczos", antialias=True), grad=()),
        Sample((img,), dict(size=(13, 5), mode="bicubic", align_corners=True), grad=()),
        Sample((img,), dict(size=(4, 7), mode="bilinear"), grad=()),
        Sample((integers(rng, 1, 2, 5, 6),), dict(size=3, mode="bilinear", antialias=True),
               raises=NotImplementedError),
        Sample((integers(rng, 1, 2, 5, 6),), dict(size=3, mode="bicubic"),
               raises=NotImplementedError),
        Sample((img[0],), dict(size=3, mode="linear"), raises=NotImplementedError),
        Sample((x1,), dict(size=3, mode="linear", antialias=True), raises=ValueError),
        Sample((x2,), dict(size=3, mode="nearest", antialias=True), raises=ValueError),
        Sample((x2,), dict(size=3, mode="lanczos"), raises=ValueError),
        Sample((x2,), dict(size=3, mode="lanczos", antialias=True, align_corners=True),
               raises=ValueError),
        Sample((x1,), dict(size=3, mode="lanczos"), raises=NotImplementedError),
        Sample((x2,), dict(size=(0, 3), mode="bicubic", antialias=True), raises=RuntimeError),
    ]
    out += [
        Sample((x2,), dict(size=(3, 8), mode="bilinear"), noncontig=(0,)),
        Sample((x2,), dict(size=(1, 1), mode="bicubic", align_corners=True)),
        Sample((x2,), dict(size=(3, 4), scale_factor=2), raises=ValueError),
        Sample((x2,), dict(), raises=ValueError),
        Sample((x2,), dict(size=(3,)), raises=ValueError),
        Sample((x2,), dict(size=(0, 3)), raises=RuntimeError),
        Sample((x2,), dict(size=3, align_corners=True), raises=ValueError),
        Sample((x2,), dict(size=3, mode="linear"), raises=NotImplementedError),
        Sample((x1,), dict(size=3, mode="bilinear"), raises=NotImplementedError),
        Sample((x2,), dict(size=3, recompute_scale_factor=True), raises=ValueError),
    ]
    return out


register(OpInfo("interpolate", F("interpolate"), interp_samples, atol=2e-5))
register(OpInfo("upsample", F("upsample"), lambda rng: [
    Sample((randn(rng, 2, 2, 4, 5),), dict(scale_factor=2, mode="bilinear", align_corners=False)),
    Sample((randn(rng, 2, 2, 4),), dict(size=7))]))
register(OpInfo("upsample_nearest", F("upsample_nearest"), lambda rng: [
    Sample((randn(rng, 2, 2, 4, 5),), dict(scale_factor=2)),
    Sample((randn(rng, 1, 2, 4, 5),), dict(size=(3, 7)))]))
register(OpInfo("upsample_bilinear", F("upsample_bilinear"), lambda rng: [
    Sample((randn(rng, 2, 2, 4, 5),), dict(scale_factor=2)),
    Sample((randn(rng, 1, 2, 4, 5),), dict(size=(3, 7)))]))


def grid(rng, *shape):
    """Grid values away from pixel boundaries' kinks is not possible for every size; a wide
    uniform range exercises every padding mode's out-of-range handling."""
    return rng.uniform(-1.3, 1.3, shape)


def grid_samples(rng):
    x = randn(rng, 2, 3, 4, 5)
    g = grid(rng, 2, 3, 4, 2)
    out = []
    for mode in ("bilinear", "nearest", "bicubic"):
        for pm in ("zeros", "border", "reflection"):
            for ac in (False, True):
                out.append(Sample((x, g), dict(mode=mode, padding_mode=pm, align_corners=ac)))
    x3, g3 = randn(rng, 1, 2, 3, 4, 3), grid(rng, 1, 2, 3, 2, 3)
    out += [
        Sample((x3, g3), dict(align_corners=False)),
        Sample((x3, g3), dict(padding_mode="reflection", align_corners=True)),
        Sample((x3, g3), dict(mode="nearest", padding_mode="border", align_corners=False)),
        Sample((x, g)),  # warns about align_corners
        Sample((x, g), dict(align_corners=False), noncontig=(0,)),
        Sample((randn(rng, 1, 2, 1, 3), grid(rng, 1, 2, 2, 2)),
               dict(mode="bicubic", padding_mode="reflection", align_corners=True)),
        Sample((x3, g3), dict(mode="bicubic", align_corners=False), raises=RuntimeError),
        Sample((x, g), dict(mode="foo"), raises=ValueError),
        Sample((x, g), dict(padding_mode="foo"), raises=ValueError),
        Sample((x, grid(rng, 2, 3, 4, 3)), dict(align_corners=False), raises=RuntimeError),
        Sample((x, grid(rng, 3, 3, 4, 2)), dict(align_corners=False), raises=RuntimeError),
    ]
    return out


register(OpInfo("grid_sample", F("grid_sample"), grid_samples))
register(OpInfo("grid_sampler", top("grid_sampler"), lambda rng: [
    Sample((randn(rng, 2, 3, 4, 5), grid(rng, 2, 3, 4, 2), 0, 0, False)),
    Sample((randn(rng, 2, 3, 4, 5), grid(rng, 2, 3, 4, 2), 1, 2, True)),
    Sample((randn(rng, 2, 3, 4, 5), grid(rng, 2, 3, 4, 2), 2, 1, False)),
    Sample((randn(rng, 1, 2, 3, 4, 5), grid(rng, 1, 2, 2, 2, 3), 0, 1, False))]))


def affine_samples(rng):
    t2, t3 = randn(rng, 2, 2, 3), randn(rng, 2, 3, 4)
    return [
        Sample((t2, (2, 3, 4, 5)), dict(align_corners=False)),
        Sample((t2, (2, 1, 1, 3)), dict(align_corners=True)),
        Sample((t3, (2, 1, 3, 4, 2)), dict(align_corners=False)),
        Sample((t3, (2, 1, 3, 4, 2)), dict(align_corners=True)),
        Sample((t2, (2, 3, 4, 5))),
        Sample((t2, (2, 3, 4)), dict(align_corners=False), raises=NotImplementedError),
        Sample((t3, (2, 3, 4, 5)), dict(align_corners=False), raises=ValueError),
        Sample((t2, (2, 3, 0, 5)), dict(align_corners=False), raises=ValueError),
    ]


register(OpInfo("affine_grid", F("affine_grid"), affine_samples))
register(OpInfo("affine_grid_generator", top("affine_grid_generator"), lambda rng: [
    Sample((randn(rng, 2, 2, 3), (2, 3, 4, 5), False)),
    Sample((randn(rng, 1, 3, 4), (1, 3, 2, 3, 4), True))]))


def shuffle_samples(rng):
    return [
        Sample((randn(rng, 2, 8, 3, 2), 2)),
        Sample((randn(rng, 9, 2, 3), 3)),
        Sample((randn(rng, 2, 2, 4, 2, 3), 1)),
        Sample((integers(rng, 1, 4, 2, 2), 2)),
        Sample((randn(rng, 2, 8, 3, 2), 2), noncontig=(0,)),
        Sample((randn(rng, 2, 3, 3, 2), 2), raises=RuntimeError),
        Sample((randn(rng, 4, 3), 2), raises=RuntimeError),
    ]


def unshuffle_samples(rng):
    return [
        Sample((randn(rng, 2, 2, 4, 6), 2)),
        Sample((randn(rng, 1, 6, 3), 3)),
        Sample((integers(rng, 1, 1, 2, 2), 2)),
        Sample((randn(rng, 2, 2, 4, 5), 2), raises=RuntimeError),
        Sample((randn(rng, 2, 2, 3, 4), 2), raises=RuntimeError),
    ]


def channel_samples(rng):
    return [
        Sample((randn(rng, 2, 6, 3, 2), 2)),
        Sample((randn(rng, 2, 6, 3), 3)),
        Sample((randn(rng, 1, 4, 2, 2, 2), 4)),
        Sample((randn(rng, 2, 6, 3, 2), 2), noncontig=(0,)),
        Sample((randn(rng, 2, 3, 4, 2), 2), raises=RuntimeError),
        Sample((randn(rng, 2, 3, 4), 0), raises=RuntimeError),
    ]


register(OpInfo("pixel_shuffle", top("pixel_shuffle"), shuffle_samples))
register(OpInfo("pixel_shuffle", F("pixel_shuffle"), shuffle_samples, variant="F"))
register(OpInfo("pixel_unshuffle", top("pixel_unshuffle"), unshuffle_samples))
register(OpInfo("pixel_unshuffle", F("pixel_unshuffle"), unshuffle_samples, variant="F"))
register(OpInfo("channel_shuffle", F("channel_shuffle"), channel_samples))
register(OpInfo("channel_shuffle", top("channel_shuffle"), channel_samples, variant="top"))
register(OpInfo("native_channel_shuffle", top("native_channel_shuffle"), lambda rng: [
    Sample((randn(rng, 2, 6, 3, 2), 3), grad=())], grad=False, gradgrad=False))
