"""What the sparse tests (test_sparse.py, test_sparse_grad.py) share: the autouse fixture that
silences the invariant-check warning, and `both`, which runs one call in ember and torch."""
import warnings

import pytest

import ember


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse invariant checks")
        yield


def both(fn):
    import torch
    return fn(ember), fn(torch)
