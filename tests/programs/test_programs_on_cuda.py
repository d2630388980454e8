"""Whole programs on 'cuda': scripts of tests/programs/scripts that take PyTorch's usual
`--device` option, run by `python -m tests.programs.on_strict_cuda` (ember.compat with the
strict CuPy stand-in as `cupy`, so the code a GPU runs is what runs), must give the metrics
their CPU run gives (the stand-in computes with NumPy) and read the device only where the
script asks to: its `.item()`s, `.tolist()`s and `torch.save`s (PyTorch's CUDA build reads
there too), and nowhere else."""
import json
import math

import pytest

from tests._strict_cupy import REAL_CUDA
from tests.programs.test_programs import run_program

pytestmark = pytest.mark.skipif(REAL_CUDA, reason="counts the stand-in's transfers")

# script: (its small settings, the line that reads each training loss, the metric listing them)
PROGRAMS = {
    "lstm_lm.py": (("--epochs", "2"), 'history["train"].append(loss.item())', "train"),
    "transformer_lm.py": (("--max-iters", "40"), "losses.append(loss.item())", "losses"),
    # (the stand-in runs the convolutions' index kernels as NumPy passes over every element:
    # the fewest images that still take two training steps and a test batch)
    "resnet_cifar.py": (("--epochs", "1", "--train-size", "32", "--test-size", "32",
                         "--batch-size", "16"), "losses.append(loss.item())", "losses"),
    "lbfgs_fit.py": (("--steps", "2"), None, None),
}
# metrics drawn from the device's own random generator, which is not the CPU's
DEVICE_DRAWN = {"transformer_lm.py": {"sample"}}
# reads PyTorch makes inside a call: torch.multinomial checks its probabilities with two
# .item()s (num_samples=1); LBFGS compares gradient norms and steps as Python numbers
READING_CALLS = ("torch.multinomial(", "optimizer.step(closure)")


def _reads_on_purpose(line):
    return any(call in line for call in (".item()", ".tolist()", "torch.save(") + READING_CALLS)


def _assert_close(got, expected, where):
    if isinstance(expected, dict):
        assert got.keys() == expected.keys(), where
        for key in expected:
            _assert_close(got[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected)):
            _assert_close(g, e, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert math.isclose(got, expected, rel_tol=1e-4, abs_tol=1e-6), (where, got, expected)
    else:
        assert got == expected, where


@pytest.mark.parametrize("script", sorted(PROGRAMS))
def test_program_on_cuda_gives_the_cpus_metrics_and_reads_only_where_asked(script, tmp_path):
    args, loss_line, losses_key = PROGRAMS[script]
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cuda").mkdir()
    expected, _ = run_program(script, tmp_path / "cpu", *args, "--device", "cpu")
    transfers_file = tmp_path / "transfers.json"
    got, out = run_program(script, tmp_path / "cuda", *args, "--device", "cuda",
                           runner="tests.programs.on_strict_cuda",
                           env={"STRICT_CUPY_TRANSFERS_FILE": str(transfers_file),
                                "STRICT_CUPY_FULL_FLOAT32": "1"})  # the CPU's values
    drawn = DEVICE_DRAWN.get(script, set())
    _assert_close({k: v for k, v in got.items() if k not in drawn},
                  {k: v for k, v in expected.items() if k not in drawn}, script)
    with open(transfers_file) as f:
        transfers = json.load(f)
    lines = transfers["lines"]
    assert transfers["count"] > 0  # it ran on the device
    assert [line for line in lines if not _reads_on_purpose(line)] == [], lines
    if loss_line is not None:  # each training step reads its loss once, and nothing else
        assert lines[loss_line] == len(got[losses_key]), lines
    if script == "transformer_lm.py":
        assert got["sample"].startswith("the quick") and len(got["sample"]) == 49
        assert lines["idx_next = torch.multinomial(probs, num_samples=1)"] == 2 * 40, lines
