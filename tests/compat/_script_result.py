"""Run a script under plain Python (PyTorch) or `-m ember.compat` (ember) and read back the JSON
it prints on its `RESULT ` line: the compat tests that hold a library's whole models to
PyTorch's (transformers, timm) compare the two runs' results."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def script_result(script, args, *launcher):
    """The JSON after `RESULT ` in the script's output; `launcher` is () for PyTorch or
    ("-m", "ember.compat") for ember."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    result = subprocess.run([sys.executable, *launcher, str(script), *map(str, args)],
                            capture_output=True, text=True, timeout=600, env=env)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert result.returncode == 0 and lines, result.stderr[-4000:]
    return json.loads(lines[0][len("RESULT "):])
