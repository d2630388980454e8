"""safetensors files (https://github.com/huggingface/safetensors format), without PyTorch:
an 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}},
then the raw little-endian tensor bytes. Loading runs no code, by design of the format, and
reads a tensor only where its header entry's shape, dtype and offsets agree with the data."""
import json
import struct

import numpy as np

from .. import dtypes as _dt
from .._tensor import Tensor, make_tensor
from .saving import replace_atomically

__all__ = ["save_file", "load_file", "save", "load"]

_CODES = {_dt.bool: "BOOL", _dt.uint8: "U8", _dt.int8: "I8", _dt.int16: "I16", _dt.int32: "I32",
          _dt.int64: "I64", _dt.float16: "F16", _dt.bfloat16: "BF16", _dt.float32: "F32",
          _dt.float64: "F64", _dt.complex64: "C64"}
_FROM_CODE = {v: k for k, v in _CODES.items()}


def save(tensors, metadata=None):
    header, chunks, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name in sorted(tensors):
        t = tensors[name]
        if not isinstance(t, Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected torch.Tensor but received "
                             f"{type(t)}")
        data = np.ascontiguousarray(t.detach()._host()).astype(t.dtype.np.newbyteorder("<"),
                                                              copy=False).tobytes()
        header[name] = {"dtype": _CODES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * ((-len(raw)) % 8)  # the data section starts 8-byte aligned
    return struct.pack("<Q", len(raw)) + raw + b"".join(chunks)


def save_file(tensors, filename, metadata=None):
    """Written through a temporary (saving.py): an interrupted save keeps the old file."""
    data = save(tensors, metadata)
    replace_atomically(filename, lambda out: out.write(data))


_MAX_HEADER = 100_000_000  # the safetensors library's own limit


def parse(data):
    """(the tensors' header entries, the `__metadata__` dict or None, the data bytes) of a
    safetensors file's bytes. The JSON header is checked: its length against the data, its
    entries' shapes, dtypes and offsets against the bytes after it (no entry may read
    outside them or leave its shape unfilled)."""
    if len(data) < 8:
        raise ValueError("Error while deserializing header: HeaderTooSmall")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8 or n > _MAX_HEADER:
        raise ValueError("Error while deserializing header: header too large")
    try:
        header = json.loads(bytes(data[8:8 + n]))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"Error while deserializing header: invalid JSON in header: {exc}") \
            from None
    if not isinstance(header, dict):
        raise ValueError("Error while deserializing header: the header is not a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (isinstance(metadata, dict) and all(
            isinstance(v, str) for v in metadata.values())):
        raise ValueError("Error while deserializing header: __metadata__ must map text to text")
    size = len(data) - 8 - n
    for name, info in header.items():
        if not isinstance(info, dict) or info.get("dtype") not in _FROM_CODE:
            raise ValueError(f"Error while deserializing header: tensor {name!r}: unsupported "
                             f"or missing dtype")
        shape, offsets = info.get("shape"), info.get("data_offsets")
        if not isinstance(shape, list) or not all(
                isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
            raise ValueError(f"Error while deserializing header: tensor {name!r}: invalid "
                             f"shape {shape!r}")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(
                isinstance(o, int) and not isinstance(o, bool) for o in offsets)
                and 0 <= offsets[0] <= offsets[1] <= size):
            raise ValueError(f"Error while deserializing header: tensor {name!r}: invalid "
                             f"data offsets {offsets!r} for {size} bytes of data")
        numel = 1
        for s in shape:
            numel *= s
        if numel * _FROM_CODE[info["dtype"]].itemsize != offsets[1] - offsets[0]:
            raise ValueError(f"Error while deserializing header: tensor {name!r}: "
                             f"TensorInvalidInfo (shape {shape} of {info['dtype']} does not "
                             f"fill its {offsets[1] - offsets[0]} bytes)")
    return header, metadata, memoryview(data)[8 + n:]


def load(data, device="cpu"):
    header, _, body = parse(data)
    return tensors_of(header, body, device)


def tensors_of(header, body, device="cpu"):
    """The tensors of a parsed file (see `parse`)."""
    out = {}
    for name, info in header.items():
        d = _FROM_CODE[info["dtype"]]
        begin, end = info["data_offsets"]
        arr = np.frombuffer(body[begin:end], dtype=d.np.newbyteorder("<")).astype(d.np)
        t = make_tensor(arr.reshape(info["shape"]).copy())
        out[name] = t if str(device) == "cpu" else t.to(device)
    return out


def load_file(filename, device="cpu"):
    with open(filename, "rb") as f:
        return load(f.read(), device)
