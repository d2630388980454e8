"""torch.signal.windows: values, dtypes, and errors as PyTorch's."""
import numpy as np
import pytest

import ember

_NAMES = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
          "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _extra(name):
    return {"a": [0.5, 0.5]} if name == "general_cosine" else {}


@pytest.mark.parametrize("name", _NAMES)
def test_windows_match_pytorch(torch, name):
    import torch.signal.windows as theirs
    for M in (0, 1, 2, 5, 6, 11):
        for sym in (True, False):
            for dtype in ("float32", "float64"):
                expected = getattr(theirs, name)(M, sym=sym, dtype=getattr(torch, dtype),
                                                 **_extra(name))
                got = getattr(ember.signal.windows, name)(M, sym=sym,
                                                          dtype=getattr(ember, dtype),
                                                          **_extra(name))
                assert str(got.dtype) == str(expected.dtype) and got.shape == expected.shape
                np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-6)
    got = getattr(ember.signal.windows, name)(4, requires_grad=True, **_extra(name))
    assert got.requires_grad and got.is_leaf and got.dtype == ember.get_default_dtype()


@pytest.mark.parametrize("call", [
    ("kaiser", (5,), dict(beta=0.0)), ("kaiser", (7,), dict(beta=3.5, sym=False)),
    ("gaussian", (6,), dict(std=2.5, sym=False)), ("general_hamming", (5,), dict(alpha=0.3)),
    ("exponential", (6,), dict(center=2.0, tau=3.0, sym=False)),
    ("general_cosine", (6,), dict(a=(0.4, 0.3, 0.3)))])
def test_window_parameters(torch, call):
    import torch.signal.windows as theirs
    name, args, kwargs = call
    np.testing.assert_allclose(getattr(ember.signal.windows, name)(*args, **kwargs).numpy(),
                               getattr(theirs, name)(*args, **kwargs).numpy(), atol=1e-6)


@pytest.mark.parametrize("call", [
    ("hann", (-1,), {}), ("bartlett", (-2,), {}), ("hann", (3,), dict(dtype="int64")),
    ("kaiser", (3,), dict(dtype="float16")), ("cosine", (3,), dict(layout="sparse_coo")),
    ("kaiser", (5,), dict(beta=-1.0)), ("gaussian", (5,), dict(std=0.0)),
    ("exponential", (5,), dict(center=1.0)), ("exponential", (5,), dict(tau=0.0)),
    ("general_cosine", (5,), dict(a=[])), ("general_cosine", (5,), dict(a=3)),
    ("hann", (3.0,), {})])
def test_window_errors(torch, call):
    import torch.signal.windows as theirs
    name, args, kwargs = call

    def run(lib, module):
        options = {k: getattr(lib, v) if k in ("dtype", "layout") else v
                   for k, v in kwargs.items()}
        try:
            getattr(module, name)(*args, **options)
        except Exception as e:
            return type(e), str(e)
    expected, got = run(torch, theirs), run(ember, ember.signal.windows)
    assert got[0] is expected[0]
    if expected[0] is ValueError:
        assert got[1] == expected[1]
