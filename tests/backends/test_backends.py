"""ember.backends as torch.backends: every submodule is a real module (so the import
statements scripts write work, also through ember.compat), with PyTorch's flag defaults,
flags() context managers that restore, and answers about what ember has."""
import importlib
import os
import subprocess
import sys

import pytest

import ember

SUBMODULES = ("cudnn", "cuda", "mkldnn", "mps", "openmp", "mkl", "nnpack")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("name", SUBMODULES)
def test_each_backend_is_an_importable_module(name):
    module = importlib.import_module(f"ember.backends.{name}")
    assert getattr(ember.backends, name) is module
    if name == "cuda":  # PyTorch's has is_built, not is_available
        assert module.is_built() in (True, False)
    elif name == "mkl":  # NumPy's BLAS: MKL where NumPy was built with it
        assert module.is_available() in (True, False)
    elif name == "mkldnn":  # where oneDNN is installed (ember/_dnnl.py)
        from ember import _dnnl
        assert module.is_available() is (_dnnl.library() is not None)
    else:
        assert module.is_available() is False


def test_import_statements_run_under_compat(tmp_path):
    script = tmp_path / "flags.py"
    script.write_text("import torch\n"
                      "import torch.backends.cudnn as cudnn\n"
                      "from torch.backends import cuda, mkldnn, mps, openmp\n"
                      "import torch.backends.mkl, torch.backends.cpu, torch.backends.mha\n"
                      "import torch.backends.quantized, torch.backends.opt_einsum\n"
                      "import torch.backends.nnpack, torch.backends.xnnpack\n"
                      "from torch.backends.opt_einsum import is_available\n"
                      "from torch.backends.mha import get_fastpath_enabled\n"
                      "cudnn.benchmark = True\n"
                      "print(torch.backends.cudnn.benchmark, mps.is_available(),\n"
                      "      torch.backends.xnnpack.enabled, get_fastpath_enabled(),\n"
                      "      torch.backends.quantized.engine in\n"
                      "      torch.backends.quantized.supported_engines)\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False", "False", "True", "True"]


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
    for name in ("allow_tf32", "fp32_precision", "allow_fp16_reduced_precision_reduction",
                 "allow_bf16_reduced_precision_reduction"):
        assert getattr(ember.backends.cuda.matmul, name) == \
            getattr(torch.backends.cuda.matmul, name), name
    for kind in ("flash", "mem_efficient", "math", "cudnn"):
        ours = getattr(ember.backends.cuda, f"{kind}_sdp_enabled")()
        assert ours == getattr(torch.backends.cuda, f"{kind}_sdp_enabled")(), kind
    assert ember.backends.cudnn.version() is None
    assert ember.backends.mps.is_built() is torch.backends.mps.is_built() is False


def test_the_cuda_matmul_switches_as_pytorchs(torch):
    ours, theirs = ember.backends.cuda.matmul, torch.backends.cuda.matmul
    assert type(ours).__name__ == type(theirs).__name__ == "cuBLASModule"
    for name in ("allow_fp16_reduced_precision_reduction_split_k",
                 "allow_bf16_reduced_precision_reduction_split_k", "allow_fp16_accumulation"):
        assert getattr(ours, name) == getattr(theirs, name), name
    for module in (ours, theirs):
        with pytest.raises(AttributeError, match="Unknown attribute foo"):
            module.foo
        with pytest.raises(TypeError, match="expects at most two boolean arguments"):
            module.allow_fp16_reduced_precision_reduction = (True, False, True)
    try:
        ours.allow_bf16_reduced_precision_reduction = (False, False)
        assert ours.allow_bf16_reduced_precision_reduction is False
        assert ours.allow_bf16_reduced_precision_reduction_split_k is False
    finally:
        ours.allow_bf16_reduced_precision_reduction = True


