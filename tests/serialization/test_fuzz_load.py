"""Hostile and damaged checkpoints: each loads its original values, the values the damaged
file itself says (checked by an independent reference decoder), or fails with one of
PyTorch's exception types; never a crash, a hang, a MemoryError, a NumPy error, a wrong value
or code run by the file. A fixed-seed stream of a few hundred fuzz cases (fuzz_cases.py) runs
in a worker under a memory cap and a per-case time limit (fuzz_runner.py); the targeted
tests below name each kind of damage that once got through. `tools/fuzz_load.py` runs
10,000+ cases on demand."""
import io
import pickle
import struct
import zipfile

import numpy as np
import pytest

import ember
from ember.serialization.records import PyTorchFileWriter

from .fuzz_cases import bases
from .fuzz_reference import decode, fingerprint, normalize
from .fuzz_runner import run, summary


def test_fuzz_cases_load_or_fail_cleanly():
    results = run(seed=0, count=250, per_case_s=10.0, memory_mb=1024)
    counts = summary(results)
    bad = [f"{r['i']} {r['label']}: {r['detail']}" for r in results if r["outcome"] == "bad"]
    assert not bad, "\n".join(bad)
    assert len(results) == 250
    assert counts["original"] > 20 and counts["error"] > 100  # the damage is varied


def test_the_bases_load_and_the_reference_reads_them():
    for name, blob, original in bases():
        assert fingerprint(normalize(ember.load(io.BytesIO(blob)))) == fingerprint(original), name
        assert fingerprint(decode(blob)) == fingerprint(original), name


# ---- targeted cases: one file per kind of damage ---------------------------------------------
def _checkpoint(pickled, records=(), byteorder=b"little"):
    out = io.BytesIO()
    writer = PyTorchFileWriter(out, _archive="archive")
    writer.write_record("data.pkl", pickled, len(pickled))
    if byteorder is not None:
        writer.write_record("byteorder", byteorder, len(byteorder))
    for name, data in records:
        writer.write_record(name, data, len(data))
    writer.write_end_of_file()
    out.seek(0)
    return out


def _tensor_file(offset=0, size=(2, 3), stride=(3, 1), storage="LongStorage", numel=6,
                 record=np.arange(6, dtype=np.int64).tobytes(), byteorder=b"little"):
    """A checkpoint of one tensor record, written opcode by opcode (protocol 2)."""
    def global_(module, name):
        return b"c" + f"{module}\n{name}\n".encode()

    def ints(values):
        return b"(" + b"".join(b"J" + struct.pack("<i", v) for v in values) + b"t"
    pid = (b"(X\x07\x00\x00\x00storage" + global_("torch", storage) + b"X\x01\x00\x00\x000"
           b"X\x03\x00\x00\x00cpu" + b"J" + struct.pack("<i", numel) + b"tQ")  # BINPERSID
    pickled = (b"\x80\x02" + global_("torch._utils", "_rebuild_tensor_v2") + b"(" + pid +
               b"J" + struct.pack("<i", offset) + ints(size) + ints(stride) + b"\x89" +
               global_("collections", "OrderedDict") + b")R" + b"tR.")
    return _checkpoint(pickled, [("data/0", record)], byteorder)


def test_a_wellformed_handmade_record_loads():
    assert ember.load(_tensor_file()).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert ember.load(_tensor_file(offset=2, size=(2,), stride=(3,))).tolist() == [2, 5]


@pytest.mark.parametrize("kw,message", [
    (dict(offset=-2), "invalid storage offset -2"),  # read the heap before the array
    (dict(offset=1), "out of bounds for storage"),
    (dict(size=(-2, 3)), "negative dimension"),
    (dict(offset=3, stride=(-3, 1)), "negative strides"),
    (dict(size=(2, 3), stride=(3,)), "unequal size length"),
    (dict(storage="CharStorage"), r"record size \(48 bytes\) does not match expected size "
                                  r"\(6 bytes"),  # a LongStorage relabelled
    (dict(storage="FloatStorage"), "record size"),
    (dict(numel=7, size=(7,), stride=(1,)), "record size"),
    (dict(record=np.arange(5, dtype=np.int64).tobytes(), numel=6), "record size"),
])
def test_a_record_outside_its_storage_is_refused(kw, message):
    with pytest.raises(RuntimeError, match=message):
        ember.load(_tensor_file(**kw))


@pytest.mark.parametrize("order", [b"Little", b"", b"little\n", b"middle", b"\xff"])
def test_an_unknown_byte_order_is_pytorchs_error(order):
    with pytest.raises(ValueError, match="Unknown endianness type"):
        ember.load(_tensor_file(byteorder=order))


