"""Run one autograd scenario on ember and on torch and compare what comes out (values, error
types and texts): the helpers of tests/autograd's parity tests."""
import pytest

import ember


def both(torch, scenario):
    """Run `scenario(T)` on ember and on torch; return both results, made comparable."""
    return _plain(scenario(ember)), _plain(scenario(torch))


def _plain(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if hasattr(x, "detach") and hasattr(x, "tolist"):
        return ("tensor", str(x.dtype).replace("ember.", "torch."), x.detach().tolist())
    return x


def assert_same(torch, scenario, approx=False):
    e, t = both(torch, scenario)
    if approx:
        _close(e, t)
    else:
        assert e == t


def _close(e, t):
    if isinstance(t, (list, tuple)):
        assert type(e) is type(t) and len(e) == len(t), (e, t)
        for a, b in zip(e, t):
            _close(a, b)
    elif isinstance(t, dict):
        assert e.keys() == t.keys()
        for k in t:
            _close(e[k], t[k])
    elif isinstance(t, float):
        assert e == pytest.approx(t, rel=1e-5, abs=1e-6)
    else:
        assert e == t


def error_of(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 (the scenario compares any error)
        return type(exc).__name__, str(exc).split("\n")[0]
    return None


def assert_same_error(torch, scenario):
    e = error_of(lambda: scenario(ember))
    t = error_of(lambda: scenario(torch))
    assert t is not None
    assert e == t
