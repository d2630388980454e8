"""safetensors files (https://github.com/huggingface/safetensors format), without PyTorch:
an 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}},
then the raw little-endian tensor bytes. Loading runs no code, by design of the format."""
import json
import os
import struct

import numpy as np

from .. import dtypes as _dt
from .._tensor import Tensor, make_tensor

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
    tmp = f"{os.fspath(filename)}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(save(tensors, metadata))
    os.replace(tmp, filename)


def load(data, device="cpu"):
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise ValueError("Error while deserializing header: header too large")
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = memoryview(data)[8 + n:]
    out = {}
    for name, info in header.items():
        d = _FROM_CODE.get(info["dtype"])
        if d is None:
            raise ValueError(f"unsupported safetensors dtype {info['dtype']}")
        begin, end = info["data_offsets"]
        arr = np.frombuffer(body[begin:end], dtype=d.np.newbyteorder("<")).astype(d.np)
        t = make_tensor(arr.reshape(info["shape"]).copy())
        out[name] = t if str(device) == "cpu" else t.to(device)
    return out


def load_file(filename, device="cpu"):
    with open(filename, "rb") as f:
        return load(f.read(), device)
