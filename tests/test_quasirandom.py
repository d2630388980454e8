"""torch.quasirandom.SobolEngine: PyTorch's Sobol' sequence point for point (unscrambled and
scrambled with a seed), from SciPy's direction numbers; a clear ImportError without SciPy."""
import sys

import numpy as np
import pytest

import ember
from ember.quasirandom import SobolEngine

pytest.importorskip("scipy.stats")


def _same(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype)
    assert np.array_equal(ours.numpy(), theirs.numpy())


def test_the_first_points_of_the_plane():
    points = SobolEngine(2).draw(4)
    assert points.dtype == ember.float32
    assert points.tolist() == [[0.0, 0.0], [0.5, 0.5], [0.75, 0.25], [0.25, 0.75]]


@pytest.mark.parametrize("dimension, scramble, seed", [
    (1, False, None), (5, False, None), (3, True, 0), (7, True, 123), (40, True, 2 ** 33 + 7),
    (300, True, 5)])
def test_sequences_equal_pytorchs(torch, dimension, scramble, seed):
    ours = SobolEngine(dimension, scramble=scramble, seed=seed)
    theirs = torch.quasirandom.SobolEngine(dimension, scramble=scramble, seed=seed)
    assert repr(ours) == repr(theirs)
    _same(ours.sobolstate, theirs.sobolstate)
    _same(ours.shift, theirs.shift)
    _same(ours.draw(), theirs.draw())
    _same(ours.draw(5, dtype=ember.float64), theirs.draw(5, dtype=torch.float64))
    ours.fast_forward(37)
    theirs.fast_forward(37)
    _same(ours.draw(10), theirs.draw(10))
    _same(ours.quasi, theirs.quasi)
    assert ours.num_generated == theirs.num_generated == 53
    ours.reset()
    theirs.reset()
    _same(ours.draw_base2(3), theirs.draw_base2(3))
    ours.reset()
    theirs.reset()
    ours.fast_forward(3)
    theirs.fast_forward(3)
    _same(ours.draw(4, dtype=ember.float64), theirs.draw(4, dtype=torch.float64))
    # a first draw of several points in float64 starts with the first point rounded to the
    # default dtype, as PyTorch's does
    fresh = SobolEngine(dimension, scramble=scramble, seed=seed)
    _same(fresh.draw(300, dtype=ember.float64),
          torch.quasirandom.SobolEngine(dimension, scramble=scramble, seed=seed).draw(
              300, dtype=torch.float64))


def test_a_long_fast_forward_skips_without_drawing(torch):
    ours, theirs = SobolEngine(4, True, 9), torch.quasirandom.SobolEngine(4, True, 9)
    for n in (2 ** 22 + 3, 0, 1, 1000):
        ours.fast_forward(n)
        theirs.fast_forward(n)
        _same(ours.quasi, theirs.quasi)
        _same(ours.draw(2), theirs.draw(2))


def test_errors_as_pytorchs(torch):
    for module in (ember.quasirandom, torch.quasirandom):
        for dimension in (0, 21202):
            with pytest.raises(ValueError, match=r"^Supported range of dimensionality for "
                                                 r"SobolEngine is \[1, 21201\]$"):
                module.SobolEngine(dimension)
    for lib in (ember, torch):
        engine = lib.quasirandom.SobolEngine(2)
        engine.draw(3)
        with pytest.raises(ValueError, match=r"^The balance properties of Sobol' points "
                                             r"require n to be a power of 2. 3 points have "
                                             r"been previously generated, then: n=3\+2\*\*2=7. "
                                             r"If you still want to do this, please use "
                                             r"'SobolEngine.draw\(\)' instead.$"):
            engine.draw_base2(2)
        with pytest.raises(NotImplementedError, match="\"_sobol_engine_draw\" not implemented "
                                                      "for 'Half'"):
            engine.draw(2, dtype=lib.float16)
        with pytest.raises(RuntimeError, match=r"negative dimension -1: \[-1, 2\]"):
            lib.quasirandom.SobolEngine(2).draw(0)


def test_out_and_attributes():
    engine = SobolEngine(2, scramble=True, seed=1)
    out = ember.empty(1)
    assert engine.draw(3, out=out) is out and out.shape == (3, 2)
    assert (engine.MAXBIT, engine.MAXDIM, engine.dimension, engine.seed) == (30, 21201, 2, 1)
    assert repr(SobolEngine(3)) == "SobolEngine(dimension=3)"
    unseeded = SobolEngine(3, scramble=True)
    assert repr(unseeded) == "SobolEngine(dimension=3, scramble=True)"
    assert ((unseeded.draw(8) >= 0) & (unseeded.draw(8) < 1)).all()


def test_without_scipy_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    monkeypatch.setitem(sys.modules, "scipy.stats.qmc", None)
    with pytest.raises(ImportError, match="SobolEngine needs SciPy"):
        SobolEngine(2)