def test_library_preferences_as_pytorchs_cpu_build(torch):
    ours, theirs = ember.backends.cuda, torch.backends.cuda
    assert repr(ours.preferred_blas_library()) == repr(theirs.preferred_blas_library())
    assert repr(ours.preferred_linalg_library()) == repr(theirs.preferred_linalg_library())
    assert repr(ours.preferred_rocm_fa_library()) == repr(theirs.preferred_rocm_fa_library())
    assert repr(ours.preferred_blas_library("default")) == "<_BlasBackend.Cublas: 1>"
    assert repr(ours.preferred_linalg_library("cusolver")) == "<_LinalgBackend.Cusolver: 1>"
    ours.preferred_linalg_library("default")
    for module in (ours, theirs):
        for call, error, message in (
                (lambda: module.preferred_blas_library("x"), RuntimeError,
                 "Unknown input value. Choose from: default, cublas, hipblas, cublaslt"),
                (lambda: module.preferred_blas_library(1), RuntimeError,
                 "Unknown input value type."),
                (lambda: module.preferred_blas_library("cublaslt"), RuntimeError,
                 "Cannot set preferred backend to cuBLASLt"),
                (lambda: module.preferred_rocm_fa_library(3), ValueError,
                 "Choose from: default, aotriton, ck."),
                (lambda: module.blas_workspace_size(backend="ck"), RuntimeError,
                 "CK backend does not use a workspace."),
                (lambda: module.blas_workspace_size(backend="x"), RuntimeError,
                 "Unknown backend string.")):
            with pytest.raises(error, match=message):
                call()
    if not ember.cuda.is_available():
        for name in ("cublas_workspace_size", "cublaslt_workspace_size",
                     "blas_workspace_size"):
            with pytest.raises(AttributeError) as theirs_error:
                getattr(theirs, name)()
            with pytest.raises(AttributeError, match=str(theirs_error.value)):
                getattr(ours, name)()


def test_workspace_sizes_on_cuda(cupy_like, monkeypatch):
    cuda = ember.backends.cuda
    monkeypatch.setattr(cuda, "_workspace", {})
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    assert cuda.cublas_workspace_size() == (4096 * 2 + 16 * 8) * 1024
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    assert cuda.blas_workspace_size() == 4096 * 8 * 1024
    assert cuda.cublaslt_workspace_size(1 << 20) == 1 << 20 == cuda.cublaslt_workspace_size()


def test_attention_kernel_questions_as_pytorchs(torch):
    q = ember.randn(1, 2, 4, 8)
    params = ember.backends.cuda.SDPAParams(q, q, q, None, 0.0, False, False)
    assert (params.attn_mask, params.dropout, params.is_causal, params.enable_gqa) == \
        (None, 0.0, False, False)
    assert params.query is q
    with pytest.raises(TypeError, match="incompatible constructor arguments"):
        ember.backends.cuda.SDPAParams(q, q, q, None, 0.0, False)
    tq = torch.randn(1, 2, 4, 8)
    theirs = torch.backends.cuda.SDPAParams(tq, tq, tq, None, 0.0, False, False)
    for name in ("can_use_flash_attention", "can_use_efficient_attention",
                 "can_use_cudnn_attention"):
        assert getattr(ember.backends.cuda, name)(params, True) is \
            getattr(torch.backends.cuda, name)(theirs, True) is False
    for name in ("is_flash_attention_available", "is_ck_sdpa_available",
                 "fp16_bf16_reduction_math_sdp_allowed"):
        assert getattr(ember.backends.cuda, name)() == getattr(torch.backends.cuda, name)()
    ember.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True)
    assert ember.backends.cuda.fp16_bf16_reduction_math_sdp_allowed() is True
    ember.backends.cuda.allow_fp16_bf16_reduction_math_sdp(False)


