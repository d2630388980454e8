"""benchmarks/bench_models.py cannot rot: every model it times builds and takes a training
step in ember at a tiny size, and its first loss matches PyTorch's from the same weights."""
import math
import os
import sys

import pytest

import ember

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "benchmarks")
sys.path.insert(0, BENCHMARKS)
import bench_models  # noqa: E402

CASES = {case.name: case for case in bench_models.CASES}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_training_step_runs_and_moves_the_weights(name):
    case = CASES[name]
    rng = bench_models.np.random.default_rng(0)
    inputs, target = (case.tiny_batch or case.batch)(rng, 2)
    model = case.build(ember, **case.tiny)
    before = [p.detach().clone() for p in model.parameters()]
    loss = bench_models.make_step(ember, case, model, inputs, target)()
    assert isinstance(loss, float) and math.isfinite(loss)
    assert any(not ember.equal(a, p) for a, p in zip(before, model.parameters()))


@pytest.mark.parametrize("name", sorted(set(CASES) - {"digits"}))  # digits has dropout
def test_first_loss_matches_pytorch(torch, name):
    mine, theirs = bench_models.paired_steps(CASES[name], tiny=True)
    assert mine() == pytest.approx(theirs(), rel=1e-5, abs=1e-6)


def test_unknown_model_is_refused(capsys):
    with pytest.raises(SystemExit):
        bench_models.main(["--models", "nope"])
    assert "unknown model(s) ['nope']" in capsys.readouterr().err
