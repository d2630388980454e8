"""torch.utils.collect_env: the environment report in PyTorch's layout, ember reporting its
own version and the CUDA CuPy runs where PyTorch reports its build."""
import os
import subprocess
import sys

from ember.utils import collect_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# what the probed commands answer, the same for both reports
_CANNED = {"gcc --version": "gcc (Debian 12.2.0-14) 12.2.0", "lscpu": "Architecture: x86_64",
           "cat /etc/*-release": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"',
           "cmake --version": "cmake version 3.25.1"}


def _fake_run(command):
    if isinstance(command, list):  # pip list
        return 0, "numpy==2.0.0\nrequests==2.0\ntorch==2.13.0", ""
    return (0, _CANNED[command], "") if command in _CANNED else (127, "", "not found")


def test_report_as_pytorchs_but_for_the_version(torch, monkeypatch):
    from torch.utils import collect_env as theirs
    for module in (collect_env, theirs):
        monkeypatch.setattr(module, "run", _fake_run)
    monkeypatch.delenv("CONDA_EXE", raising=False)
    monkeypatch.delenv("CUDNN_LIBRARY", raising=False)
    assert collect_env.SystemEnv._fields == theirs.SystemEnv._fields
    ours, want = collect_env.get_pretty_env_info(), theirs.get_pretty_env_info()
    ours_lines, want_lines = ours.split("\n"), want.split("\n")
    assert ours_lines[0] == "PyTorch version: 2.13.0+ember.0.1.0"
    assert want_lines[0].startswith("PyTorch version: 2.13")
    assert ours_lines[1:] == want_lines[1:]
    assert "[pip3] numpy==2.0.0" in ours and "OS: Debian GNU/Linux 12 (bookworm)" in ours


def test_pretty_str_as_pytorchs(torch):
    from torch.utils import collect_env as theirs
    values = dict.fromkeys(theirs.SystemEnv._fields)
    values.update(torch_version="2.13.0", is_debug_build=False, pip_version="pip3",
                  pip_packages="", conda_packages="numpy 1.0", cpu_info="x86",
                  nvidia_gpu_models="GPU 0\nGPU 1", cuda_runtime_version="12.1",
                  caching_allocator_config={"PYTORCH_CUDA_ALLOC_CONF": "expandable"})
    env = collect_env.SystemEnv(**values)
    assert collect_env.pretty_str(env) == theirs.pretty_str(theirs.SystemEnv(**values))


def test_module_runs_under_compat():
    out = subprocess.run([sys.executable, "-m", "ember.compat", "-m", "torch.utils.collect_env"],
                         env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    assert lines[:2] == ["Collecting environment information...",
                         "PyTorch version: 2.13.0+ember.0.1.0"]
    assert "Versions of relevant libraries:" in lines and "[pip3] numpy==" in out.stdout
    assert any(line.startswith("Is CUDA available: ") for line in lines)