def test_sdp_kernel_warns_and_scopes_the_kernel_flags(torch):
    cuda = ember.backends.cuda
    with pytest.warns(FutureWarning) as theirs:
        torch.backends.cuda.sdp_kernel(enable_flash=False)
    with pytest.warns(FutureWarning, match=str(theirs[0].message).split(".")[0]):
        scope = cuda.sdp_kernel(enable_flash=False, enable_cudnn=False)
    with scope as context:
        assert context == {}
        assert not cuda.flash_sdp_enabled() and not cuda.cudnn_sdp_enabled()
        assert cuda.math_sdp_enabled() and cuda.mem_efficient_sdp_enabled()
    assert cuda.flash_sdp_enabled() and cuda.cudnn_sdp_enabled()


def test_the_cufft_plan_cache_without_cuda(torch):
    if ember.cuda.is_available():
        pytest.skip("a GPU is present")
    for module in (torch, ember):
        with pytest.raises(RuntimeError, match="expected 0 <= device index < 0, but got device "
                                               "with index 0"):
            module.backends.cuda.cufft_plan_cache[0]
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            module.backends.cuda.cufft_plan_cache.max_size
        with pytest.raises(RuntimeError, match="Cannot access cuFFT plan cache without"):
            module.backends.cuda.cuFFTPlanCache(0).size


def test_the_cufft_plan_cache_is_cupys(cupy_like, monkeypatch):
    class PlanCache:
        def __init__(self):
            self.size, self.plans = 16, 3

        def get_size(self):
            return self.size

        def set_size(self, size):
            self.size = size

        def get_curr_size(self):
            return self.plans

        def clear(self):
            self.plans = 0
    plans = PlanCache()
    monkeypatch.setattr(cupy_like, "fft", type("fft", (), {"config": type("config", (), {
        "get_plan_cache": staticmethod(lambda: plans)})}))
    cache = ember.backends.cuda.cuFFTPlanCacheManager()
    assert cache[0].size == 3 and cache.max_size == 16
    cache.max_size = 4
    assert plans.size == 4
    with pytest.raises(RuntimeError, match="read-only property"):
        cache.size = 1
    cache.clear()
    assert cache[ember.device("cuda:0")].size == 0


def test_cudnn_and_mkldnn_module_types_and_constants(torch):
    ours, theirs = ember.backends, torch.backends
    assert type(ours.cudnn).__name__ == type(theirs.cudnn).__name__ == "CudnnModule"
    assert type(ours.mkldnn).__name__ == type(theirs.mkldnn).__name__ == "MkldnnModule"
    assert {str(d) for d in ours.cudnn.CUDNN_TENSOR_DTYPES} == \
        {str(d) for d in theirs.cudnn.CUDNN_TENSOR_DTYPES}
    assert ours.cudnn.depthwise_kernel == theirs.cudnn.depthwise_kernel
    with ours.cudnn.flags(depthwise_kernel="native"):
        assert ours.cudnn.depthwise_kernel == "native"
    assert ours.cudnn.depthwise_kernel == "auto"
    for module in (ours, theirs):
        with pytest.raises(RuntimeError, match="Unknown cuDNN depthwise kernel mode: x"):
            module.cudnn.depthwise_kernel = "x"
    for name in ("VERBOSE_OFF", "VERBOSE_ON", "VERBOSE_ON_CREATION"):
        assert getattr(ours.mkldnn, name) == getattr(theirs.mkldnn, name)
    assert ours.mkldnn.is_acl_available() is theirs.mkldnn.is_acl_available() is False
    with ours.mkldnn.verbose(ours.mkldnn.VERBOSE_OFF):
        pass
    with pytest.raises(AssertionError, match="Failed to set MKLDNN into verbose mode"):
        with ours.mkldnn.verbose(ours.mkldnn.VERBOSE_ON):
            pass


