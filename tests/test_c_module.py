"""`torch._C`'s few functions that Python libraries call (torchmetrics' metrics log their
class through `_log_api_usage_once`): PyTorch's behaviour, beside PyTorch."""
import os
import subprocess
import sys

import ember

_CALLS = ("import sys\n"
          "{lib}._C._log_api_usage_once('my.event')\n"
          "{lib}._C._log_api_usage_once('my.event')\n"  # once per event
          "print({lib}._C._get_tracing_state(), {lib}._C._get_privateuse1_backend_name())\n")


def _run(lib, log):
    env = dict(os.environ)
    env.pop("PYTORCH_API_USAGE_STDERR", None)
    if log:
        env["PYTORCH_API_USAGE_STDERR"] = "1"
    out = subprocess.run([sys.executable, "-c", f"import {lib}\n" + _CALLS.format(lib=lib)],
                         capture_output=True, text=True, env=env, check=True)
    return out.stdout, [line for line in out.stderr.splitlines() if "my.event" in line]


def test_usage_logging_and_queries_as_pytorchs(torch):
    for log in (False, True):
        assert _run("ember", log) == _run("torch", log)
    assert _run("ember", True)[1] == ["PYTORCH_API_USAGE my.event"]


def test_grad_mode_through_c():
    ember._C._set_grad_enabled(False)
    assert not ember._C._is_grad_enabled() and not ember.is_grad_enabled()
    ember._C._set_grad_enabled(True)
    assert ember.is_grad_enabled()
