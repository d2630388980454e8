"""Op-table entries for `ember/ops/distance.py` (cosine_similarity, pairwise_distance,
cdist, pdist) and `ember/ops/attention.py` (scaled_dot_product_attention)."""
import numpy as np

from . import F, OpInfo, Sample, integers, randn, register, top


def spread(rng, *shape):
    """Values on a coarse lattice plus noise: differences stay away from 0 (the kinks of
    p-norms below 2), and no two distances tie (p=inf)."""
    return rng.integers(-20, 20, shape) * 0.25 + rng.uniform(-0.05, 0.05, shape)


def cosine_samples(rng):
    return [
        Sample((randn(rng, 4, 5), randn(rng, 4, 5))),
        Sample((randn(rng, 3, 4, 5), randn(rng, 4, 5)), dict(dim=-1)),
        Sample((randn(rng, 4, 1), randn(rng, 1, 5)), dict(dim=0, eps=1e-3)),
        Sample((randn(rng, 6), randn(rng, 6)), dict(dim=0)),
        Sample((randn(rng, 4, 5), randn(rng, 4, 5)), noncontig=(0, 1)),
        Sample((integers(rng, 3), integers(rng, 3)), dict(dim=0), raises=RuntimeError),
    ]


def pairwise_samples(rng):
    a, b = spread(rng, 4, 5), spread(rng, 4, 5)
    return [
        Sample((a, b)),
        Sample((a, b), dict(p=1)),
        Sample((a, b), dict(p=3.5, keepdim=True)),
        Sample((a, b), dict(p=float("inf"))),
        Sample((spread(rng, 3, 4, 5), spread(rng, 5)), dict(eps=1e-3)),
        Sample((spread(rng, 4, 5), spread(rng, 2, 5)), raises=RuntimeError),
    ]


def cdist_samples(rng):
    a, b = spread(rng, 2, 4, 3), spread(rng, 5, 3)
    out = [Sample((a, b), dict(p=p)) for p in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf"))]
    out += [
        Sample((spread(rng, 30, 3), spread(rng, 6, 3))),   # matmul form beyond 25 rows
        Sample((spread(rng, 4, 3), spread(rng, 6, 3)), dict(compute_mode="use_mm_for_euclid_dist")),
        Sample((spread(rng, 30, 3), spread(rng, 6, 3)),
               dict(compute_mode="donot_use_mm_for_euclid_dist")),
        Sample((spread(rng, 3, 1, 4, 3), spread(rng, 2, 5, 3)), dict(p=1.0)),
        Sample((a, b), noncontig=(0,)),
        Sample((randn(rng, 3, 4), randn(rng, 3, 5)), raises=RuntimeError),
        Sample((randn(rng, 4), randn(rng, 3, 4)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), randn(rng, 3, 4)), dict(p=-1.0), raises=RuntimeError),
        Sample((randn(rng, 3, 4), randn(rng, 3, 4)), dict(compute_mode="x"), raises=ValueError),
    ]
    return out


def pdist_samples(rng):
    x = spread(rng, 5, 3)
    return [Sample((x,), dict(p=p)) for p in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf"))] + [
        Sample((spread(rng, 1, 3),)),
        Sample((randn(rng, 2, 3, 4),), raises=RuntimeError),
        Sample((x,), dict(p=-1.0), raises=RuntimeError),
    ]


register(OpInfo("cosine_similarity", F("cosine_similarity"), cosine_samples))
register(OpInfo("cosine_similarity", top("cosine_similarity"), cosine_samples, variant="top"))
register(OpInfo("pairwise_distance", F("pairwise_distance"), pairwise_samples))
register(OpInfo("pairwise_distance", top("pairwise_distance"), pairwise_samples, variant="top"))
register(OpInfo("cdist", top("cdist"), cdist_samples, atol=2e-5))
register(OpInfo("pdist", F("pdist"), pdist_samples))
register(OpInfo("pdist", top("pdist"), pdist_samples, variant="top"))


def sdpa_samples(rng):
    q, k, v = randn(rng, 2, 3, 4, 8), randn(rng, 2, 3, 5, 8), randn(rng, 2, 3, 5, 6)
    bool_mask = rng.random((4, 5)) > 0.4
    bool_mask[:, 0] = True
    dead = bool_mask.copy()
    dead[1] = False
    return [
        Sample((q, k, v)),
        Sample((q, k, v), dict(scale=0.3)),
        Sample((q, k, v), dict(scale=-0.5)),
        Sample((q, randn(rng, 2, 3, 4, 8), v[:, :, :4]), dict(is_causal=True)),
        Sample((q, k, v), dict(attn_mask=bool_mask)),
        Sample((q, k, v), dict(attn_mask=dead), grad=(0, 1, 2)),
        Sample((q, k, v), dict(attn_mask=randn(rng, 4, 5))),
        Sample((q, k[:, :1], v[:, :1]), dict(enable_gqa=True)),
        Sample((randn(rng, 4, 8), randn(rng, 5, 8), randn(rng, 5, 3))),
        Sample((q, k, v), noncontig=(0, 1)),
        Sample((q, k, v), dict(attn_mask=bool_mask, is_causal=True), raises=RuntimeError),
    ]


register(OpInfo("scaled_dot_product_attention", F("scaled_dot_product_attention"),
                sdpa_samples, atol=2e-5))


def sdpa_dropout(lib, *args, **kwargs):
    lib.manual_seed(0)
    return lib.nn.functional.scaled_dot_product_attention(*args, dropout_p=0.5, **kwargs)


register(OpInfo("scaled_dot_product_attention", sdpa_dropout, lambda rng: [
    Sample((randn(rng, 2, 4, 8), randn(rng, 2, 5, 8), randn(rng, 2, 5, 6)))],
    variant="dropout", parity="meta"))
