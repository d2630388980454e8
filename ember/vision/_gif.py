"""A GIF reader that returns every frame's own pixels, as torchvision's decode_gif (giflib's
DGifSlurp) gives them: each frame's raster through its colour table (local, else global),
no compositing onto earlier frames, no transparency, offsets ignored. Pillow composites
animation frames, so the container and its LZW data are read here."""
import numpy as np

_INTERLACED_PASSES = ((0, 8), (4, 8), (2, 4), (1, 2))  # (first row, step) of each pass


class GifError(RuntimeError):
    pass


def _sub_blocks(data, pos):
    """The concatenated data sub-blocks starting at `pos`, and the position after them."""
    chunks = []
    while True:
        if pos >= len(data):
            raise GifError("truncated data")
        size = data[pos]
        pos += 1
        if size == 0:
            return b"".join(chunks), pos
        chunks.append(data[pos:pos + size])
        pos += size


def _color_table(data, pos, packed):
    count = 2 << (packed & 7)
    table = np.frombuffer(data[pos:pos + 3 * count], np.uint8)
    if table.size != 3 * count:
        raise GifError("truncated colour table")
    return table.reshape(count, 3), pos + 3 * count


def _lzw_decode(code_bytes, min_code_size, num_pixels):
    """Variable-length LZW codes (least significant bit first) -> colour indices."""
    if not 2 <= min_code_size <= 11:
        raise GifError(f"bad LZW minimum code size {min_code_size}")
    clear = 1 << min_code_size
    end = clear + 1
    base = [bytes([i]) for i in range(clear)] + [b"", b""]
    table = list(base)
    size = min_code_size + 1
    out = bytearray()
    prev = None
    pos, total_bits = 0, len(code_bytes) * 8
    padded = code_bytes + b"\0\0\0"
    while pos + size <= total_bits and len(out) < num_pixels:
        byte = pos >> 3
        code = (int.from_bytes(padded[byte:byte + 3], "little") >> (pos & 7)) & ((1 << size) - 1)
        pos += size
        if code == clear:
            table = list(base)
            size = min_code_size + 1
            prev = None
            continue
        if code == end:
            break
        if code < len(table):
            entry = table[code]
            if prev is not None and len(table) < 4096:
                table.append(prev + entry[:1])
        elif code == len(table) and prev is not None:  # the code being defined right now
            entry = prev + prev[:1]
            table.append(entry)
        else:
            raise GifError(f"bad LZW code {code}")
        out += entry
        prev = entry
        if len(table) == (1 << size) and size < 12:
            size += 1
    if len(out) < num_pixels:
        raise GifError("image data too short")
    return np.frombuffer(bytes(out[:num_pixels]), np.uint8)


def _deinterlace(indices, height, width):
    rows = [r for first, step in _INTERLACED_PASSES for r in range(first, height, step)]
    out = np.empty((height, width), np.uint8)
    out[rows] = indices.reshape(height, width)
    return out


def read_gif_frames(data):
    """bytes -> list of (H, W, 3) uint8 arrays, one per image in the file."""
    if data[:6] not in (b"GIF87a", b"GIF89a"):
        raise GifError("not a GIF file")
    if len(data) < 13:
        raise GifError("truncated header")
    packed = data[10]
    pos = 13
    global_table = None
    if packed & 0x80:
        global_table, pos = _color_table(data, pos, packed)
    frames = []
    while pos < len(data):
        introducer = data[pos]
        pos += 1
        if introducer == 0x3B:  # trailer
            break
        if introducer == 0x21:  # an extension: its label, then sub-blocks
            _, pos = _sub_blocks(data, pos + 1)
            continue
        if introducer != 0x2C:
            raise GifError(f"unknown block 0x{introducer:02x}")
        if pos + 9 > len(data):
            raise GifError("truncated image descriptor")
        width = int.from_bytes(data[pos + 4:pos + 6], "little")
        height = int.from_bytes(data[pos + 6:pos + 8], "little")
        flags = data[pos + 8]
        pos += 9
        table = global_table
        if flags & 0x80:
            table, pos = _color_table(data, pos, flags)
        if table is None:
            raise GifError("Global and local color maps are missing. This should never "
                           "happen!")
        min_code_size = data[pos]
        code_bytes, pos = _sub_blocks(data, pos + 1)
        indices = _lzw_decode(code_bytes, min_code_size, width * height)
        raster = (_deinterlace(indices, height, width) if flags & 0x40
                  else indices.reshape(height, width))
        frames.append(table[np.minimum(raster, len(table) - 1)])
    if not frames:
        raise GifError("no image in the file")
    return frames
