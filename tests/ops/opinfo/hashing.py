"""Op-table entries for `ember/ops/hashing.py`: hash_tensor."""
import numpy as np

from . import OpInfo, Sample, integers, randn, register, top

register(OpInfo("hash_tensor", top("hash_tensor"), lambda rng: [
    Sample((randn(rng, 2, 3, 4),)), Sample((randn(rng, 2, 3, 4), [1]), {"keepdim": True}),
    Sample((randn(rng, 3, 5), (0, 1))), Sample((integers(rng, 4, 5), -1)),
    Sample((np.array([True, False, True]),)), Sample((np.array([1, 2, 250], np.uint8),)),
    Sample((np.array(2.5),)),
    Sample((np.zeros((0, 3)),), raises=RuntimeError),
    Sample((np.zeros((0, 3)), 0), raises=IndexError),
    Sample((randn(rng, 3),), {"mode": 1}, raises=RuntimeError),
], grad=False, covers=("Tensor.hash_tensor",)))