def test_big_endian_records_are_read_as_big_endian():
    big = np.arange(6, dtype=">i8").tobytes()
    assert ember.load(_tensor_file(record=big, byteorder=b"big")).tolist() == \
        [[0, 1, 2], [3, 4, 5]]


def test_a_memo_index_allocates_nothing():
    """LONG_BINPUT 0x10000000: the C unpickler grew its memo table to gigabytes for it."""
    bomb = b"\x80\x02Nr" + struct.pack("<I", 0x10000000) + b"0N."
    assert ember.load(_checkpoint(bomb)) is None  # (a dict memo: the index costs nothing)
    with pytest.raises(pickle.UnpicklingError, match="memo index"):
        ember.load(_checkpoint(bomb), weights_only=False)
    with pytest.raises(pickle.UnpicklingError, match="Memo value not found"):
        ember.load(_checkpoint(b"\x80\x02j" + struct.pack("<I", 0xFFFFFFF0) + b"."))


@pytest.mark.parametrize("opcode", [b"X" + struct.pack("<I", 0xFFFFFFF0),
                                    b"\x8d" + struct.pack("<Q", 1 << 60),
                                    b"\x8a\xff"])
def test_a_length_past_the_end_of_the_pickle_is_refused(opcode):
    with pytest.raises(pickle.UnpicklingError, match="truncated"):
        ember.load(_checkpoint(b"\x80\x04" + opcode + b"abc."))


def _deflated(payload, declared):
    """A checkpoint whose data.pkl is `payload` deflated, its headers declaring `declared`
    bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data.pkl", payload)
    b = bytearray(out.getvalue())
    struct.pack_into("<I", b, 22, declared)  # the local header
    cd = b.find(b"PK\x01\x02")
    struct.pack_into("<I", b, cd + 24, declared)  # the central directory
    return io.BytesIO(bytes(b))


def test_a_zip_bomb_stops_at_its_declared_size():
    payload = b"\x80\x02N." + b"\0" * (64 << 20)  # 64 MiB of zeros: 64 KiB deflated
    with pytest.raises(RuntimeError, match="inflates past its declared 4 bytes"):
        ember.load(_deflated(payload, 4))
    assert ember.load(_deflated(b"\x80\x02K\x07.", 5)) == 7


def test_a_record_past_the_end_of_the_file_is_refused():
    blob = bytearray(_tensor_file().getvalue())
    cd = blob.find(b"PK\x01\x02")  # the central directory entry of archive/data/0
    while blob[cd + 46:cd + 46 + len(b"archive/data/0")] != b"archive/data/0":
        cd = blob.find(b"PK\x01\x02", cd + 4)
    struct.pack_into("<I", blob, cd + 42, len(blob) - 10)  # its header offset
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed reading file data/0"):
        ember.load(io.BytesIO(bytes(blob)))


@pytest.mark.parametrize("call", [
    b"c__builtin__\nbytearray\nJ\x00\x00\x00\x40\x85R.",  # bytearray(2**30)
    b"ctorch.storage\nUntypedStorage\nJ\x00\x00\x00\x40\x85R.",
    b"ctorch\nTensor\nJ\x00\x00\x01\x00J\x00\x00\x01\x00\x86R.",  # Tensor(65536, 65536)
    b"c_codecs\nencode\nX\x01\x00\x00\x00xX\x0a\x00\x00\x00zlib_codec\x86R.",
])
def test_an_allowed_global_cannot_be_asked_to_allocate(call):
    with pytest.raises(pickle.UnpicklingError):
        ember.load(_checkpoint(b"\x80\x02" + call))


def test_legacy_storages_are_held_against_the_file(tmp_path):
    path = tmp_path / "legacy.pt"
    ember.save({"a": ember.arange(4)}, path, _use_new_zipfile_serialization=False)
    blob = path.read_bytes()
    assert ember.load(io.BytesIO(blob))["a"].tolist() == [0, 1, 2, 3]
    # the element count in the storage's persistent id, 4, claims 2**40 elements
    claimed = blob.replace(b"K\x04N", b"\x8a\x06\x00\x00\x00\x00\x00\x01N", 1)
    assert claimed != blob
    with pytest.raises(RuntimeError, match="more than the .* bytes left in the file"):
        ember.load(io.BytesIO(claimed))
    count = blob.rindex(struct.pack("<q", 4))  # the 8-byte count before the storage's bytes
    wrong = blob[:count] + struct.pack("<q", 3) + blob[count + 8:]
    with pytest.raises(RuntimeError, match="storage has wrong byte size"):
        ember.load(io.BytesIO(wrong))
    with pytest.raises(RuntimeError, match="ends inside its data"):
        ember.load(io.BytesIO(blob[:-5]))


def test_legacy_files_move_to_pytorch_and_back(torch, tmp_path):
    path = tmp_path / "legacy.pt"
    ember.save({"a": ember.arange(4.0), "v": ember.arange(6).view(2, 3)[1]}, path,
               _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(path)
    back = torch.load(path)
    assert back["a"].tolist() == [0.0, 1.0, 2.0, 3.0] and back["v"].tolist() == [3, 4, 5]


def test_pickle_module_as_pytorchs(torch):
    buf = io.BytesIO()
    ember.save({"d": __import__("collections").deque([1])}, buf)
    for lib in (torch, ember):
        buf.seek(0)
        with pytest.raises(RuntimeError, match="Can not safely load weights when explicit "
                                               "pickle_module is specified"):
            lib.load(buf, pickle_module=pickle, weights_only=True)
        buf.seek(0)  # a pickle module alone asks for a full load
        assert lib.load(buf, pickle_module=pickle)["d"] == __import__("collections").deque([1])


def test_damaged_safetensors_load_what_they_say_or_fail_cleanly():
    """A safetensors file with flipped bits, cut short or with a rewritten header: each
    tensor ember returns holds exactly the bytes its (damaged) header entry points at, with
    that entry's shape; anything else is a ValueError naming the problem."""
    import json
    import random
    from ember.serialization import safetensors
    blob = safetensors.save({"w": ember.arange(12.0).view(3, 4), "b": ember.arange(5),
                             "h": ember.ones(2, dtype=ember.float16)})
    rng = random.Random(0)
    outcomes = {"loaded": 0, "error": 0}
    for i in range(300):
        b = bytearray(blob)
        how = i % 4
        if how == 0:
            for _ in range(rng.choice([1, 2, 4])):
                pos = rng.randrange(len(b))
                b[pos] ^= 1 << rng.randrange(8)
        elif how == 1:
            b = b[:rng.randrange(len(b))]
        elif how == 2:  # a digit of the header rewritten
            n = struct.unpack("<Q", blob[:8])[0]
            digits = [k for k in range(8, 8 + n) if chr(b[k]).isdigit()]
            b[rng.choice(digits)] = ord(rng.choice("0123456789"))
        else:
            struct.pack_into("<Q", b, 0, rng.choice([0, 7, 1 << 40, (1 << 64) - 1,
                                                     struct.unpack("<Q", blob[:8])[0] + 1]))
        try:
            got = safetensors.load(bytes(b))
        except ValueError as exc:
            assert str(exc), i
            outcomes["error"] += 1
            continue
        outcomes["loaded"] += 1
        n = struct.unpack("<Q", b[:8])[0]
        header = json.loads(bytes(b[8:8 + n]))
        header.pop("__metadata__", None)
        for name, t in got.items():
            begin, end = header[name]["data_offsets"]
            raw = bytes(b[8 + n + begin:8 + n + end])
            assert list(t.shape) == header[name]["shape"], i
            assert np.ascontiguousarray(t.numpy()).tobytes() == raw, i
    assert outcomes["loaded"] > 10 and outcomes["error"] > 100


