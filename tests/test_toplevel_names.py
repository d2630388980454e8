"""Top-level names that are other namespaces' objects or thin forms of Tensor methods
(`torch.vmap`, `torch.GradScaler`, `torch.get_device` ...), and the build flags, against
PyTorch."""
import pytest

import ember


def test_aliases_are_the_namespaces_objects():
    assert ember.vmap is ember.func.vmap
    assert ember.GradScaler is ember.amp.GradScaler
    assert ember.cuda.OutOfMemoryError is ember.OutOfMemoryError
    assert ember.random.thread_safe_generator is ember.thread_safe_generator


def test_vmap_from_the_top_level(torch):
    for lib in (ember, torch):
        out = lib.vmap(lambda r: r.sum())(lib.arange(6.0).reshape(2, 3))
        assert out.tolist() == [3.0, 12.0]


@pytest.mark.parametrize("name", ["OutOfMemoryError", "AcceleratorError"])
def test_errors_are_runtime_errors(torch, name):
    ours, theirs = getattr(ember, name), getattr(torch, name)
    assert [c.__name__ for c in ours.__mro__] == [c.__name__ for c in theirs.__mro__]
    with pytest.raises(RuntimeError, match="gone"):
        raise ours("gone")


@pytest.mark.parametrize("name", ["get_device", "is_inference", "is_distributed"])
def test_tensor_queries(torch, name):
    assert getattr(ember, name)(ember.ones(2)) == getattr(torch, name)(torch.ones(2))
    with ember.inference_mode(), torch.inference_mode():
        assert getattr(ember, name)(ember.ones(2)) == getattr(torch, name)(torch.ones(2))
    with pytest.raises(TypeError) as theirs:
        getattr(torch, name)(1)
    with pytest.raises(TypeError) as ours:
        getattr(ember, name)(1)
    assert str(ours.value) == str(theirs.value)


def test_thread_safe_generator_outside_thread_workers(torch):
    assert ember.thread_safe_generator() is None and torch.thread_safe_generator() is None


def test_build_flags():
    # ember's linear algebra and FFTs are NumPy's LAPACK and pocketfft; its BLAS and threads
    # are OpenBLAS's, so neither MKL nor OpenMP
    assert (ember.has_lapack, ember.has_spectral, ember.has_mkl, ember.has_openmp) == \
        (True, True, False, ember.backends.openmp.is_available())


def test_set_anomaly_enabled_sets_both_flags_for_good(torch):
    before = (ember.is_anomaly_enabled(), ember.is_anomaly_check_nan_enabled())
    try:
        for args in [(True,), (True, False), (False, False), (False,)]:
            ember.set_anomaly_enabled(*args)
            torch.set_anomaly_enabled(*args)
            assert (ember.is_anomaly_enabled(), ember.is_anomaly_check_nan_enabled()) == \
                (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    finally:
        ember.set_anomaly_enabled(*before)
        torch.set_anomaly_enabled(False)


def test_error_classes_sit_where_pytorch_has_them(torch):
    import ember.distributed as dist
    assert issubclass(ember.FatalError, Exception) and not issubclass(ember.FatalError,
                                                                         RuntimeError)
    assert issubclass(dist.DistBackendError, dist.DistError)
    assert issubclass(dist.QueueEmptyError, dist.DistStoreError)
    assert [s.name for s in ember.amp.grad_scaler.OptState] == \
        [s.name for s in torch.amp.grad_scaler.OptState]
