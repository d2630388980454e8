"""Storages as PyTorch's: the legacy typed classes (`FloatStorage(3)`, isinstance by dtype and
device), TypedStorage's and UntypedStorage's constructors and methods, `storage_type()`,
`set_` onto a storage, `from_file`, and the CUDA legacy names on a machine without a GPU."""
import warnings

import numpy as np
import pytest

import ember

LEGACY = ["BoolStorage", "ByteStorage", "CharStorage", "ShortStorage", "IntStorage",
          "LongStorage", "HalfStorage", "BFloat16Storage", "FloatStorage", "DoubleStorage",
          "ComplexFloatStorage", "ComplexDoubleStorage"]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage's deprecation
        yield


def _facts(s):
    return (type(s).__name__, s.size(), len(s), str(s.dtype), str(s.device), s.element_size(),
            s.nbytes(), s.type(), s.is_cuda, s.tolist())


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_storage_classes(torch, name):
    ours, theirs = getattr(ember, name), getattr(torch, name)
    assert repr(ours) == repr(theirs)
    assert str(ours.dtype) == str(theirs.dtype)
    assert issubclass(ours, ember.TypedStorage)
    assert _facts(ours()) == _facts(theirs())
    assert (ours(3).size(), ours(3).dtype) == (theirs(3).size(), ember.dtypes.to_dtype(
        str(theirs(3).dtype).split(".")[1]))
    data = [1, 0, 1]
    assert _facts(ours(data)) == _facts(theirs(data))
    assert isinstance(ours(2), ours) and isinstance(theirs(2), theirs)
    other = ember.IntStorage if name != "IntStorage" else ember.LongStorage
    assert not isinstance(ours(2), other)
    assert not isinstance(ours(2), getattr(ember.cuda, name))


def test_tensor_storage_and_storage_type(torch):
    e, t = ember.arange(4.0), torch.arange(4.0)
    assert repr(e.storage_type()) == repr(t.storage_type())
    assert e.storage_type() is ember.FloatStorage
    assert isinstance(e.storage(), ember.FloatStorage) and isinstance(e.storage(),
                                                                      ember.TypedStorage)
    assert _facts(e.storage()) == _facts(t.storage())
    assert repr(e[1:].storage()) == repr(t[1:].storage())
    assert ember.is_storage(e.storage()) and ember.is_storage(e.untyped_storage())
    assert not ember.is_storage(e)


def test_typed_storage_constructors_and_conversions(torch):
    for lib in (ember, torch):
        s = lib.TypedStorage([1.5, 2.5], dtype=lib.float64)
        assert (s.dtype, s.tolist()) == (lib.float64, [1.5, 2.5])
        assert s.int().tolist() == [1, 2]
        assert lib.TypedStorage(2).dtype == lib.get_default_dtype()
        u = lib.arange(3, dtype=lib.int16).untyped_storage()
        w = lib.TypedStorage(wrap_storage=u, dtype=lib.int16)
        w[2] = 7
        assert w.tolist() == [0, 1, 7] and u[4] == 7
        c = w.clone()
        c[0] = 9
        assert w[0] == 0 and c.tolist() == [9, 1, 7]
        w.copy_(c)
        assert w.tolist() == [9, 1, 7]
        assert w.fill_(4).tolist() == [4, 4, 4]
        assert lib.UntypedStorage([1, 2, 255]).tolist() == [1, 2, 255]
        assert lib.UntypedStorage(4).size() == 4
        assert w.cpu().tolist() == [4, 4, 4]
        assert w.untyped().type() == "torch.storage.UntypedStorage"


def test_set_onto_a_constructed_storage_shares_it():
    s = ember.FloatStorage([1, 2, 3, 4])
    t = ember.tensor([]).set_(s)
    assert t.tolist() == [1, 2, 3, 4] and t.storage().data_ptr() == s.data_ptr()
    t[0] = 10
    assert s[0] == 10
    v = ember.tensor([]).set_(s, 1, (2,))
    v.fill_(-1)
    assert s.tolist() == [10, -1, -1, 4]
    assert ember.tensor([]).set_(source=s, storage_offset=0, size=(2, 2),
                                 stride=(1, 2)).tolist() == [[10, -1], [-1, 4]]


