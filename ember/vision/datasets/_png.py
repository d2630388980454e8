"""A PNG reader that keeps 16-bit samples (PIL reduces 16-bit colour PNGs to 8 bits), for the
flow datasets whose ground truth is stored as 16-bit RGB PNGs (KITTI, HD1K).

Greyscale, grey+alpha, RGB and RGBA at 8 or 16 bits, not interlaced; the five PNG row filters
are undone row by row (Sub and Up vectorised, Average and Paeth byte by byte)."""
import struct
import zlib

import numpy as np

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # PNG colour type -> samples per pixel


def _chunks(data):
    pos = len(_SIGNATURE)
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        yield kind, data[pos + 8:pos + 8 + length]
        pos += 12 + length


def _unfilter_average(line, prev, bpp):
    out = bytearray(line)
    for i in range(len(out)):
        left = out[i - bpp] if i >= bpp else 0
        out[i] = (out[i] + ((left + prev[i]) >> 1)) & 0xFF
    return out


def _unfilter_paeth(line, prev, bpp):
    out = bytearray(line)
    for i in range(len(out)):
        a = out[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        out[i] = (out[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    return out


def read_png(path):
    """The image at `path` as a (C, H, W) array: uint8, or uint16 for 16-bit files."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != _SIGNATURE:
        raise RuntimeError(f"{path} is not a PNG file")
    header, compressed = None, []
    for kind, body in _chunks(data):
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            compressed.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    if colour not in _CHANNELS or depth not in (8, 16) or interlace:
        raise RuntimeError(f"{path}: only non-interlaced 8/16-bit grey, grey+alpha, RGB and "
                           "RGBA PNGs are read here")
    channels = _CHANNELS[colour]
    bpp = channels * depth // 8
    stride = width * bpp
    rows = np.frombuffer(zlib.decompress(b"".join(compressed)), np.uint8)
    rows = rows[:height * (stride + 1)].reshape(height, stride + 1)
    out = np.empty((height, stride), np.uint8)
    prev = np.zeros(stride, np.uint8)
    for y in range(height):
        kind, line = rows[y, 0], rows[y, 1:]
        if kind == 0:
            cur = line
        elif kind == 1:  # Sub: running sum of each byte position within the pixel
            cur = np.cumsum(line.reshape(width, bpp), axis=0, dtype=np.uint8).reshape(-1)
        elif kind == 2:  # Up
            cur = line + prev
        elif kind == 3:
            cur = np.frombuffer(_unfilter_average(line.tobytes(), prev.tobytes(), bpp), np.uint8)
        elif kind == 4:
            cur = np.frombuffer(_unfilter_paeth(line.tobytes(), prev.tobytes(), bpp), np.uint8)
        else:
            raise RuntimeError(f"{path}: unknown PNG filter {kind}")
        out[y] = cur
        prev = out[y]
    pixels = out.view(">u2").astype(np.uint16) if depth == 16 else out
    return np.ascontiguousarray(pixels.reshape(height, width, channels).transpose(2, 0, 1))
