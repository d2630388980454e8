"""ember's main job (examples/train_digits.py) on 'cuda', under the strict CuPy stand-in: it
trains, its checkpoint reloads on the CPU with the same predictions, and a training step reads
the device from the host only where the script asks (`loss.item()`)."""
import importlib.util
import os
import sys

import pytest

import ember
from tests._strict_cupy import REAL_CUDA, TRANSFERS, strict_cupy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _main_job():
    spec = importlib.util.spec_from_file_location(
        "train_digits", os.path.join(ROOT, "examples", "train_digits.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_main_job_trains_on_cuda(tmp_path, monkeypatch, capsys):
    job = _main_job()
    monkeypatch.setattr(job, "tqdm", None)
    monkeypatch.setattr(job, "plot", lambda history, path: None)
    monkeypatch.setattr(sys, "argv", ["train_digits.py", "--epochs", "1", "--device", "cuda",
                                      "--out", str(tmp_path)])
    with strict_cupy():
        job.main()
    out = capsys.readouterr().out
    assert "on cuda" in out
    accuracy = float(out.split("final test accuracy ")[1].split("%")[0])
    assert accuracy > 80.0, out
    state = ember.load(tmp_path / "digits_cnn.pt", map_location="cpu")["model"]
    model = job.DigitsCNN()
    model.load_state_dict(state)
    assert all(p.device.type == "cpu" for p in model.parameters())


@pytest.mark.skipif(REAL_CUDA, reason="only the stand-in counts transfers")
def test_a_training_step_reads_the_device_once(monkeypatch):
    job = _main_job()
    ember.manual_seed(0)
    with strict_cupy():
        model = job.DigitsCNN().to("cuda")
        optimizer = ember.optim.Adam(model.parameters(), lr=1e-3)
        criterion = ember.nn.CrossEntropyLoss()
        images = ember.randn(32, 1, 8, 8).to("cuda")
        labels = ember.randint(0, 10, (32,)).to("cuda")
        for step in range(3):  # the first step makes Adam's state; count the later ones
            before = TRANSFERS.count
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
            loss.item()
            if step:
                assert TRANSFERS.count - before == 1, \
                    f"step {step}: {TRANSFERS.count - before} device-to-host reads, 1 expected"
