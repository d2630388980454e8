"""ember.vision.io: uint8 (C, H, W) images through Pillow, as torchvision.io returns them."""
import numpy as np
import pytest

import ember
import ember.vision.io as io

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402


def _img(c, h=6, w=9, seed=0):
    return ember.tensor(np.random.default_rng(seed).integers(0, 256, (c, h, w)).astype(np.uint8))


def test_read_and_write_file(tmp_path):
    data = ember.tensor(np.frombuffer(b"\x00\x01hello\xff", dtype=np.uint8).copy())
    io.write_file(str(tmp_path / "f.bin"), data)
    back = io.read_file(str(tmp_path / "f.bin"))
    assert back.dtype == ember.uint8 and back.dim() == 1 and back.tolist() == data.tolist()
    with pytest.raises(RuntimeError, match="No such file or directory"):
        io.read_file(str(tmp_path / "missing.png"))


@pytest.mark.parametrize("channels", [1, 3])
def test_png_round_trip_is_exact(tmp_path, channels):
    img = _img(channels)
    encoded = io.encode_png(img, compression_level=9)
    assert encoded.dtype == ember.uint8 and encoded.dim() == 1
    assert bytes(encoded.numpy()[:8]) == b"\x89PNG\r\n\x1a\n"
    out = io.decode_png(encoded)
    assert out.dtype == ember.uint8 and tuple(out.shape) == (channels, 6, 9)
    assert out.is_contiguous() and out.tolist() == img.tolist()
    io.write_png(img, str(tmp_path / "a.png"))
    assert io.read_image(str(tmp_path / "a.png")).tolist() == img.tolist()
    assert io.decode_image(str(tmp_path / "a.png")).tolist() == img.tolist()


def test_png_modes(tmp_path):
    rgb = _img(3)
    io.write_png(rgb, str(tmp_path / "c.png"))
    path = str(tmp_path / "c.png")
    gray = io.read_image(path, io.ImageReadMode.GRAY).numpy()[0].astype(np.int64)
    r, g, b = (rgb.numpy()[i].astype(np.int64) for i in range(3))
    assert gray.tolist() == ((6968 * r + 23434 * g + 2366 * b + 16384) >> 15).tolist()
    rgba = io.read_image(path, io.ImageReadMode.RGB_ALPHA)
    assert tuple(rgba.shape) == (4, 6, 9) and (rgba.numpy()[3] == 255).all()
    assert rgba.numpy()[:3].tolist() == rgb.tolist()
    assert tuple(io.read_image(path, "gray_alpha").shape) == (2, 6, 9)
    # a gray file asked for RGB repeats its channel
    g1 = _img(1, seed=3)
    io.write_png(g1, str(tmp_path / "g.png"))
    as_rgb = io.read_image(str(tmp_path / "g.png"), io.ImageReadMode.RGB).numpy()
    assert (as_rgb == g1.numpy()).all() and as_rgb.shape == (3, 6, 9)
    # RGBA files keep their alpha unless told otherwise
    arr = np.random.default_rng(1).integers(0, 256, (4, 5, 3)).astype(np.uint8)
    Image.fromarray(arr).save(tmp_path / "t.png")
    out = io.read_image(str(tmp_path / "t.png"))
    assert out.numpy().transpose(1, 2, 0).tolist() == arr.tolist()
    assert tuple(io.read_image(str(tmp_path / "t.png"), io.ImageReadMode.RGB).shape) == (3, 4, 5)
    # palette images are expanded to their colours
    pal = Image.fromarray(np.ascontiguousarray(arr[..., :3])).convert("P", palette=Image.ADAPTIVE, colors=8)
    pal.save(tmp_path / "p.png")
    expected = np.asarray(pal.convert("RGB")).transpose(2, 0, 1)
    assert io.read_image(str(tmp_path / "p.png")).numpy().tolist() == expected.tolist()


def test_jpeg():
    smooth = np.add.outer(np.arange(16), np.arange(24)).astype(np.uint8) * 4
    img = ember.tensor(np.stack([smooth, smooth[::-1], 255 - smooth]))
    data = io.encode_jpeg(img, quality=95)
    assert bytes(data.numpy()[:2]) == b"\xff\xd8"
    out = io.decode_jpeg(data)
    assert out.dtype == ember.uint8 and tuple(out.shape) == (3, 16, 24)
    assert np.abs(out.numpy().astype(int) - img.numpy().astype(int)).mean() < 3
    assert io.decode_image(data).tolist() == out.tolist()
    gray = io.decode_jpeg(data, mode=io.ImageReadMode.GRAY)
    assert tuple(gray.shape) == (1, 16, 24)
    luma = (0.299 * out.numpy()[0] + 0.587 * out.numpy()[1] + 0.114 * out.numpy()[2])
    assert np.abs(gray.numpy()[0] - luma).max() < 3
    both = io.encode_jpeg([img, img[:1]])
    assert isinstance(both, list) and [tuple(io.decode_jpeg(t).shape) for t in both] == \
        [(3, 16, 24), (1, 16, 24)]
    assert isinstance(io.decode_jpeg(both), list)
    with pytest.raises(ValueError, match="Image quality should be a positive number between "
                                         "1 and 100"):
        io.encode_jpeg(img, quality=0)
    with pytest.raises(RuntimeError, match="not a PNG"):
        io.decode_png(data)


def test_bad_inputs():
    with pytest.raises(RuntimeError, match="Input tensor dtype should be uint8"):
        io.encode_png(ember.zeros(3, 4, 4))
    with pytest.raises(RuntimeError, match="The number of channels should be 1 or 3, got: 2"):
        io.encode_png(ember.zeros(2, 4, 4, dtype=ember.uint8))
    with pytest.raises(RuntimeError, match="Expected a torch.uint8 tensor"):
        io.decode_image(ember.zeros(10))
    assert [m.value for m in io.ImageReadMode] == [0, 1, 2, 3, 4]
