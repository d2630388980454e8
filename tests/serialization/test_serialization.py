"""Checkpoints move between ember and PyTorch both ways; loading runs no code from the file;
an interrupted save keeps the previous file; safetensors round-trips."""
import datetime
import io
import os
import pickle

import numpy as np
import pytest

import ember
from ember import nn


def _sample(lib):
    x = lib.arange(12.0).view(3, 4)
    return {"view": x[:, 1:], "base": x, "ints": lib.tensor([1, 2, 3]),
            "bf16": lib.ones(2, dtype=lib.bfloat16), "bools": lib.tensor([True, False]),
            "half": lib.ones(2, dtype=lib.float16), "u8": lib.tensor([1, 255], dtype=lib.uint8),
            "nested": [1, (2.5, "s"), {"k": lib.zeros(2, dtype=lib.int16)}], "n": 3,
            "dtype": lib.float64, "size": x.shape}


def test_ember_roundtrip_keeps_values_dtypes_and_shared_views(tmp_path):
    path = tmp_path / "ck.pt"
    obj = _sample(ember)
    ember.save(obj, path)
    back = ember.load(path)
    for key in ("view", "base", "ints", "bf16", "bools", "half", "u8"):
        assert back[key].dtype is obj[key].dtype
        np.testing.assert_array_equal(back[key].float().numpy(), obj[key].float().numpy())
    back["base"][0, 1] = 100.0  # the view and its base share one storage again
    assert back["view"][0, 0].item() == 100.0
    assert back["nested"][1] == (2.5, "s") and back["dtype"] is ember.float64
    assert back["size"] == ember.Size([3, 4])


def test_files_load_in_torch(torch, tmp_path):
    path = tmp_path / "e.pt"
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    ember.save({"model": model.state_dict(), **_sample(ember), "param": model[0].weight}, path)
    loaded = torch.load(path, weights_only=True)
    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                              torch.nn.Linear(4, 2))
    ref.load_state_dict(loaded["model"])  # strict: same keys, shapes, dtypes
    assert loaded["view"].storage_offset() == 1 and loaded["bf16"].dtype == torch.bfloat16
    assert isinstance(loaded["param"], torch.nn.Parameter)
    np.testing.assert_array_equal(loaded["view"].numpy(), np.arange(12.0).reshape(3, 4)[:, 1:])


def test_torch_files_load_in_ember(torch, tmp_path):
    path = tmp_path / "t.pt"
    lin = torch.nn.Linear(2, 3)
    opt = torch.optim.Adam(lin.parameters())
    lin(torch.ones(1, 2)).sum().backward()
    opt.step()
    torch.save({"sd": lin.state_dict(), "opt": opt.state_dict(),
                "strided": torch.arange(10.0)[::3], "h": torch.ones(2, dtype=torch.float16)},
               path)
    back = ember.load(path, map_location="cpu")
    model = nn.Linear(2, 3)
    model.load_state_dict(back["sd"])
    np.testing.assert_array_equal(model.weight.detach().numpy(), lin.weight.detach().numpy())
    assert back["opt"]["state"][0]["exp_avg"].shape == ember.Size([3, 2])
    assert back["strided"].tolist() == [0.0, 3.0, 6.0, 9.0]
    legacy = tmp_path / "legacy.pt"
    torch.save({"a": torch.arange(5), "b": torch.ones(2, 2)[1]}, legacy,
               _use_new_zipfile_serialization=False)
    old = ember.load(legacy)
    assert old["a"].tolist() == [0, 1, 2, 3, 4] and old["b"].tolist() == [1.0, 1.0]


class _Evil:
    def __reduce__(self):
        return (os.system, ("touch /tmp/ember-pwned",))


def test_weights_only_refuses_code(tmp_path):
    path = tmp_path / "evil.pt"
    with open(path, "wb") as f:  # a checkpoint whose pickle would run a command
        import zipfile
        with zipfile.ZipFile(f, "w") as z:
            z.writestr("evil/data.pkl", pickle.dumps({"x": _Evil()}, protocol=2))
            z.writestr("evil/version", "3\n")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ember.load(path)
    assert not os.path.exists("/tmp/ember-pwned")


def _load_error(lib, data):
    with pytest.raises(pickle.UnpicklingError) as info:
        lib.load(io.BytesIO(data))
    assert info.value.__cause__ is None and info.value.__suppress_context__
    return str(info.value)


def _zip_checkpoint(obj):
    out = io.BytesIO()
    import zipfile
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("ck/data.pkl", pickle.dumps(obj, protocol=2))
        z.writestr("ck/version", "3\n")
    return out.getvalue()


def test_weights_only_errors_in_pytorchs_words(torch):
    """Every UnpicklingError of a weights-only load comes out in PyTorch's words: a global
    not allowed (how to allow it), one from a blocked module (sys, os: no way round), and a
    malformed pickle (PyTorch's frame around the unpickler's own message)."""
    for obj in ({"f": _Evil()}, {"d": datetime.date(2020, 1, 1)}):
        data = _zip_checkpoint(obj)
        assert _load_error(ember, data) == _load_error(torch, data)
    mine, theirs = (_load_error(lib, b"garbage data here") for lib in (ember, torch))
    frame = theirs.split("WeightsUnpickler error: ")[0]
    assert mine.startswith(frame + "WeightsUnpickler error: \n\n")
    assert mine.endswith("https://pytorch.org/docs/stable/generated/torch.load.html.")


def test_unpicklable_objects_fail_as_in_pytorch(torch):
    """A local function or class in a checkpoint fails with the error PyTorch's pickler gives
    (not the pure-Python pickler's), without a chained second traceback."""
    class Local:
        pass
    for obj in (lambda x: x, Local, {"cfg": Local()}):
        errors = []
        for lib in (torch, ember):
            with pytest.raises(Exception) as info:
                lib.save(obj, io.BytesIO())
            errors.append((type(info.value), str(info.value)))
            assert info.value.__context__ is None
        assert errors[0] == errors[1]


