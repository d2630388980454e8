"""torchvision as a test oracle, imported without its compiled kernels.

The torchvision wheel on PyPI is a CUDA build: its `_C` extension needs PyTorch's CUDA
libraries, which the CPU build of torch (the one CI installs) lacks, and its
`_meta_registrations` module then fails at import. The pure-Python parts (model classes, their
parameter names, the weights enums and their metadata) are all the oracle tests need, so that
one module is replaced by an empty one before import. Ops that need the kernels (`nms`,
`roi_align`) stay unusable from the oracle."""
import sys
import types
import warnings

import pytest


def import_torchvision():
    """torchvision, or a skip when it (or torch) is not installed."""
    pytest.importorskip("torch")
    name = "torchvision._meta_registrations"
    if "torchvision" not in sys.modules:
        sys.modules.setdefault(name, types.ModuleType(name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pytest.importorskip("torchvision")
