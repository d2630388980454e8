"""README.md's test block: shell that works on a fresh machine, naming PyTorch (the parity
tests' oracle) with the line that installs it; .ci/run runs that very block."""
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _test_block():
    with open(os.path.join(ROOT, "README.md")) as f:
        blocks = re.findall(r"```sh\n(.*?)```", f.read(), flags=re.S)
    return blocks[1]


def test_readme_test_block_installs_the_pytorch_oracle():
    block = _test_block()
    lines = [ln for ln in block.splitlines() if ln and not ln.startswith("#")]
    # the suite runs in parallel (pytest-xdist, in the test extra): CI has 2 cores
    assert lines[0] == 'pip install -e ".[test]"' and lines[-1] == "pytest -n auto"
    assert "pip install torch==2.13.0" in lines
    assert any("PyTorch" in ln and "parity" in ln for ln in block.splitlines()
               if ln.startswith("#"))
    assert subprocess.run(["sh", "-n"], input=block, text=True).returncode == 0


def test_ci_runs_the_readme_block_verbatim():
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        ci = f.read()
    assert ci.split("# The README's test block, verbatim:\n", 1)[1].strip() == \
        _test_block().strip()
