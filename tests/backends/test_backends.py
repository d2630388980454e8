"""ember.backends as torch.backends: every submodule is a real module (so the import
statements scripts write work, also through ember.compat), with PyTorch's flag defaults,
flags() context managers that restore, and answers about what ember has."""
import importlib
import os
import subprocess
import sys

import pytest

import ember

SUBMODULES = ("cudnn", "cuda", "mkldnn", "mps", "openmp")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("name", SUBMODULES)
def test_each_backend_is_an_importable_module(name):
    module = importlib.import_module(f"ember.backends.{name}")
    assert getattr(ember.backends, name) is module
    if name == "cuda":  # PyTorch's has is_built, not is_available
        assert module.is_built() in (True, False)
    else:
        assert module.is_available() is False


def test_import_statements_run_under_compat(tmp_path):
    script = tmp_path / "flags.py"
    script.write_text("import torch\n"
                      "import torch.backends.cudnn as cudnn\n"
                      "from torch.backends import cuda, mkldnn, mps, openmp\n"
                      "cudnn.benchmark = True\n"
                      "print(torch.backends.cudnn.benchmark, mps.is_available())\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"]


def test_flags_scope_sets_and_restores_even_after_an_error():
    cudnn = ember.backends.cudnn
    with pytest.raises(KeyError):
        with cudnn.flags(enabled=True, benchmark=True, deterministic=True):
            assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, True, True)
            raise KeyError("inside")
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, False, False)


def test_sdp_toggles_round_trip():
    cuda = ember.backends.cuda
    assert cuda.flash_sdp_enabled()
    cuda.enable_flash_sdp(False)
    try:
        assert not cuda.flash_sdp_enabled() and cuda.math_sdp_enabled()
    finally:
        cuda.enable_flash_sdp(True)


def test_defaults_match_pytorch(torch):
    for name in ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32",
                 "fp32_precision"):
        assert getattr(ember.backends.cudnn, name) == getattr(torch.backends.cudnn, name), name
    for name in ("enabled", "deterministic", "allow_tf32", "fp32_precision"):
        assert getattr(ember.backends.mkldnn, name) == getattr(torch.backends.mkldnn, name), name
    for name in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                 "allow_bf16_reduced_precision_reduction"):
        assert getattr(ember.backends.cuda.matmul, name) == \
            getattr(torch.backends.cuda.matmul, name), name
    for kind in ("flash", "mem_efficient", "math", "cudnn"):
        ours = getattr(ember.backends.cuda, f"{kind}_sdp_enabled")()
        assert ours == getattr(torch.backends.cuda, f"{kind}_sdp_enabled")(), kind
    assert ember.backends.cudnn.version() is None
    assert ember.backends.mps.is_built() is torch.backends.mps.is_built() is False
