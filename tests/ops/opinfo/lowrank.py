"""Op-table entries for `svd_lowrank` and `pca_lowrank` (torch and torch.functional). Their
random sketch differs between libraries and calls, so values are compared where they do not
depend on it: the singular values when q covers the whole rank (then also gradchecked), and
shapes and dtypes of the full (U, S, V)."""
import numpy as np

from . import OpInfo, Sample, register


def _full_rank_samples(rng):
    return [Sample((rng.standard_normal((5, 3)),), {"q": 3}),
            Sample((rng.standard_normal((3, 6)),), {"q": 3}),
            Sample((rng.standard_normal((2, 4, 4)),), {"q": 4, "niter": 1})]


def _meta_samples(rng):
    return [Sample((rng.standard_normal((8, 5)),)), Sample((rng.standard_normal((4, 9)),),
                                                           {"q": 2}),
            Sample((rng.standard_normal((3, 7, 6)),), {"q": 3, "niter": 0}),
            Sample((rng.standard_normal((5, 4)) + 1j * rng.standard_normal((5, 4)),), {"q": 2},
                   grad=())]


def _pca_samples(rng):
    return [Sample((rng.standard_normal((6, 3)),), {"q": 3}),
            Sample((rng.standard_normal((6, 3)),), {"q": 3, "center": False}),
            Sample((rng.standard_normal((6, 3)),), {"q": 4}, raises=ValueError),
            Sample((rng.standard_normal((6, 3)),), {"niter": -1}, raises=ValueError)]


register(
    OpInfo("svd_lowrank", lambda lib, a, **k: lib.svd_lowrank(a, **k)[1], _full_rank_samples,
           variant="S", gradgrad=False, covers=("functional.svd_lowrank",)),
    OpInfo("svd_lowrank", lambda lib, a, **k: tuple(lib.svd_lowrank(a, **k)), _meta_samples,
           variant="meta", parity="meta", grad=False),
    OpInfo("pca_lowrank", lambda lib, a, **k: lib.pca_lowrank(a, **k)[1], _pca_samples,
           variant="S", gradgrad=False, covers=("functional.pca_lowrank",)),
    OpInfo("pca_lowrank", lambda lib, a, **k: tuple(lib.functional.pca_lowrank(a, **k)),
           _meta_samples, variant="meta", parity="meta", grad=False),
)
