"""`python -m torch.distributed.launch` (ember/distributed/launch.py): the legacy launcher is
torchrun with `--use-env`; without it each worker also gets `--local-rank=N` before its own
arguments. Real two-process runs, checked against what PyTorch's launcher passes."""
import os
import subprocess
import sys
import textwrap

import pytest

from ember.distributed import launch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WORKER = textwrap.dedent("""
    import argparse, datetime, os, sys
    import torch
    import torch.distributed as dist
    parser = argparse.ArgumentParser()
    parser.add_argument("--local-rank", "--local_rank", type=int, default=-1)
    parser.add_argument("--lr", type=float)
    args = parser.parse_args()
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
    t = torch.tensor([dist.get_rank() + 1.0])
    dist.all_reduce(t)
    sys.stdout.write(" ".join(["worker", str(args.local_rank), os.environ["LOCAL_RANK"],
                               str(args.lr), repr(sys.argv[1:]), str(t.item()),
                               torch.__name__]) + "\\n")
    dist.destroy_process_group()
""")


def _launch(script, *flags, lib="ember"):
    prefix = ["-m", "ember.compat"] if lib == "ember" else []
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("OMP_NUM_THREADS", None)
    out = subprocess.run([sys.executable, *prefix, "-m", "torch.distributed.launch",
                          "--nproc_per_node=2", *flags, str(script), "--lr", "0.1"],
                         env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    workers = sorted(line.split(" ", 1)[1] for line in out.stdout.splitlines()
                     if line.startswith("worker "))
    return workers, out.stderr


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(WORKER)
    return path


def test_local_rank_argument_without_use_env(script):
    workers, err = _launch(script)
    assert workers == ["0 0 0.1 ['--local-rank=0', '--lr', '0.1'] 3.0 ember",
                       "1 1 0.1 ['--local-rank=1', '--lr', '0.1'] 3.0 ember"]
    assert "FutureWarning: The module torch.distributed.launch is deprecated\n" in err
    assert "Note that --use-env is set by default in torchrun." in err


@pytest.mark.parametrize("flag", ["--use-env", "--use_env"])
def test_use_env_leaves_the_arguments_alone(script, flag):
    workers, _ = _launch(script, flag)
    assert workers == ["-1 0 0.1 ['--lr', '0.1'] 3.0 ember", "-1 1 0.1 ['--lr', '0.1'] 3.0 ember"]


def test_workers_get_what_pytorchs_launcher_passes(torch, script):
    theirs, _ = _launch(script, lib="torch")
    ours, _ = _launch(script)
    assert [w.rsplit(" ", 1)[0] for w in ours] == [w.rsplit(" ", 1)[0] for w in theirs]


def test_parser_and_errors():
    args = launch.parse_args(["--nproc_per_node", "2", "--use_env", "train.py", "--x", "1"])
    assert (args.use_env, args.nproc_per_node, args.training_script,
            args.training_script_args) == (True, "2", "train.py", ["--x", "1"])
    assert launch.parse_args(["train.py"]).use_env is False
    with pytest.raises(ValueError, match="When using the '--no-python' flag, you must also "
                                         "set the '--use-env' flag."):
        launch.launch(launch.parse_args(["--no-python", "train.py"]))


def test_main_is_marked_deprecated(torch, monkeypatch):
    import torch.distributed.launch as theirs
    monkeypatch.setattr(launch, "end_workers_on_signals", lambda: None)  # (pytest's own)
    assert launch.main.__deprecated__ == theirs.main.__deprecated__
    with pytest.warns(FutureWarning, match="torch.distributed.launch is deprecated"):
        with pytest.raises(ValueError, match="--no-python"):
            launch.main(["--no-python", "train.py"])
