"""`TorchVersion` orders as PyTorch's does (PEP 440, against strings, tuples and packaging
Versions, falling back to string order for non-versions), and `__version__` is ember's own
release outside ember.compat."""
import itertools
import operator

import pytest

import ember
from ember.torch_version import TorchVersion

VERSIONS = ["2.13.0", "2.13.0+cpu", "2.13.0+ember.0.1.0", "2.0", "2", "1.13.1", "2.13.0a0",
            "2.13.0.dev20240101", "2.13.0rc1", "2.13.0.post1", "2.13", "0.1.0", "2.13.0+1",
            "2.13.0+abc.1", "1!0.1", "2.13.0a0+git123", "parrot", "v2.1"]
OTHERS = VERSIONS + [(2, 0), (2, 13), (2, 13, 0), [1, 9], (3,)]
OPS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


def _outcome(op, a, b):
    try:
        return op(a, b)
    except Exception as error:  # noqa: BLE001  (the outcome compared is the exception type)
        return type(error).__name__


def test_comparisons_match_torch(torch):
    from torch.torch_version import TorchVersion as Theirs
    for a, b, op in itertools.product(VERSIONS, OTHERS, OPS):
        assert _outcome(op, TorchVersion(a), b) == _outcome(op, Theirs(a), b), (a, b, op)


def test_against_packaging_versions(torch):
    from torch._vendor.packaging.version import Version
    v = TorchVersion("2.13.0+ember.0.1.0")
    assert v > Version("2.12.9") and v >= Version("2.13.0") and not v < Version("2.13")


def test_a_str_that_hashes_and_splits_as_one():
    v = TorchVersion("2.13.0+ember.0.1.0")
    assert isinstance(v, str) and v.split("+")[0] == "2.13.0"
    assert {v: 1}["2.13.0+ember.0.1.0"] == 1
    assert v >= "2.0" and v > (1, 13) and v < "3" and v == "2.13.0+ember.0.1.0"


def test_ember_version_is_its_own_release():
    assert ember.__version__ == "0.1.0" and isinstance(ember.__version__, TorchVersion)
    assert ember.version.__version__ is ember.__version__
    assert ember.version.pytorch_api_version() == "2.13.0+ember.0.1.0"
