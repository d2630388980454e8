"""The short-time Fourier transform and its inverse (`torch.stft`, `torch.istft`), written
with ember ops (pad, unfold, rfft/fft, fold), so their gradients are those ops' gradients.

stft: frames of `n_fft` samples every `hop_length`, each times the window (zero-padded to
n_fft, centred), transformed; the result is (freq, frames) per signal. istft: each frame
transformed back, windowed, overlap-added, and divided by the overlap-added squared window.
"""

from .. import dtypes as _dt
from .._state import warn_once
from .complex_views import view_as_complex, view_as_real
from .conv import fold
from .creation import ones
from .spatial import pad
from .spectral import fft, ifft, irfft, rfft

__all__ = ["stft", "istft"]
METHODS = ["stft", "istft"]


def _signature(name, x, n_fft, hop, win, window, normalized, onesided, return_complex):
    """PyTorch's error prefix: the call as it saw it."""
    shape = ", ".join(str(s) for s in x.shape)
    win_text = "None" if window is None else \
        f"torch.{window.dtype._tensor_type}{{[{', '.join(str(s) for s in window.shape)}]}}"
    return (f"{name}(torch.{x.dtype._tensor_type}[{shape}], n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={win_text}, normalized={int(bool(normalized))}, "
            f"onesided={'None' if onesided is None else int(onesided)}, "
            f"return_complex={int(bool(return_complex))}, align_to_window=None) : ")


def _full_window(window, win_length, n_fft, like, name, warn):
    """The window zero-padded on both sides to n_fft (a rectangular one when None)."""
    if window is None:
        warn_once(warn)
        window = ones(win_length, dtype=like.dtype if not like.dtype.is_complex else
                      _dt.float32, device=like.device)
    left = (n_fft - win_length) // 2
    return pad(window, (left, n_fft - win_length - left)) if win_length < n_fft else window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    if return_complex is None and not (input.dtype.is_complex or
                                       (window is not None and window.dtype.is_complex)):
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    x = input
    if center:
        if x.ndim not in (1, 2):
            raise RuntimeError(_signature("stft", x, n_fft, hop, win, window, normalized,
                                          onesided, return_complex)
                               + "expected a 1D or 2D tensor")
        half = n_fft // 2
        x = pad(x.unsqueeze(-2), (half, half), mode=pad_mode).squeeze(-2)
    where = _signature("stft", x, n_fft, hop, win, window, normalized, onesided,
                       return_complex)
    if x.ndim not in (1, 2):
        raise RuntimeError(where + "expected a 1D or 2D tensor")
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(where + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(where + f"expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(where + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(where + "expected a 1D window tensor of size equal to win_length="
                           f"{win}, but got window with size {list(window.shape)}")
    full = _full_window(window, win, n_fft, x, "stft",
                        "A window was not provided. A rectangular window will be applied,which "
                        "is known to cause spectral leakage. Other windows such as "
                        "torch.hann_window or torch.hamming_window are recommended to reduce "
                        "spectral leakage.To suppress this warning and use a rectangular "
                        "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    frames = x.unfold(-1, n_fft, hop) * full          # (..., n_frames, n_fft)
    complex_input = x.dtype.is_complex or full.dtype.is_complex
    one_sided = (not complex_input) if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    spectrum = rfft(frames, dim=-1, norm=norm) if one_sided else fft(frames, dim=-1, norm=norm)
    spectrum = spectrum.transpose(-1, -2)              # (..., freq, n_frames)
    if return_complex:
        return spectrum
    warn_once("stft with return_complex=False is deprecated. In a future pytorch release, stft "
              "will return complex tensors for all inputs, and return_complex=False will raise "
              "an error.\nNote: you can still call torch.view_as_real on the complex output to "
              "recover the old return format.")
    return view_as_real(spectrum)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    spectrum = input if input.dtype.is_complex else view_as_complex(input)
    given = spectrum
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    batched = spectrum.ndim == 3
    if not batched:
        spectrum = spectrum.unsqueeze(0)
    one_sided = (spectrum.shape[-2] != n_fft) if onesided is None else onesided
    if one_sided and return_complex:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    if not one_sided and not return_complex:
        # a real signal needs only the non-negative frequencies: the rest are taken to be
        # their conjugates (the inverse real transform), as PyTorch does
        spectrum = spectrum.narrow(-2, 0, n_fft // 2 + 1)
        one_sided = True
    full = _full_window(window, win, n_fft, spectrum.real,
                        "istft", "A window was not provided. A rectangular window will be "
                        "applied.Please provide the same window used by stft to make the "
                        "inversion lossless.To suppress this warning and use a rectangular "
                        "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    norm = "ortho" if normalized else "backward"
    frames_f = spectrum.transpose(-1, -2)               # (B, n_frames, freq)
    frames = irfft(frames_f, n=n_fft, dim=-1, norm=norm) if one_sided else \
        ifft(frames_f, n=n_fft, dim=-1, norm=norm)
    if not return_complex and frames.dtype.is_complex:
        frames = frames.real
    frames = frames * full                              # (B, n_frames, n_fft)
    n_frames = frames.shape[-2]
    expected = n_fft + hop * (n_frames - 1)
    size = (1, expected)

    def overlap_add(blocks):                            # (B, n_frames, n_fft) -> (B, expected)
        return fold(blocks.transpose(-1, -2), size, (1, n_fft), stride=(1, hop))[:, 0, 0]

    if frames.dtype.is_complex:
        signal = view_as_complex(overlap_add(view_as_real(frames).movedim(-1, 0).flatten(0, 1))
                                 .unflatten(0, (2, -1)).movedim(0, -1).contiguous())
    else:
        signal = overlap_add(frames)
    square = (full * full.conj()).real if full.dtype.is_complex else full * full
    envelope = overlap_add(square.expand(1, n_frames, n_fft))[0]
    start = n_fft // 2 if center else 0
    end = expected if length is None else start + length
    if length is None and center:
        end = expected - n_fft // 2
    envelope = envelope[start:end]
    if bool((envelope.abs() < 1e-11).any()):
        # PyTorch's message, down to the boolean tensor it prints as the "min"
        kind = ("CUDA" if given.device.type == "cuda" else "CPU") + \
            ("ComplexDouble" if given.dtype is _dt.complex128 else "ComplexFloat") + "Type"
        win_text = "None" if window is None else \
            f"torch.{window.dtype._tensor_type}{{[{', '.join(map(str, window.shape))}]}}"
        raise RuntimeError(
            f"istft({kind}[{', '.join(map(str, given.shape))}], n_fft={n_fft}, "
            f"hop_length={hop}, win_length={win}, window={win_text}, center={int(center)}, "
            f"normalized={int(bool(normalized))}, "
            f"onesided={'None' if onesided is None else int(onesided)}, length={length}, "
            f"return_complex={int(bool(return_complex))}) window overlap add min: 1\n"
            "[ CPUBoolType{} ]")
    signal = signal[..., start:end] / envelope
    if length is not None and signal.shape[-1] < length:
        signal = pad(signal, (0, length - signal.shape[-1]))
    return signal if batched else signal.squeeze(0)
