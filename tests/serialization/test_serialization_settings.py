"""torch.serialization's settings and registry, as PyTorch's: the load byte order, the mmap
flags, skip_data, register_package's hooks under map_location, get_unsafe_globals_in_checkpoint,
the archive reader and writer, and the small helpers (StorageType, location_tag ...)."""
import collections
import io
import mmap
import pickle
import warnings

import numpy as np
import pytest

import ember
from ember import serialization as S


class Holder(ember.nn.Module):
    """A user's module with state a weights-only load refuses."""

    def __init__(self):
        super().__init__()
        self.lin = ember.nn.Linear(2, 2)
        self.counts = collections.defaultdict(int)
        self.act = ember.nn.functional.relu


def test_unsafe_globals_of_a_whole_model_match_pytorch(torch, tmp_path):
    path = tmp_path / "m.pt"
    ember.save(ember.nn.Sequential(Holder(), ember.nn.BatchNorm1d(2), ember.nn.LSTM(2, 2)), path)
    ours = sorted(S.get_unsafe_globals_in_checkpoint(path))
    assert ours == sorted(torch.serialization.get_unsafe_globals_in_checkpoint(path))
    assert f"{__name__}.Holder" in ours and "torch.nn.modules.rnn.LSTM" in ours
    with S.safe_globals([Holder, ember.nn.LSTM]):
        left = S.get_unsafe_globals_in_checkpoint(str(path))
    assert f"{__name__}.Holder" not in left and "torch.nn.modules.rnn.LSTM" not in left
    plain = io.BytesIO()
    ember.save({"w": ember.ones(2), "s": {1}}, plain)
    plain.seek(0)
    assert S.get_unsafe_globals_in_checkpoint(plain) == []
    for lib in (S, torch.serialization):
        with pytest.raises(ValueError, match="Expected input to be a checkpoint returned by "
                                             "torch.save"):
            lib.get_unsafe_globals_in_checkpoint(io.BytesIO(b"not a zip"))


def test_skip_data_writes_the_layout_not_the_numbers(torch, tmp_path):
    state = {"a": ember.arange(6.0), "b": ember.ones(3, dtype=ember.int64)}
    with S.skip_data():
        ember.save(state, tmp_path / "ours.pt")
    with torch.serialization.skip_data():
        torch.save({"a": torch.arange(6.0), "b": torch.ones(3, dtype=torch.int64)},
                   tmp_path / "theirs.pt")
    ours, theirs = (ember.PyTorchFileReader(str(tmp_path / n)) for n in ("ours.pt", "theirs.pt"))
    assert ours.get_all_records() == theirs.get_all_records()
    for name in ("data/0", "data/1"):
        assert ours.get_record_size(name) == theirs.get_record_size(name) == 24
        assert ours.get_record(name) == bytes(24)
    # both libraries read both files: the shapes and dtypes, zeros for the numbers
    for path in ("ours.pt", "theirs.pt"):
        for load in (ember.load, torch.load):
            got = load(tmp_path / path)
            assert got["a"].tolist() == [0.0] * 6 and got["b"].tolist() == [0] * 3
    # inside skip_data, load does not read the bytes (the values are whatever memory held)
    with S.skip_data():
        got = ember.load(tmp_path / "theirs.pt")
    assert (got["a"].shape, got["b"].dtype) == ((6,), ember.int64)


def test_register_package_hooks_run_under_map_location(torch):
    seen = []

    def tagger(storage):
        return None

    def deserializer(storage, location):
        seen.append((type(storage).__name__, location, storage.nbytes()))
        return None  # not mine: the next deserializer (cpu) takes it

    before = list(S.locations._package_registry)
    try:
        S.register_package(1, tagger, deserializer)
        buf = io.BytesIO()
        ember.save({"x": ember.ones(3)}, buf)
        buf.seek(0)
        assert ember.load(buf)["x"].tolist() == [1.0, 1.0, 1.0]
        assert seen == [("UntypedStorage", "cpu", 12)]
        buf.seek(0)
        seen.clear()
        assert ember.load(buf, map_location={"cpu": "cpu"})["x"].tolist() == [1.0] * 3
        assert seen == [("UntypedStorage", "cpu", 12)]
    finally:
        S.locations._package_registry[:] = before
    # a callable map_location gets the storage itself and may keep it where it is
    buf.seek(0)
    got = ember.load(buf, map_location=lambda storage, loc: storage)
    assert got["x"].device.type == "cpu"


def test_restore_errors_match_pytorch(torch):
    for lib in (ember, torch):
        storage = lib.ones(2).untyped_storage()
        with pytest.raises(RuntimeError) as info:
            lib.serialization.default_restore_location(storage, "weird")
        assert str(info.value) == ("don't know how to restore data location of "
                                   "torch.storage.UntypedStorage (tagged with weird)")
        assert lib.serialization.location_tag(storage) == "cpu"
        with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
            lib.serialization.validate_cuda_device("cpu")
    if not ember.cuda.is_available():
        for lib in (ember, torch):
            with pytest.raises(RuntimeError, match="torch.cuda.is_available\\(\\) is False"):
                lib.serialization.validate_cuda_device("cuda:0")
    msgs = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            lib.serialization.validate_hpu_device("hpu:0")
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def _without_byteorder_record(data):
    """The checkpoint rewritten without its byteorder record (as files from before PyTorch
    1.12 are; PyTorch's writer always adds one now)."""
    import zipfile
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if not info.filename.endswith("/byteorder"):
                dst.writestr(info, src.read(info))
    return out.getvalue()