def test_mps_questions_fail_as_without_mps(torch):
    for name in ("get_core_count", "get_name"):
        with pytest.raises(AttributeError) as theirs:
            getattr(torch.backends.mps, name)()
        with pytest.raises(AttributeError, match=str(theirs.value)):
            getattr(ember.backends.mps, name)()
    for module in (torch.backends.mps, ember.backends.mps):
        for call in (lambda: module.is_macos_or_newer(14, 0), module.is_macos13_or_newer):
            with pytest.raises(RuntimeError, match="without MPS backend"):
                call()


# ---- the CPU build's other switches: mkl, cpu, quantized, opt_einsum, mha, nnpack, xnnpack

def test_cpu_capability_as_pytorchs(torch, monkeypatch):
    assert ember.backends.cpu.get_cpu_capability() == torch.backends.cpu.get_cpu_capability()
    assert ember.backends.cpu.__all__ == ["get_cpu_capability"]
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    assert ember.backends.cpu.get_cpu_capability() == "DEFAULT"


def test_mkl_is_numpys_blas_or_embers_and_its_verbose_mode():
    import numpy
    from ember import _gemm
    mkl = ember.backends.mkl
    blas = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    assert mkl.is_available() is ("mkl" in blas.lower() or _gemm._load_mkl() is not None)
    assert (mkl.VERBOSE_OFF, mkl.VERBOSE_ON) == (0, 1)
    with mkl.verbose(mkl.VERBOSE_OFF):
        pass
    with pytest.raises(AssertionError, match="Failed to set MKL into verbose mode"):
        with mkl.verbose(mkl.VERBOSE_ON):
            pass


def test_quantized_engine_as_pytorchs_cpu_build(torch):
    ours, theirs = ember.backends.quantized, torch.backends.quantized
    assert type(ours).__name__ == type(theirs).__name__ == "QuantizedEngine"
    assert ours.supported_engines == theirs.supported_engines
    assert ours.engine == theirs.engine
    before = (ours.engine, theirs.engine)
    try:
        for module in (ours, theirs):
            module.engine = "qnnpack"
            assert module.engine == "qnnpack"
            for value, message in (("bogus", "bogus is not a valid value for quantized engine"),
                                   ("none", "quantized engine NoQEngine is not supported"),
                                   (None, "quantized engine NoQEngine is not supported")):
                with pytest.raises(RuntimeError, match=message):
                    module.engine = value
            with pytest.raises(RuntimeError, match="Assignment not supported"):
                module.supported_engines = []
    finally:
        ours.engine, theirs.engine = before


def test_opt_einsum_flags_as_pytorchs(torch):
    ours, theirs = ember.backends.opt_einsum, torch.backends.opt_einsum
    assert type(ours).__name__ == type(theirs).__name__ == "OptEinsumModule"
    assert ours.is_available() is theirs.is_available()
    assert (ours.enabled, ours.strategy) == (theirs.enabled, theirs.strategy)
    assert (ours.get_opt_einsum() is None) is (theirs.get_opt_einsum() is None)
    assert ours.set_flags() == theirs.set_flags()
    if ours.is_available():
        with ours.flags(strategy="optimal"):
            assert ours.strategy == "optimal"
        assert ours.strategy == "auto"
        calls = [(True, "bad")]
    else:
        calls = [(True, None), (None, "greedy")]
    for enabled, strategy in calls:
        with pytest.raises(ValueError) as theirs_error:
            theirs.set_flags(enabled, strategy)
        with pytest.raises(ValueError) as ours_error:
            ours.set_flags(enabled, strategy)
        assert str(ours_error.value) == str(theirs_error.value)
    assert (ours.enabled, ours.strategy) == (theirs.enabled, theirs.strategy)