def test_from_file_shares_the_file_only_when_asked(tmp_path):
    path = tmp_path / "data.bin"
    np.arange(4, dtype=np.float32).tofile(path)
    ember.from_file(str(path), shared=False, size=4)[0] = 7
    assert np.fromfile(path, np.float32).tolist() == [0, 1, 2, 3]
    ember.from_file(str(path), shared=True, size=4)[0] = 7
    assert np.fromfile(path, np.float32).tolist() == [7, 1, 2, 3]
    assert ember.FloatStorage.from_file(str(path), False, 2).tolist() == [7, 1]
    assert ember.UntypedStorage.from_file(str(path), False, 4).tolist() == [0, 0, 224, 64]


def test_cuda_legacy_names_without_a_gpu(torch):
    if ember.cuda.is_available():
        pytest.skip("this machine has a GPU (or the CUDA stand-in is on)")
    x = ember.ones(2)
    assert not isinstance(x, ember.cuda.FloatTensor) and isinstance(x, ember.FloatTensor)
    assert repr(ember.cuda.FloatTensor) == repr(torch.cuda.FloatTensor)
    assert repr(ember.cuda.HalfStorage) == repr(torch.cuda.HalfStorage)
    for make in (lambda lib: lib.cuda.FloatTensor(3), lambda lib: lib.cuda.FloatStorage(3)):
        with pytest.raises(Exception) as ours:
            make(ember)
        with pytest.raises(Exception) as theirs:
            make(torch)
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))


def test_cuda_storages_and_legacy_types(fake_cuda):
    c = ember.arange(4.0).cuda()
    assert isinstance(c, ember.cuda.FloatTensor) and not isinstance(c, ember.FloatTensor)
    assert ember.cuda.FloatTensor([1, 2]).device == fake_cuda
    assert c.type() == "torch.cuda.FloatTensor" and c.storage_type() is ember.cuda.FloatStorage
    s = c.storage()
    assert isinstance(s, ember.cuda.FloatStorage) and not isinstance(s, ember.FloatStorage)
    assert (s.type(), s.is_cuda, s.get_device()) == ("torch.cuda.FloatStorage", True, 0)
    assert ember.cuda.DoubleStorage([1, 2]).device == fake_cuda
    assert s.cpu().tolist() == [0.0, 1.0, 2.0, 3.0] and not s.cpu().is_cuda
    x = ember.tensor([], device="cuda").set_(s, 1, (2,))
    x.fill_(7)
    assert c.tolist() == [0.0, 7.0, 7.0, 3.0]
    with pytest.raises(RuntimeError, match="the devices must match"):
        ember.tensor([]).set_(s)


def test_a_cuda_checkpoint_follows_map_location(fake_cuda):
    import io
    buf = io.BytesIO()
    ember.save({"c": ember.ones(2).cuda(), "t": ember.ones(2)}, buf)

    def devices(map_location):
        buf.seek(0)
        return {k: v.device.type for k, v in ember.load(buf, map_location=map_location).items()}
    assert devices(None) == {"c": "cuda", "t": "cpu"}
    assert devices(lambda storage, location: storage) == {"c": "cpu", "t": "cpu"}
    assert devices(lambda storage, location: storage.cuda(0)) == {"c": "cuda", "t": "cuda"}
    assert devices({"cuda:0": "cpu"}) == {"c": "cpu", "t": "cpu"}
    assert devices("cuda:0") == {"c": "cuda", "t": "cuda"}
    assert ember.serialization.location_tag(ember.ones(1).cuda().untyped_storage()) == "cuda:0"


@pytest.mark.parametrize("kind", ["typed", "untyped", "view's"])
def test_saved_storages_load_alike_in_both_libraries(torch, kind):
    import io

    def saved(lib):
        t = lib.arange(4.0)
        s = {"typed": t.storage, "untyped": t.untyped_storage,
             "view's": t[1:].storage}[kind]()
        buf = io.BytesIO()
        lib.save({"s": s, "x": lib.ones(2)}, buf)
        return buf.getvalue()

    def loaded(lib, data):
        got = lib.load(io.BytesIO(data))
        s = got["s"]
        return type(s).__name__, str(s.dtype), s.size(), s.tolist(), got["x"].tolist()
    want = loaded(torch, saved(torch))
    assert loaded(ember, saved(ember)) == want
    assert loaded(torch, saved(ember)) == want
    assert loaded(ember, saved(torch)) == want
