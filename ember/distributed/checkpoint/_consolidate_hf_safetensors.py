"""Merge the shard files a distributed safetensors save wrote (each holding chunks of
tensors, placed by their DCP_SHARDING_INFO offsets) into whole-tensor files laid out by
`fqn_to_index_mapping`, with the index `model.safetensors.index.json`."""
import os

from ... import ops as _ops
from ...serialization import safetensors as _st
from .hf_storage import _gen_file_name, _write_index, read_safetensors_dir

__all__ = ["consolidate_safetensors_files"]


def consolidate_safetensors_files(input_dir, output_dir, fqn_to_index_mapping=None,
                                  num_threads=1):
    """`num_threads` is accepted for PyTorch's signature; ember merges in one thread."""
    files = read_safetensors_dir(input_dir)
    whole, extent = {}, {}
    for header, offsets, _ in files.values():
        for key, info in header.items():
            end = [o + s for o, s in zip(offsets[key], info["shape"])]
            extent[key] = [max(a, b) for a, b in zip(extent.get(key, end), end)]
    for header, offsets, body in files.values():
        for key, piece in _st.tensors_of(header, body).items():
            if key not in whole:
                whole[key] = _ops.zeros(extent[key], dtype=piece.dtype)
            target = whole[key]
            for dim, (start, length) in enumerate(zip(offsets[key], piece.shape)):
                target = target.narrow(dim, start, length)
            target.copy_(piece)
    mapping = fqn_to_index_mapping or dict.fromkeys(whole, 1)
    largest = max(mapping.values()) if mapping else 1
    outputs = {}
    for key in whole:
        if key not in mapping:
            raise KeyError(f"{key} is in the sharded files but not in fqn_to_index_mapping")
        outputs.setdefault(_gen_file_name(mapping[key], largest), {})[key] = whole[key]
    os.makedirs(output_dir, exist_ok=True)
    for name, tensors in outputs.items():
        _st.save_file(tensors, os.path.join(output_dir, name))
    _write_index(output_dir, {k: n for n, ts in outputs.items() for k in ts},
                 sum(t.numel() * t.element_size() for t in whole.values()))
