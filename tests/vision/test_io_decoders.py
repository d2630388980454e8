"""decode_gif (every frame's own pixels, as giflib gives them), decode_webp, decode_avif and
decode_heic of ember.vision.io, on files Pillow writes."""
import io as _io

import numpy as np
import pytest

import ember
import ember.vision.io as io

Image = pytest.importorskip("PIL.Image")
RNG = np.random.default_rng(9)


def _bytes(img, fmt, **kwargs):
    buf = _io.BytesIO()
    img.save(buf, format=fmt, **kwargs)
    return ember.tensor(np.frombuffer(buf.getvalue(), np.uint8).copy())


def _palette_frames(n, h=13, w=17, colors=40):
    palette = RNG.integers(0, 256, (colors, 3), dtype=np.uint8)
    frames = []
    for _ in range(n):
        idx = RNG.integers(0, colors, (h, w), dtype=np.uint8)
        img = Image.fromarray(idx, "P")
        img.putpalette(palette.ravel().tolist())
        frames.append((img, palette[idx]))
    return frames


@pytest.mark.parametrize("interlace", [False, True])
def test_decode_gif_single_image_is_chw_rgb(interlace):
    (img, rgb), = _palette_frames(1, h=21, w=30)
    data = _bytes(img, "GIF", interlace=interlace)
    out = io.decode_gif(data)
    assert out.dtype == ember.uint8 and tuple(out.shape) == (3, 21, 30)
    np.testing.assert_array_equal(out.numpy().transpose(1, 2, 0), rgb)
    np.testing.assert_array_equal(io.decode_image(data).numpy(), out.numpy())


def test_decode_gif_frames_are_not_composited():
    frames = _palette_frames(3)
    data = _bytes(frames[0][0], "GIF", save_all=True, append_images=[f for f, _ in frames[1:]],
                  optimize=False, disposal=1)
    out = io.decode_gif(data)
    assert tuple(out.shape) == (3, 3, 13, 17)
    # Pillow may crop later frames to the changed region: the full-size ones read back whole
    for k, (_, rgb) in enumerate(frames):
        np.testing.assert_array_equal(out[k].numpy().transpose(1, 2, 0), rgb)


def test_decode_gif_large_palette_and_long_codes():
    img = Image.fromarray(RNG.integers(0, 256, (64, 80, 3), dtype=np.uint8)).quantize(256)
    out = io.decode_gif(_bytes(img, "GIF"))
    np.testing.assert_array_equal(out.numpy().transpose(1, 2, 0),
                                  np.asarray(img.convert("RGB")))


def test_decode_gif_errors():
    with pytest.raises(RuntimeError, match="DGifSlurp\\(\\) failed"):
        io.decode_gif(ember.tensor(np.frombuffer(b"GIF89a\x01\x00", np.uint8).copy()))
    with pytest.raises(RuntimeError, match="Input tensor must have uint8 data type"):
        io.decode_gif(ember.zeros(10))


@pytest.mark.parametrize("alpha", [False, True])
def test_decode_webp_modes(alpha):
    arr = RNG.integers(0, 256, (9, 11, 4 if alpha else 3), dtype=np.uint8)
    data = _bytes(Image.fromarray(arr), "WEBP", lossless=True)
    out = io.decode_webp(data)
    assert tuple(out.shape) == ((4 if alpha else 3), 9, 11)
    np.testing.assert_array_equal(out.numpy().transpose(1, 2, 0), arr)
    assert tuple(io.decode_webp(data, io.ImageReadMode.RGB).shape) == (3, 9, 11)
    rgba = io.decode_webp(data, "RGB_ALPHA")
    assert tuple(rgba.shape) == (4, 9, 11)
    if not alpha:
        assert bool((rgba[3] == 255).all())
    np.testing.assert_array_equal(io.decode_image(data).numpy(), out.numpy())
    with pytest.raises(RuntimeError, match="Input tensor must be 1-dimensional, got 2 dims."):
        io.decode_webp(data[None])


def test_decode_avif_and_heic():
    from PIL import features
    arr = RNG.integers(0, 256, (8, 10, 3), dtype=np.uint8)
    if features.check("avif"):
        data = _bytes(Image.fromarray(arr), "AVIF")
        out = io.decode_avif(data)
        want = np.asarray(Image.open(_io.BytesIO(data.numpy().tobytes())).convert("RGB"))
        assert tuple(out.shape) == (3, 8, 10)
        np.testing.assert_array_equal(out.numpy().transpose(1, 2, 0), want)
    try:
        import pillow_heif  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="In order to enable the HEIC decoding"):
            io.decode_heic(ember.zeros(4, dtype=ember.uint8))