def test_safe_globals_allow_a_class(tmp_path):
    path = tmp_path / "c.pt"
    ember.save({"cfg": _Config(3)}, path)
    with pytest.raises(pickle.UnpicklingError):
        ember.load(path)
    with ember.serialization.safe_globals([_Config]):
        assert ember.load(path)["cfg"].n == 3
    assert ember.load(path, weights_only=False)["cfg"].n == 3


class _Config:
    def __init__(self, n):
        self.n = n


def test_interrupted_save_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "keep.pt"
    ember.save({"v": ember.ones(2)}, path)

    class Unpicklable:
        def __reduce__(self):
            raise RuntimeError("interrupted")
    with pytest.raises(RuntimeError, match="interrupted"):
        ember.save({"v": Unpicklable()}, path)
    assert ember.load(path)["v"].tolist() == [1.0, 1.0]
    assert [p.name for p in tmp_path.iterdir()] == ["keep.pt"]  # no temporary left behind


def test_safetensors_roundtrip_and_torch_parity(tmp_path):
    from ember.serialization import safetensors
    tensors = {"a": ember.arange(6.0).view(2, 3), "b": ember.tensor([1, 2], dtype=ember.int32),
               "c": ember.ones(2, dtype=ember.bfloat16)}
    path = tmp_path / "m.safetensors"
    safetensors.save_file(tensors, path, metadata={"format": "pt"})
    back = safetensors.load_file(path)
    for k, v in tensors.items():
        assert back[k].dtype is v.dtype and back[k].float().tolist() == v.float().tolist()


def test_saved_file_gets_the_usual_permissions(tmp_path):
    path = tmp_path / "perm.pt"
    ember.save({"a": ember.ones(1)}, path)
    umask = os.umask(0)
    os.umask(umask)
    assert (os.stat(path).st_mode & 0o777) == (0o666 & ~umask)


def test_loaded_tensors_work_with_ops_of_their_dtype(tmp_path, torch):
    # a storage read with the file's byte order had an equal but distinct NumPy dtype, and
    # ops that compare dtypes by identity refused it ("double != double")
    path = tmp_path / "w.pt"
    torch.save({"w": torch.ones(2, 3, dtype=torch.float64), "d": torch.float64}, path)
    ours = tmp_path / "ours.pt"
    ember.save({"w": ember.ones(2, 3, dtype=ember.float64), "d": ember.float64}, ours)
    for p, weights_only in [(path, True), (path, False), (ours, True), (ours, False)]:
        loaded = ember.load(p, weights_only=weights_only)
        assert loaded["d"] is ember.float64 and loaded["w"].dtype is ember.float64
        lin = ember.nn.Linear(3, 2).double()
        assert lin(loaded["w"]).dtype is ember.float64
        assert loaded["w"].view(-1).shape == (6,)


def test_loaded_tensors_mix_with_fresh_ones_in_every_op():
    """A loaded storage has NumPy's canonical dtype object: ops that compare dtypes by identity
    (matmul's same-dtype check) take a loaded tensor with a fresh one."""
    buf = io.BytesIO()
    ember.save({"w": ember.ones(2, 3)}, buf)
    buf.seek(0)
    w = ember.load(buf)["w"]
    assert ember.equal(w @ ember.ones(3, 1), ember.full((2, 1), 3.0))


def test_qschemes_and_memory_formats_load_in_torch(torch, tmp_path):
    # written as PyTorch's module attributes (`torch.per_tensor_affine`): they were written
    # by ember's module paths (`torch._qscheme...`), which PyTorch cannot import
    path = tmp_path / "singletons.pt"
    ember.save({"q": ember.per_channel_symmetric, "mf": ember.channels_last}, path)
    theirs = torch.load(path, weights_only=False)
    assert theirs == {"q": torch.per_channel_symmetric, "mf": torch.channels_last}
    ours = ember.load(path, weights_only=False)
    assert ours["q"] is ember.per_channel_symmetric and ours["mf"] is ember.channels_last
    # a weights-only load takes the schemes, as PyTorch's does
    ember.save({"q": ember.per_tensor_affine}, path)
    assert ember.load(path)["q"] is ember.per_tensor_affine
    assert torch.load(path)["q"] is torch.per_tensor_affine
    torch.save({"q": torch.per_channel_affine}, path)
    assert ember.load(path)["q"] is ember.per_channel_affine


def test_unwritable_targets_and_cut_files_get_pytorchs_errors(torch, tmp_path):
    # the error names what the user gave, not the temporary the save writes first
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="Parent directory .*nodir does not exist"):
            lib.save({"a": 1}, tmp_path / "nodir" / "x.pt")
        with pytest.raises(RuntimeError, match="Is a directory"):
            lib.save({"a": 1}, tmp_path)
    assert os.listdir(tmp_path) == []
    buf = io.BytesIO()
    ember.save({"w": ember.ones(3)}, buf)
    whole = buf.getvalue()
    for cut in (10, len(whole) // 2, len(whole) - 10):  # an interrupted save or download
        for lib in (ember, torch):
            with pytest.raises(RuntimeError, match="failed reading zip archive"):
                lib.load(io.BytesIO(whole[:cut]))


def test_a_cuda_location_on_a_machine_without_one(torch, tmp_path):
    if ember.cuda.is_available():
        pytest.skip("a GPU is present")
    path = tmp_path / "w.pt"
    ember.save({"w": ember.ones(2)}, path)
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="torch.cuda.is_available\\(\\) is False"):
            lib.load(path, map_location="cuda")