@pytest.mark.parametrize("order", ["LITTLE", "BIG", "NATIVE"])
def test_default_load_endianness_reads_files_without_a_byteorder_record(torch, order):
    values = np.array([1.0, 2.5, -3.0], dtype=np.float32)
    buf = io.BytesIO()
    ember.save(ember.tensor(values), buf)
    data = _without_byteorder_record(buf.getvalue())
    results = []
    for lib in (ember, torch):
        before = lib.serialization.get_default_load_endianness()
        lib.serialization.set_default_load_endianness(getattr(lib.serialization.LoadEndianness,
                                                              order))
        try:
            results.append(lib.load(io.BytesIO(data)).tolist())
        finally:
            lib.serialization.set_default_load_endianness(before)
        assert lib.serialization.get_default_load_endianness() is None
        with pytest.raises(TypeError, match="Invalid argument type in function "
                                            "set_default_load_endianness"):
            lib.serialization.set_default_load_endianness("little")
    assert results[0] == results[1]
    assert (results[0] == values.tolist()) == (order != "BIG")


def test_mmap_loads_map_the_file(tmp_path):
    path = tmp_path / "w.pt"
    ember.save({"w": ember.arange(4.0)}, path)
    assert S.get_default_mmap_options() == mmap.MAP_PRIVATE
    private = ember.load(path, mmap=True)["w"]
    private[0] = 9
    assert ember.load(path)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    with S.set_default_mmap_options(mmap.MAP_SHARED):
        assert S.get_default_mmap_options() == mmap.MAP_SHARED
        shared = ember.load(path, mmap=True)["w"]
        shared[0] = 9
        del shared
    assert S.get_default_mmap_options() == mmap.MAP_PRIVATE
    assert ember.load(path)["w"].tolist() == [9.0, 1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap"):
        ember.load(io.BytesIO(path.read_bytes()), mmap=True)
    with pytest.raises(ValueError, match="expected mmap.MAP_PRIVATE or mmap.MAP_SHARED, but "
                                         "got 5"):
        S.set_default_mmap_options(5)


def test_file_reader_and_writer_match_pytorch(torch, tmp_path):
    for lib in (ember, torch):
        buf = io.BytesIO()
        writer = lib.PyTorchFileWriter(buf)
        assert writer.archive_name() == "archive"
        writer.write_record("data.pkl", pickle.dumps(7, protocol=2), len(pickle.dumps(7, 2)))
        writer.write_record("extra/bytes", b"hello", 5)
        writer.write_record_metadata("blank", 8)
        assert writer.get_all_written_records() == {"data.pkl", "extra/bytes", "blank"}
        writer.write_end_of_file()
        for reader_lib in (ember, torch):
            reader = reader_lib.PyTorchFileReader(io.BytesIO(buf.getvalue()))
            assert reader.get_all_records() == ["data.pkl", "extra/bytes", "blank", "version",
                                                "byteorder", ".data/serialization_id"]
            assert reader.get_record("extra/bytes") == b"hello"
            assert reader.get_record("blank") == bytes(8)
            assert reader.get_record("version") == b"3\n"
            assert reader.serialization_id() == writer.serialization_id()
            offset = reader.get_record_offset("extra/bytes")
            assert offset % 64 == 0 and buf.getvalue()[offset:offset + 5] == b"hello"
            header = reader.get_record_header_offset("extra/bytes")
            assert reader.get_record_offset_no_read(header, "extra/bytes", 5, 64) == offset
        assert reader_lib.load(io.BytesIO(buf.getvalue())) == 7
    torch.save({"a": torch.arange(3.0)}, tmp_path / "named.pt")
    ours = ember.PyTorchFileReader(str(tmp_path / "named.pt"))
    theirs = torch.PyTorchFileReader(str(tmp_path / "named.pt"))
    assert ours.get_all_records() == theirs.get_all_records()
    assert ours.get_record_offset("data/0") == theirs.get_record_offset("data/0")
    t = ours.get_storage_from_record("data/0", 3, ember.float32)
    assert t.shape == (0,) and t.untyped_storage().nbytes() == 12
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed locating file nope"):
        ours.get_record("nope")


def test_small_helpers_match_pytorch(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (ember, torch):
            st = lib.serialization.StorageType("FloatStorage")
            assert (str(st), str(st.dtype)) == ("StorageType(dtype=torch.float32)",
                                                "torch.float32")
            with pytest.raises(KeyError, match='pickle storage type "Nope" is not recognized'):
                lib.serialization.StorageType("Nope")
            assert lib.serialization.normalize_storage_type(lib.cuda.FloatStorage) is \
                lib.FloatStorage
            assert lib.serialization.get_crc32_options() is True
            assert issubclass(lib.serialization.SourceChangeWarning, Warning)
            check = lib.serialization.check_module_version_greater_or_equal
            assert check(np, (1,)) and not check(np, (99,))
            with lib.serialization.mkdtemp() as folder:
                import os
                assert os.path.isdir(folder)
            assert not os.path.exists(folder)
        with pytest.raises(RuntimeError, match="module version string is malformed"):
            S.check_module_version_greater_or_equal(np, (1, 2, 3, 4, 5, 6))
    context = ember.SerializationStorageContext()
    a, b = ember.ones(2), ember.ones(3)
    assert not context.has_storage(a.untyped_storage())
    assert [context.get_or_add_storage(s) for s in (a.untyped_storage(), b.untyped_storage(),
                                                   a[1:].untyped_storage())] == [0, 1, 0]
    d = ember.DeserializationStorageContext()
    d.add_storage("0", ember.arange(3.0))
    assert d.has_storage("0") and not d.has_storage("1")
    got = d.get_storage("0", ember.float32)
    assert got.shape == (0,) and got.untyped_storage().nbytes() == 12
