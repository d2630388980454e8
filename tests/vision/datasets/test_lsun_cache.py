"""LSUN's key cache lies in the working directory, where anyone could plant a file: reading it
runs no code and accepts only a list of bytes."""
import io
import os
import pickle

import pytest

from ember.vision.datasets.lsun import _load_key_cache


def test_key_cache_reads_a_list_of_bytes():
    assert _load_key_cache(io.BytesIO(pickle.dumps([b"a", b"b"])), "c") == [b"a", b"b"]


def test_key_cache_refuses_a_planted_pickle_without_running_it():
    class Planted:
        def __reduce__(self):
            return (os.system, ("echo planted",))
    with pytest.raises(pickle.UnpicklingError, match="only a list of bytes"):
        _load_key_cache(io.BytesIO(pickle.dumps([Planted()])), "c")
    with pytest.raises(RuntimeError, match="not an LSUN key cache"):
        _load_key_cache(io.BytesIO(pickle.dumps({"a": 1})), "c")
