"""Item-by-item comparison of an ember dataset with torchvision's over the same files, and small
writers for the formats the fake on-disk copies need."""
import os
import struct

import numpy as np

from tests._torchvision_oracle import import_torchvision


def tv_datasets():
    return import_torchvision().datasets


def assert_same(ours, theirs, where="item"):
    """Equal structure, types and values: PIL images by mode/size/pixels, tensors by
    dtype/shape/values, containers element by element."""
    from PIL import Image
    if isinstance(theirs, Image.Image):
        assert isinstance(ours, Image.Image), where
        assert (ours.mode, ours.size) == (theirs.mode, theirs.size), where
        assert ours.tobytes() == theirs.tobytes(), where
    elif type(theirs).__module__.split(".")[0] in ("torch", "torchvision") and \
            hasattr(theirs, "dtype"):  # tensors and tv_tensors
        assert type(ours).__name__ == type(theirs).__name__, where
        if hasattr(theirs, "canvas_size"):
            assert ours.format.name == theirs.format.name, where
            assert tuple(ours.canvas_size) == tuple(theirs.canvas_size), where
        assert str(ours.dtype) == str(theirs.dtype), where
        assert tuple(ours.shape) == tuple(theirs.shape), where
        np.testing.assert_array_equal(np.asarray(ours.numpy()), theirs.numpy(), err_msg=where)
    elif isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray) and ours.dtype == theirs.dtype, where
        np.testing.assert_array_equal(ours, theirs, err_msg=where)
    elif isinstance(theirs, dict):
        # key sets, not orders: torchvision fills some dicts by iterating a set of names
        assert isinstance(ours, dict) and set(ours) == set(theirs), where
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{where}[{key!r}]")
    elif hasattr(theirs, "_fields"):  # namedtuples: the same name and fields
        assert type(ours).__name__ == type(theirs).__name__, where
        assert ours._fields == theirs._fields and tuple(ours) == tuple(theirs), where
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{where}[{i}]")
    else:
        assert type(ours) is type(theirs) and ours == theirs, (where, ours, theirs)


def assert_same_dataset(ours, theirs, attrs=(), check_repr=True):
    assert len(ours) == len(theirs)
    for i in range(len(theirs)):
        assert_same(ours[i], theirs[i], f"item {i}")
    for name in attrs:
        assert_same(getattr(ours, name), getattr(theirs, name), name)
    if check_repr:
        assert repr(ours).replace("ember", "torch") == repr(theirs)


def write_idx(path, arr, code=8):
    """An IDX file (big-endian, `code` the element type: 8 uint8, 12 int32)."""
    dtype = {8: ">u1", 12: ">i4"}[code]
    header = struct.pack(">BBBB", 0, 0, code, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
    with open(path, "wb") as f:
        f.write(header + np.asarray(arr).astype(dtype).tobytes())


def write_image(path, size=(6, 5), mode="RGB", seed=0):
    from PIL import Image
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    rng = np.random.default_rng(seed)
    channels = {"RGB": 3, "L": 1, "RGBA": 4}[mode]
    pixels = rng.integers(0, 256, (size[1], size[0], channels), dtype=np.uint8)
    Image.fromarray(pixels.squeeze(-1) if channels == 1 else pixels, mode).save(str(path))


def write_text(path, text):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def write_flo(path, flow):
    """A Middlebury .flo file from a (2, H, W) array."""
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    _, h, w = flow.shape
    with open(path, "wb") as f:
        f.write(b"PIEH" + struct.pack("<ii", w, h))
        f.write(np.ascontiguousarray(flow.transpose(1, 2, 0), dtype="<f4").tobytes())


def write_pfm(path, data):
    """A little-endian .pfm from an (H, W) or (H, W, 3) float array (rows stored bottom-up)."""
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    header = b"PF" if data.ndim == 3 else b"Pf"
    h, w = data.shape[:2]
    with open(path, "wb") as f:
        f.write(header + b"\n" + f"{w} {h}\n-1.0\n".encode())
        f.write(np.ascontiguousarray(data[::-1], dtype="<f4").tobytes())


def write_png16(path, pixels):
    """A 16-bit RGB PNG from an (H, W, 3) uint16 array, its rows filtered with each of the five
    PNG filters in turn (so a reader must undo all of them)."""
    import zlib
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    h, w, _ = pixels.shape
    rows = np.frombuffer(np.ascontiguousarray(pixels, ">u2").tobytes(), np.uint8)
    rows = rows.reshape(h, w * 6).astype(np.int64)
    bpp, encoded = 6, b""
    for y in range(h):
        line = rows[y]
        prev = rows[y - 1] if y else np.zeros_like(line)
        left = np.concatenate([np.zeros(bpp, np.int64), line[:-bpp]])
        upleft = np.concatenate([np.zeros(bpp, np.int64), prev[:-bpp]])
        kind = y % 5
        if kind == 0:
            predicted = np.zeros_like(line)
        elif kind == 1:
            predicted = left
        elif kind == 2:
            predicted = prev
        elif kind == 3:
            predicted = (left + prev) // 2
        else:
            p = left + prev - upleft
            pa, pb, pc = np.abs(p - left), np.abs(p - prev), np.abs(p - upleft)
            predicted = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prev, upleft))
        encoded += bytes([kind]) + ((line - predicted) % 256).astype(np.uint8).tobytes()

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body +
                struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(encoded)) + chunk(b"IEND", b""))
