"""Op-table entries for `ember/ops/normalization/sync_stats.py`. PyTorch's CPU build runs only
batch_norm_update_stats (the others are CUDA kernels), so the rest are gradchecked here and
their values compared with PyTorch's batch norm in tests/ops/test_sync_batch_norm.py."""
import numpy as np

from . import OpInfo, Sample, positive, randn, register, top


def reg(name, samples, **kw):
    register(OpInfo(name, top(name), samples, **kw))


reg("batch_norm_stats", lambda rng: [Sample((randn(rng, 3, 4, 5), 1e-5)),
                                     Sample((randn(rng, 6, 2), 1e-3))], parity="none")
reg("batch_norm_elemt", lambda rng: [
    Sample((randn(rng, 3, 4, 5), randn(rng, 4), randn(rng, 4), randn(rng, 4), positive(rng, 4),
            1e-5)),
    Sample((randn(rng, 3, 4), None, None, randn(rng, 4), positive(rng, 4), 1e-5))],
    parity="none")


def gather_samples(with_counts):
    def samples(rng):
        last = np.array([3, 5, 4]) if with_counts else 4
        return [
            Sample((randn(rng, 4, 2), randn(rng, 3, 2), positive(rng, 3, 2), None, None, 0.1,
                    1e-5, last), grad=(1, 2)),
            Sample((randn(rng, 4, 2), randn(rng, 3, 2), positive(rng, 3, 2), randn(rng, 2),
                    positive(rng, 2), 0.3, 1e-5, last), grad=(1, 2)),
        ]
    return samples


reg("batch_norm_gather_stats", gather_samples(False), parity="none")
reg("batch_norm_gather_stats_with_counts", gather_samples(True), parity="none")
reg("batch_norm_backward_reduce", lambda rng: [
    Sample((randn(rng, 3, 4, 2), randn(rng, 3, 4, 2), randn(rng, 4), positive(rng, 4),
            randn(rng, 4), True, True, True), grad=(0, 1, 2, 3)),
    Sample((randn(rng, 3, 4), randn(rng, 3, 4), randn(rng, 4), positive(rng, 4), None, False,
            True, False), grad=(0, 1, 2, 3))], parity="none")
reg("batch_norm_backward_elemt", lambda rng: [
    Sample((randn(rng, 3, 4, 2), randn(rng, 3, 4, 2), randn(rng, 4), positive(rng, 4),
            randn(rng, 4), randn(rng, 4), randn(rng, 4), np.array([6, 6], dtype=np.int32)))],
    parity="none")
reg("batch_norm_update_stats", lambda rng: [
    Sample((randn(rng, 3, 4, 5), randn(rng, 4), positive(rng, 4), 0.1), grad=()),
    Sample((randn(rng, 5, 2), None, None, 0.2), grad=())], grad=False)
