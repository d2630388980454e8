"""torch.cuda's device and runtime queries: on the machine without a GPU, PyTorch's CPU build's
answers and errors; on the CuPy-like stand-in, the device's figures under PyTorch's names."""
import sys
import warnings

import pytest

import ember
from ember import _state
from tests._strict_cupy import REAL_CUDA

cuda = ember.cuda
_NO_GPU = pytest.mark.skipif(cuda.is_available(), reason="a GPU is present")
_NOT_COMPILED = "Torch not compiled with CUDA enabled"


@_NO_GPU
def test_without_a_gpu_the_answers_are_pytorchs_cpu_builds(torch):
    for name in ("get_arch_list", "get_gencode_flags", "is_bf16_supported",
                 "is_tf32_supported"):
        assert getattr(cuda, name)() == getattr(torch.cuda, name)(), name
    assert cuda.default_generators == torch.cuda.default_generators == ()
    assert (cuda.has_half, cuda.has_magma) == (torch.cuda.has_half, torch.cuda.has_magma)
    assert (cuda.cudaStatus.SUCCESS, cuda.cudaStatus.ERROR_NOT_READY) == \
        (torch.cuda.cudaStatus.SUCCESS, torch.cuda.cudaStatus.ERROR_NOT_READY)
    calls = [("can_device_access_peer", (0, 0)), ("cudart", ()), ("current_blas_handle", ()),
             ("current_solver_handle", ()), ("get_device_capability", ()),
             ("get_device_properties", (0,)), ("get_stream_from_external", (0,)),
             ("get_sync_debug_mode", ()), ("set_sync_debug_mode", ("warn",)), ("init", ()),
             ("ipc_collect", ())]
    for name, args in calls:
        with pytest.raises(AssertionError, match=_NOT_COMPILED):
            getattr(torch.cuda, name)(*args)
        with pytest.raises(AssertionError, match=_NOT_COMPILED):
            getattr(cuda, name)(*args)
    assert issubclass(cuda.CudaError, RuntimeError)
    assert issubclass(cuda.DeferredCudaCallError, Exception)
    cuda.check_error(cuda.cudaStatus.SUCCESS)
    with pytest.raises(RuntimeError, match="not built with Green Context support"):
        cuda.GreenContext.create(num_sms=4)


@_NO_GPU
def test_device_context_managers_without_a_gpu(torch):
    with pytest.raises(RuntimeError, match="PyTorch was compiled without CUDA support"):
        with torch.cuda.device(0):
            pass
    with pytest.raises(RuntimeError, match="PyTorch was compiled without CUDA support"):
        with cuda.device(0):
            pass
    with cuda.device(-1), cuda.device_of(ember.zeros(1)):  # the CPU: nothing changes
        assert cuda.device_of(ember.zeros(1)).idx == torch.cuda.device_of(torch.zeros(1)).idx
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.device("cpu")


@_NO_GPU
def test_nvtx_ranges_and_submodules_without_a_gpu(torch):
    for name, args in (("range_start", ("a",)), ("range_end", (0,))):
        with pytest.raises(AttributeError) as theirs:
            getattr(torch.cuda.nvtx, name)(*args)
        with pytest.raises(AttributeError, match=str(theirs.value)):
            getattr(cuda.nvtx, name)(*args)
    with pytest.warns(UserWarning, match="not compiled with NCCL support"):
        assert cuda.nccl.is_available([]) is False
    for name, args in (("version", ()), ("unique_id", ()), ("all_reduce", ([],))):
        with pytest.raises(AttributeError) as theirs:
            getattr(torch.cuda.nccl, name)(*args)
        with pytest.raises(AttributeError, match=str(theirs.value)):
            getattr(cuda.nccl, name)(*args)
    for name, args in (("is_enabled", ()), ("enable", (True,)), ("get_filename", ()),
                       ("get_results", ())):
        with pytest.raises(AttributeError) as theirs:
            getattr(torch.cuda.tunable, name)(*args)
        with pytest.raises(AttributeError, match=str(theirs.value)):
            getattr(cuda.tunable, name)(*args)
    with pytest.raises(TypeError) as theirs:
        torch.cuda.sparse.FloatTensor(2, 3)
    with pytest.raises(TypeError, match=str(theirs.value)):
        cuda.sparse.FloatTensor(2, 3)
    jitted = cuda.jiterator._create_jit_fn("template <typename T> T add(T x, T y, T a) "
                                           "{ return x + a * y; }", a=1.0)
    assert jitted.num_inputs == 2 and jitted.kernel_name == "add"
    with pytest.raises(AssertionError, match="only supported on CUDA"):
        jitted(ember.zeros(2), ember.zeros(2))


@pytest.mark.skipif(REAL_CUDA, reason="the stand-in's own figures and pool")
def test_the_stand_in_devices_properties(cupy_like):
    props = cuda.get_device_properties(0)
    assert (props.name, props.major, props.minor) == ("Stand-in GPU", 8, 6)
    assert props.total_memory == 24 << 30 and props.multi_processor_count == 84
    assert props.uuid == "00010203-0405-0607-0809-0a0b0c0d0e0f"
    assert repr(props).startswith("_CudaDeviceProperties(name='Stand-in GPU', major=8, "
                                  "minor=6, total_memory=24576MB, multi_processor_count=84")
    assert cuda.get_device_capability() == (8, 6)
    assert cuda.is_bf16_supported() and cuda.is_tf32_supported()
    assert cuda.get_arch_list() == ["sm_75", "sm_80", "sm_86", "sm_90"]
    assert cuda.get_gencode_flags().split(" -gencode ")[-1] == "compute=compute_90,code=sm_90"
    assert cuda.can_device_access_peer(0, 0) is False
    with pytest.raises(AssertionError, match="Invalid peer device id"):
        cuda.can_device_access_peer(0, 3)
    with pytest.raises(AssertionError, match="Invalid device id"):
        cuda.get_device_properties(2)
    assert (cuda.current_blas_handle(), cuda.current_solver_handle()) == (0x1234, 0x5678)
    assert cuda.cudart() is cupy_like.cuda.runtime
    cuda.init()
    cuda.ipc_collect()
    assert cuda.default_generators == (ember.random.generator_for(ember.device("cuda:0")),)
    with pytest.raises(RuntimeError, match=r"device not ready \(34\)"):
        cuda.check_error(34)


