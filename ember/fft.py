"""`torch.fft`: discrete Fourier transforms (`ember.fft.fft`, `ember.fft.rfft2` ...).

Re-exports only: the transforms and their backward nodes live in `ember/ops/spectral.py`.
"""
from ._tensor import Tensor  # noqa: F401  (torch.fft.Tensor, as PyTorch's module has it)
from .ops.spectral import (fft, fft2, fftfreq, fftn, fftshift, hfft, hfft2, hfftn, ifft, ifft2,
                           ifftn, ifftshift, ihfft, ihfft2, ihfftn, irfft, irfft2, irfftn, rfft,
                           rfft2, rfftfreq, rfftn)

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

from .ops._numpy_names import accept_in as _accept_in  # noqa: E402

_accept_in(globals(), __all__, "fft")  # `axis=` ... as PyTorch's C++-bound functions take them