def test_einsum_contracts_left_to_right_or_on_opt_einsums_path(monkeypatch):
    """Without opt_einsum (or with it off) three operands contract left to right, as
    PyTorch's; with it on, on the path opt_einsum computes for the strategy."""
    import importlib
    module = importlib.import_module("ember.ops.linalg.einsum")
    oe = ember.backends.opt_einsum
    seen = []
    real = module._contract
    monkeypatch.setattr(module, "_contract", lambda xp, subs, out, arrays, path:
                        seen.append(path) or real(xp, subs, out, arrays, path))
    a, b, c = ember.randn(2, 3), ember.randn(3, 40), ember.randn(40, 1)
    want = (a @ b) @ c
    monkeypatch.setattr(oe, "enabled", False)
    assert ember.allclose(ember.einsum("ij,jk,kl->il", a, b, c), want, atol=1e-5)

    class FakeOptEinsum:
        @staticmethod
        def contract_path(equation, *shapes, optimize, **kw):
            seen.append((equation, shapes, optimize, kw))
            return [(1, 2), (0, 1)], "info"
    monkeypatch.setattr(oe, "_opt_einsum", FakeOptEinsum)
    monkeypatch.setattr(oe, "enabled", True)
    monkeypatch.setattr(oe, "strategy", "greedy")
    assert ember.allclose(ember.einsum("ij,jk,kl->il", a, b, c), want, atol=1e-5)
    assert seen == [None, ("ij,jk,kl->il", ((2, 3), (3, 40), (40, 1)), "greedy",
                           {"shapes": True}), [(1, 2), (0, 1)]]


def test_einsum_follows_a_given_path():
    import numpy as np
    from ember.ops.linalg.einsum import _contract
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in ((2, 3), (3, 4), (4, 5), (5, 2))]
    want = np.einsum("ij,jk,kl,lm->mi", *arrays)
    for path in (None, [(2, 3), (0, 1), (0, 1)], [(1, 2), (0, 2), (0, 1)]):
        got = _contract(np, ["ij", "jk", "kl", "lm"], "mi", arrays, path)
        assert np.allclose(got, want), path


def test_mha_fastpath_switch_governs_the_padded_encoder(torch):
    import numpy as np
    torch.manual_seed(0)
    theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, batch_first=True), 2).eval()
    ours = ember.nn.TransformerEncoder(ember.nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, batch_first=True), 2).eval()
    ours.load_state_dict({k: ember.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 4, 8)).astype(np.float32)
    pad = np.array([[False, False, True, True], [False, False, False, True]])
    assert ember.backends.mha.get_fastpath_enabled() is True
    try:
        for fast in (True, False):
            torch.backends.mha.set_fastpath_enabled(fast)
            ember.backends.mha.set_fastpath_enabled(fast)
            with torch.no_grad():
                want = theirs(torch.tensor(x), src_key_padding_mask=torch.tensor(pad))
            want = want.to_padded_tensor(0.0) if want.is_nested else want
            with ember.no_grad():
                got = ours(ember.tensor(x), src_key_padding_mask=ember.tensor(pad))
            assert np.allclose(got.numpy(), want.numpy(), atol=1e-5), fast
            assert (float(got[0, 3].abs().sum()) == 0.0) is fast
    finally:
        torch.backends.mha.set_fastpath_enabled(True)
        ember.backends.mha.set_fastpath_enabled(True)


def test_nnpack_and_xnnpack_as_without_them(torch):
    import torch.backends.xnnpack  # noqa: F401  (PyTorch imports it only when asked)
    import ember.backends.xnnpack
    nnpack = ember.backends.nnpack
    assert nnpack.__all__ == torch.backends.nnpack.__all__
    assert nnpack.is_available() is False
    assert nnpack.set_flags(False) == (True,)
    with nnpack.flags(enabled=True):
        assert nnpack.set_flags(True) == (True,)
    assert nnpack.set_flags(True) == (False,)
    xnnpack = ember.backends.xnnpack
    assert type(xnnpack).__name__ == type(torch.backends.xnnpack).__name__ == "XNNPACKEngine"
    assert xnnpack.enabled is torch.backends.xnnpack.enabled is False
    for module in (xnnpack, torch.backends.xnnpack):
        with pytest.raises(RuntimeError, match="Assignment not supported"):
            module.enabled = True
