"""Op-table entries for `ember/ops/linear_loss.py`: F.linear_cross_entropy."""
import numpy as np

from . import F, OpInfo, Sample, randn, register


def _samples(rng):
    labels = rng.integers(0, 3, 4)
    return [
        Sample((randn(rng, 4, 5), randn(rng, 3, 5), labels)),
        Sample((randn(rng, 4, 5), randn(rng, 3, 5), labels),
               {"linear_bias": randn(rng, 3), "reduction": "sum", "label_smoothing": 0.1}),
        Sample((randn(rng, 5), randn(rng, 3, 5), np.array(2)), {"weight": rng.uniform(0.5, 1, 3)},
               grad=(0, 1)),
        Sample((randn(rng, 4, 5), randn(rng, 3, 2, 5), rng.integers(0, 3, (4, 2))),
               {"linear_bias": randn(rng, 3, 2), "reduction": "none", "ignore_index": 1}),
        Sample((randn(rng, 4, 5), randn(rng, 3, 5), rng.dirichlet(np.ones(3), 4))),
        Sample((randn(rng, 4, 5), randn(rng, 3, 4), labels), raises=RuntimeError),
        Sample((randn(rng, 5), randn(rng, 3, 2, 5), labels), raises=RuntimeError),
        Sample((randn(rng, 4, 5), randn(rng, 3, 5), rng.dirichlet(np.ones(3), 4)),
               {"ignore_index": 0}, raises=RuntimeError),
    ]


register(OpInfo("linear_cross_entropy", F("linear_cross_entropy"), _samples,
                covers=("nn.functional.linear_cross_entropy",)))
