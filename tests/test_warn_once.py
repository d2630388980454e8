"""PyTorch's TORCH_WARN_ONCE warnings, as ember's `_state.warn_once` gives them: the same
words, once a process from whatever line calls, every call under set_warn_always(True)
(which does not use up the once), attributed to the caller's line outside the library."""
import re
import warnings

import numpy as np
import pytest

import ember
from ember import _state

torch = pytest.importorskip("torch")


def _read_only():
    a = np.ones(3)
    a.flags.writeable = False
    return a


def _spectrum(lib):
    return lib.stft(lib.ones(64), 16, window=lib.ones(16), return_complex=True)


# name -> call(lib); each warns once a process in PyTorch
SITES = {
    "float of a tensor that requires grad": lambda m: float(m.ones(1, requires_grad=True)),
    "cross without dim": lambda m: m.cross(m.ones(3, 3), m.ones(3, 3)),
    "scatter's reduce": lambda m: m.zeros(3).scatter(0, m.tensor([0, 1]), m.ones(2),
                                                     reduce="add"),
    "meshgrid without indexing": lambda m: m.meshgrid(m.ones(2), m.ones(2)),
    "stft without a window": lambda m: m.stft(m.ones(64), 16, return_complex=True),
    "istft without a window": lambda m: m.istft(_spectrum(m), 16),
    "stft return_complex=False": lambda m: m.stft(m.ones(64), 16, window=m.ones(16),
                                                  return_complex=False),
    "set_default_tensor_type": lambda m: m.set_default_tensor_type(m.FloatTensor),
    "asarray of a tensor that requires grad": lambda m: m.asarray(m.ones(1, requires_grad=True)),
    "from_numpy of a read-only array": lambda m: m.from_numpy(_read_only()),
    "as_tensor of a read-only array": lambda m: m.as_tensor(_read_only()),
    "legacy constructor of a read-only array": lambda m: m.Tensor(_read_only()),
    "a list of arrays": lambda m: m.tensor([np.ones(2), np.ones(2)]),
    "an array deep in a list": lambda m: m.tensor([[1.0], np.ones(1)]),
    "x.T of a 3-d tensor": lambda m: m.ones(2, 3, 4).T,
    "x.T of a 1-d tensor": lambda m: m.ones(3).T,
}


def _caught(call, times=1):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(times):
            call()
    # PyTorch's C++ warnings end with where they were raised: not part of the message
    return [(w.category.__name__, re.sub(r" \(Triggered internally at [^)]*\.\)$", "",
                                         str(w.message)), w.filename) for w in caught]


@pytest.fixture
def warn_always_off():
    yield
    for lib in (torch, ember):
        lib.set_warn_always(False)


@pytest.mark.parametrize("name", list(SITES))
def test_site_warns_as_pytorch(name, warn_always_off):
    call = SITES[name]
    for lib in (torch, ember):  # PyTorch's once may be used up by an earlier test: forced
        lib.set_warn_always(True)
    theirs, mine = _caught(lambda: call(torch), 2), _caught(lambda: call(ember), 2)
    assert [w[:2] for w in mine] == [w[:2] for w in theirs] and len(mine) >= 2
    assert {w[2] for w in mine} == {__file__}  # the test's own line, not ember's
    ember.set_warn_always(False)
    _state._warned_once.clear()
    first, then = _caught(lambda: call(ember)), _caught(lambda: call(ember), 3)
    assert [w[:2] for w in first] == [w[:2] for w in theirs[:len(first)]]
    assert len(first) >= 1 and then == []


def test_set_warn_always_does_not_use_up_the_once(warn_always_off):
    _state._warned_once.clear()
    x = ember.ones(1, requires_grad=True)
    ember.set_warn_always(True)
    assert len(_caught(lambda: float(x), 2)) == 2
    ember.set_warn_always(False)
    assert len(_caught(lambda: float(x))) == 1
    assert _caught(lambda: float(x)) == []


def test_python_filters_still_apply():
    _state._warned_once.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore")
        float(ember.ones(1, requires_grad=True))
    assert caught == []  # ignored, and (as in PyTorch) the once is used up all the same
    assert _caught(lambda: float(ember.ones(1, requires_grad=True))) == []