def test_a_weights_only_load_imports_nothing():
    """A global naming one of ember's modules not yet imported (torch.distributed ...) is
    refused without importing it, even while the user has allowed classes elsewhere."""
    import subprocess
    import sys
    code = ("import io, sys, pickle, ember, collections\n"
            "ember.serialization.add_safe_globals([collections.deque])\n"
            "for mod in ('torch.distributed', 'torch.compat.__main__', 'torchvision.models'):\n"
            "    raw = b'\\x80\\x02c' + mod.encode() + b'\\nX\\n.'\n"
            "    try:\n"
            "        ember.serialization.loading._unpickle(raw)\n"
            "    except pickle.UnpicklingError:\n"
            "        pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('ember.distributed', "
            "'ember.compat', 'ember.vision'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=__import__("os").path.dirname(__import__("os").path.dirname(
                             __import__("os").path.dirname(__file__))))
    assert out.stdout.strip() == "[]", out.stderr


def test_every_record_lies_in_the_archives_folder():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("archive/data.pkl", b"\x80\x02K\x07.")
        z.writestr("elsewhere/data.pkl", b"\x80\x02K\x08.")
    out.seek(0)
    with pytest.raises(RuntimeError, match="not in a subdirectory archive/: elsewhere/data.pkl"):
        ember.load(out)


def test_rebuild_takes_pytorchs_arguments():
    """_rebuild_tensor_v2 needs requires_grad and backward_hooks, as PyTorch's does."""
    with zipfile.ZipFile(_tensor_file()) as z:
        full = z.read("archive/data.pkl")
    pickled = full.replace(b"\x89ccollections\nOrderedDict\n)R", b"")
    assert pickled != full
    with pytest.raises(pickle.UnpicklingError, match="_rebuild_tensor_v2 cannot be called"):
        ember.load(_checkpoint(pickled, [("data/0", np.arange(6, dtype=np.int64).tobytes())]))
