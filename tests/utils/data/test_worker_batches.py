"""Batches that DataLoader workers collate reach the main process pickled; they must be
ordinary tensors there (views, strides, in-place ops, pickling, ops of their dtype), like the
ones a single-process loader gives. Also tensors over memory NumPy got from a buffer."""
import pickle

import numpy as np

import ember
from ember.utils.data import DataLoader, TensorDataset


def _check_ordinary(x, shape):
    assert x.shape == shape and x.is_contiguous()
    assert x.stride() == (shape[1], 1)
    flat = x.view(-1)
    assert flat.shape == (shape[0] * shape[1],)
    assert x.view(shape[1], shape[0]).shape == (shape[1], shape[0])
    flat[0] = 7.0  # a view writes through to its base
    assert x[0, 0].item() == 7.0
    x.add_(1)
    assert x[0, 0].item() == 8.0
    again = pickle.loads(pickle.dumps(x))
    assert ember.equal(again, x) and again.view(-1).shape == flat.shape
    assert ember.nn.Linear(shape[1], 2).to(x.dtype)(x).shape == (shape[0], 2)


def test_worker_batches_are_ordinary_tensors():
    ds = TensorDataset(ember.randn(128, 6, dtype=ember.float64), ember.randn(128, 6))
    for num_workers in (0, 2):
        for x, y in DataLoader(ds, batch_size=64, num_workers=num_workers):
            _check_ordinary(x, (64, 6))
            _check_ordinary(y, (64, 6))


def test_tensors_over_a_buffer_view_like_others():
    # NumPy makes the buffer the base of such an array, not an array: view() took that for a copy
    raw = bytearray(np.arange(12, dtype=np.float32).tobytes())
    _check_ordinary(ember.frombuffer(raw, dtype=ember.float32).view(4, 3), (4, 3))
    _check_ordinary(ember.from_numpy(np.frombuffer(raw, dtype=np.float32).reshape(3, 4)), (3, 4))
    _check_ordinary(ember.from_numpy(pickle.loads(pickle.dumps(np.ones((2, 5))))), (2, 5))
