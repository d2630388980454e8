"""`ember.backends`: the switches PyTorch scripts set (cudnn flags ...). ember has no cuDNN
or MKL of its own; the flags are kept so scripts that set or read them run unchanged."""
import types

__all__ = ["cudnn", "cuda", "mps", "mkldnn", "openmp"]


class _Flags(types.ModuleType):
    def __init__(self, name, available=False, **flags):
        super().__init__(name)
        self.__dict__.update(flags)
        self._available = available

    def is_available(self):
        return self._available

    def version(self):
        return None

    def flags(self, **kwargs):
        import contextlib

        @contextlib.contextmanager
        def scope():
            old = {k: getattr(self, k) for k in kwargs}
            self.__dict__.update(kwargs)
            try:
                yield
            finally:
                self.__dict__.update(old)
        return scope()


cudnn = _Flags("ember.backends.cudnn", enabled=True, benchmark=False, deterministic=False,
               allow_tf32=True)
mps = _Flags("ember.backends.mps")
mkldnn = _Flags("ember.backends.mkldnn", enabled=True)
openmp = _Flags("ember.backends.openmp")
cuda = _Flags("ember.backends.cuda")
cuda.matmul = types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True)