def test_device_context_managers_select_and_restore(cupy_like, monkeypatch):
    monkeypatch.setattr(_state, "cuda_device", 0)
    with cuda.device(1):
        assert cuda.current_device() == 1
        with cuda.device(-1):
            assert cuda.current_device() == 1
    assert cuda.current_device() == 0


def test_sync_debug_mode_warns_or_fails_on_a_copy_to_the_host(cupy_like, monkeypatch):
    monkeypatch.setattr(_state, "cuda_sync_debug_mode", 0)
    backend = sys.modules["ember.device"].CudaBackend()

    array = cupy_like.ones(2)
    assert cuda.get_sync_debug_mode() == 0
    cuda.set_sync_debug_mode("warn")
    assert cuda.get_sync_debug_mode() == 1
    with pytest.warns(UserWarning, match="called a synchronizing CUDA operation"):
        assert backend.to_host(array).tolist() == [1.0, 1.0]
    cuda.set_sync_debug_mode(2)
    with pytest.raises(RuntimeError, match="called a synchronizing CUDA operation"):
        backend.to_host(array)
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        cuda.set_sync_debug_mode("loud")
    cuda.set_sync_debug_mode("default")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        backend.to_host(array)


def test_tunable_keeps_its_settings_and_reads_a_results_file(cupy_like, tmp_path, monkeypatch):
    monkeypatch.setattr(cuda.tunable, "_settings", dict(cuda.tunable._settings))
    cuda.tunable.enable(True)
    assert cuda.tunable.is_enabled() is True
    cuda.tunable.set_max_tuning_iterations(7)
    assert cuda.tunable.get_max_tuning_iterations() == 7
    with pytest.raises(TypeError):
        cuda.tunable.enable(1)
    cuda.tunable.set_filename(str(tmp_path / "results.csv"), insert_device_ordinal=True)
    assert cuda.tunable.get_filename() == str(tmp_path / "results0.csv")
    (tmp_path / "results0.csv").write_text("Validator,PT_VERSION,2.13\n"
                                           "GemmTunableOp_float_NT,nt_8_8_8,Gemm_Cublas,0.01\n")
    assert cuda.tunable.read_file() is True
    assert cuda.tunable.get_validators() == (("PT_VERSION", "2.13"),)
    assert cuda.tunable.get_results() == (("GemmTunableOp_float_NT", "nt_8_8_8",
                                           "Gemm_Cublas", 0.01),)
    assert cuda.tunable.read_file(str(tmp_path / "missing.csv")) is False


def test_legacy_sparse_classes_on_the_stand_in(fake_cuda):
    indices, values = ember.tensor([[0, 1], [1, 0]]), ember.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match="torch.sparse_coo_tensor"):
        s = cuda.sparse.FloatTensor(indices, values, ember.Size([2, 2]))
    assert s.is_sparse and s.is_cuda and s.shape == (2, 2)
    assert isinstance(s, cuda.sparse.FloatTensor)
    assert not isinstance(s, cuda.sparse.DoubleTensor)
    assert not isinstance(s.to_dense(), cuda.sparse.FloatTensor)
    with pytest.warns(UserWarning):
        empty = cuda.sparse.LongTensor(2, 3)
    assert empty.shape == (2, 3) and empty.dtype is ember.int64 and empty._nnz() == 0


def test_jiterator_builds_an_elementwise_kernel_around_the_users_function(cupy_like, monkeypatch):
    made = []

    class ElementwiseKernel:
        """Records what ember asks CuPy to compile; runs the body's function on the arrays."""

        def __init__(self, in_params, out_params, operation, name, preamble):
            made.append((in_params, out_params, operation, preamble))

        def __call__(self, x, y, a):
            return x + a * y
    # CuPy compiles CUDA C; the stand-in cannot, so the test plays the compiler
    monkeypatch.setattr(cupy_like, "ElementwiseKernel", ElementwiseKernel, raising=False)
    code = "template <typename T> T axpy(T x, T y, T alpha) { return x + alpha * y; }"
    axpy = cuda.jiterator._create_jit_fn(code, alpha=1.0)
    x, y = ember.tensor([1.0, 2.0], device="cuda"), ember.tensor([10.0, 20.0], device="cuda")
    out = axpy(x, y)
    assert out.device == ember.device("cuda:0") and out.tolist() == [11.0, 22.0]
    assert axpy(x, y, alpha=2.0).tolist() == [21.0, 42.0]
    assert made == [("T x, T y, T alpha", "T out0", "out0 = axpy(x, y, alpha)", code)]
    with pytest.raises(AssertionError, match="beta is not declared"):
        axpy(x, y, beta=1.0)
    with pytest.raises(AssertionError, match="expected 2 inputs, got 1"):
        axpy(x)
    with pytest.raises(RuntimeError, match="must live on a CUDA device"):
        axpy(x.cpu(), y.cpu())
