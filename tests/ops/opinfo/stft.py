"""Op-table entries for `ember/ops/stft.py`: stft (complex results leave through
view_as_real) and istft (its input comes in as a real (..., 2) array, turned complex inside)."""
import warnings

import numpy as np

from . import OpInfo, Sample, randn, register


def _hann(n, floor=0.1):
    """A periodic Hann window lifted by `floor` (0: the true one, zero at its first sample)."""
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n) + floor


def _stft(lib, x, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rectangular-window advice
        out = lib.stft(x, *args, **kwargs)
    return lib.view_as_real(out) if out.dtype.is_complex else out


def _istft(lib, spec, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.istft(lib.view_as_complex(spec), *args, **kwargs)


def _stft_samples(rng):
    c = {"return_complex": True}
    return [
        Sample((randn(rng, 20), 8), c),
        Sample((randn(rng, 2, 24), 8, 3, 6, _hann(6)), c),
        Sample((randn(rng, 2, 24), 8), {"center": False, "normalized": True, **c}),
        Sample((randn(rng, 21), 9), {"onesided": False, "pad_mode": "constant", **c}),
        Sample((randn(rng, 16), 8, 4, None, _hann(8)), {"return_complex": False}),
        Sample((randn(rng, 20), 8), raises=RuntimeError),   # return_complex not given
        Sample((randn(rng, 20), 30), {"center": False, **c}, raises=RuntimeError),
        Sample((randn(rng, 20), 8, 0), c, raises=RuntimeError),
        Sample((randn(rng, 20), 8, 2, 9), c, raises=RuntimeError),
        Sample((randn(rng, 20), 8, 2, 8, _hann(5)), c, raises=RuntimeError),
    ]


def _spectrum(rng, *shape):
    return randn(rng, *shape, 2)


def _istft_samples(rng):
    return [
        Sample((_spectrum(rng, 5, 11), 8, 2, 8, _hann(8))),
        Sample((_spectrum(rng, 2, 5, 9), 8, 3, 6, _hann(6)), {"length": 26}),
        Sample((_spectrum(rng, 5, 9), 8, 4, 8, _hann(8)), {"center": False, "length": 30}),
        # a two-sided spectrum to a real signal: only its first n_fft // 2 + 1 rows count
        Sample((_spectrum(rng, 9, 7), 9, 3, 9, _hann(9)), {"onesided": False,
                                                           "normalized": True}),
        Sample((_spectrum(rng, 5, 11), 8, 2, 8, _hann(8, 0)), {"center": False},
               raises=RuntimeError),  # the Hann window's zero leaves the first sample unknown
    ]


register(
    OpInfo("stft", _stft, _stft_samples, gradgrad=False),
    OpInfo("stft", lambda lib, x, *a, **k: _stft(lib, x, *a, **k), _stft_samples,
           covers=("Tensor.stft",), grad=False, gradgrad=False, variant="method"),
    OpInfo("istft", _istft, _istft_samples, gradgrad=False),
)
