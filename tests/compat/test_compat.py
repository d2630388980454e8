"""PyTorch scripts run unchanged through `python -m ember.compat` (in a subprocess, so the
real PyTorch the parity tests import stays out of their way)."""
import os
import subprocess
import sys

import pytest

SCRIPTS = os.path.join(os.path.dirname(__file__), "scripts")


def _run(script, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))] +
        [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    return subprocess.run([sys.executable, "-m", "ember.compat", os.path.join(SCRIPTS, script),
                           *args], capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.parametrize("script", sorted(f for f in os.listdir(SCRIPTS) if f.endswith(".py")))
def test_script_runs_unchanged(script):
    result = _run(script)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "OK" in result.stdout, result.stdout + result.stderr[-2000:]


def test_import_torch_gives_ember_in_every_path():
    code = ("import ember.compat; ember.compat.install(); import torch, torchvision; "
            "import torch.nn.modules.linear as L, torch.utils.data.distributed as D; "
            "import torch.serialization, torch.optim.lr_scheduler, torchvision.transforms; "
            "import ember; assert torch is ember and L.Linear is ember.nn.Linear; "
            "assert torchvision is ember.vision and torch.nn.functional is ember.nn.functional; "
            "print(torch.__name__, torch.nn.modules.linear.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ember", "ember.nn.modules.linear"]


def test_usage_message_without_a_script():
    out = subprocess.run([sys.executable, "-m", "ember.compat"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and "usage" in out.stderr


def _both(args, cwd, stdin=None):
    """(returncode, stdout, stderr) of the same command line under `python` and under
    `python -m ember.compat`."""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    out = []
    for prefix in ([sys.executable], [sys.executable, "-m", "ember.compat"]):
        r = subprocess.run(prefix + args, capture_output=True, text=True, timeout=120, cwd=cwd,
                           env=env, input=stdin)
        out.append((r.returncode, r.stdout, r.stderr))
    return out


REPORT = "import sys; print(sys.argv, repr(sys.path[0]), __name__)"


@pytest.mark.parametrize("how", ["script", "-m", "-c", "-", "exit code", "error", "no file"])
def test_command_line_as_python_gives_it(tmp_path, how):
    # the program sees python's sys.argv and sys.path[0] (a script's sibling modules import)
    (tmp_path / "sibling.py").write_text("VALUE = 5\n")
    (tmp_path / "prog.py").write_text("import sibling\n" + REPORT + "\n"
                                      "raise SystemExit(int(sys.argv[-1]))\n")
    args, stdin = {
        "script": ([str(tmp_path / "prog.py"), "a", "0"], None),
        "-m": (["-m", "prog", "b", "0"], None),
        "-c": (["-c", REPORT, "x", "y"], None),
        "-": (["-", "z"], REPORT),
        "exit code": ([str(tmp_path / "prog.py"), "3"], None),
        "error": (["-c", "raise ValueError('boom')"], None),
        "no file": ([str(tmp_path / "absent.py")], None),
    }[how]
    (py_rc, py_out, py_err), (ours_rc, ours_out, ours_err) = _both(args, tmp_path, stdin)
    assert (ours_rc, ours_out) == (py_rc, py_out), ours_err
    assert ours_err.strip().splitlines()[-1:] == py_err.strip().splitlines()[-1:]


def test_script_named_relatively_gets_an_absolute_file(tmp_path):
    # python 3.9+: __file__ and the file warnings and tracebacks name are absolute, argv[0] not
    (tmp_path / "prog.py").write_text("import sys, warnings\nprint(__file__, sys.argv[0])\n"
                                      "warnings.warn('w')\nraise ValueError('boom')\n")
    (py_rc, py_out, py_err), (ours_rc, ours_out, ours_err) = _both(["prog.py"], tmp_path)
    assert (ours_rc, ours_out) == (py_rc, py_out), ours_err
    assert f"{tmp_path / 'prog.py'}:3: UserWarning: w" in ours_err
    assert f'File "{tmp_path / "prog.py"}", line 4' in ours_err


def test_code_and_stdin_programs_import_ember_as_torch():
    for args, stdin in [(["-c", "import torch; print(torch.__name__)"], None),
                        (["-"], "import torch; print(torch.__name__)")]:
        out = subprocess.run([sys.executable, "-m", "ember.compat", *args], capture_output=True,
                             text=True, timeout=60, input=stdin)
        assert (out.returncode, out.stdout) == (0, "ember\n"), out.stderr


def test_help_and_bad_options():
    for args, rc in [(["-h"], 0), (["--help"], 0), (["-c"], 2), (["-m"], 2), (["-q"], 2)]:
        out = subprocess.run([sys.executable, "-m", "ember.compat", *args], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == rc and "usage" in (out.stdout if rc == 0 else out.stderr), args


def test_torch_distributions_resolves_to_ember_through_compat():
    code = ("import ember.compat; ember.compat.install(); import torch; "
            "import torch.distributions as dist; from torch.distributions import constraints; "
            "from torch.distributions.normal import Normal; "
            "from torch.distributions.kl import kl_divergence, register_kl; "
            "import ember; assert dist is ember.distributions and Normal is dist.Normal; "
            "assert torch.distributions.Categorical is ember.distributions.Categorical; "
            "assert constraints.positive is ember.distributions.constraints.positive; "
            "print(dist.__name__, repr(Normal(torch.zeros(2), torch.ones(2))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("ember.distributions Normal(loc: torch.Size([2]), "
                                  "scale: torch.Size([2]))")
