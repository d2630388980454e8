"""torch.distributed.checkpoint: save and load of model and optimizer state in one process,
DTensor shards saved by two processes and read back on two or on one, PyTorch's DCP and the
`safetensors` package reading ember's files and the other way round, and damaged files."""
import functools
import importlib.util
import os
import pickle
import subprocess
import sys
import warnings

import pytest

import ember
import ember.distributed.checkpoint as dcp
from ember.distributed.checkpoint.hf_storage import (HuggingFaceStorageReader,
                                                     HuggingFaceStorageWriter)
from ember.distributed.checkpoint.state_dict import (StateDictOptions, get_optimizer_state_dict,
                                                     get_state_dict, set_optimizer_state_dict,
                                                     set_state_dict)
from ember.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh
from tests.distributed.test_distributed import _launch

pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is disabled")


def _trained(lib, lr):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    opt = lib.optim.Adam(model.parameters(), lr=lr)
    model(lib.randn(5, 3)).sum().backward()
    opt.step()
    return model, opt


def test_model_and_optimizer_round_trip(tmp_path):
    model, opt = _trained(ember, 0.01)
    msd, osd = get_state_dict(model, opt)
    assert list(osd["state"]) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    metadata = dcp.save({"model": msd, "optim": osd, "epoch": 3, "tags": ["a", "b"]},
                        checkpoint_id=tmp_path)
    assert sorted(os.listdir(tmp_path)) == [".metadata", "__0_0.distcp"]
    assert isinstance(metadata.state_dict_metadata["optim.state.0.weight.exp_avg"],
                      dcp.TensorStorageMetadata)

    fresh, fresh_opt = _trained(ember, 0.5)
    ember.nn.init.zeros_(fresh[0].weight)
    msd2, osd2 = get_state_dict(fresh, fresh_opt)
    state = {"model": msd2, "optim": osd2, "epoch": 0, "tags": []}
    dcp.load(state, checkpoint_id=tmp_path)
    assert state["epoch"] == 3 and state["tags"] == ["a", "b"]
    set_state_dict(fresh, fresh_opt, model_state_dict=state["model"],
                   optim_state_dict=state["optim"])
    for a, b in zip(model.parameters(), fresh.parameters()):
        assert ember.equal(a, b)
    assert fresh_opt.param_groups[0]["lr"] == 0.01
    s1, s2 = opt.state_dict()["state"], fresh_opt.state_dict()["state"]
    assert all(ember.equal(s1[i]["exp_avg_sq"], s2[i]["exp_avg_sq"]) for i in s1)

    flat = get_optimizer_state_dict(model, opt, options=StateDictOptions(
        flatten_optimizer_state_dict=True))
    assert "state.2.bias.exp_avg" in flat and flat["param_groups.0.weight.lr"] == 0.01
    fresh_opt.param_groups[0]["lr"] = 1.0
    set_optimizer_state_dict(fresh, fresh_opt, flat)
    assert fresh_opt.param_groups[0]["lr"] == 0.01


def test_missing_key_and_size_mismatch(tmp_path):
    dcp.save({"w": ember.ones(2, 3)}, checkpoint_id=tmp_path)
    with pytest.raises(dcp.CheckpointException, match="Checkpoint already exists"):
        dcp.save({"w": ember.ones(2, 3)},
                 storage_writer=dcp.FileSystemWriter(tmp_path, overwrite=False))
    with pytest.raises(dcp.CheckpointException, match="Missing key in checkpoint state_dict: v"):
        dcp.load({"w": ember.zeros(2, 3), "v": ember.zeros(1)}, checkpoint_id=tmp_path)
    with pytest.raises(dcp.CheckpointException, match="Size mismatch between saved"):
        dcp.load({"w": ember.zeros(3, 2)}, checkpoint_id=tmp_path)
    partial = {"w": ember.zeros(2, 3), "v": ember.zeros(1)}
    dcp.load(partial, checkpoint_id=tmp_path,
             planner=dcp.DefaultLoadPlanner(allow_partial_load=True))
    assert partial["w"].sum().item() == 6 and partial["v"].sum().item() == 0


def test_pytorch_and_ember_read_each_others_checkpoints(tmp_path, torch):
    import torch.distributed.checkpoint as tdcp
    model, opt = _trained(ember, 0.01)
    dcp.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3},
             checkpoint_id=tmp_path / "ember")
    tmodel, topt = _trained(torch, 0.5)
    state = {"model": tmodel.state_dict(), "optim": topt.state_dict(), "epoch": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tdcp.load(state, checkpoint_id=tmp_path / "ember")
        assert state["epoch"] == 3
        assert state["model"]["2.bias"].tolist() == model[2].bias.tolist()
        assert state["optim"]["state"][0]["exp_avg"].tolist() == \
            opt.state_dict()["state"][0]["exp_avg"].tolist()
        tdcp.save({"w": torch.arange(6.0).reshape(2, 3), "o": {"k": 3, "t": torch.ones(2)}},
                  checkpoint_id=tmp_path / "torch")
    back = {"w": ember.zeros(2, 3), "o": {"k": 0, "t": ember.zeros(2)}}
    dcp.load(back, checkpoint_id=tmp_path / "torch")
    assert back["w"].tolist() == [[0, 1, 2], [3, 4, 5]] and back["o"]["k"] == 3
    assert back["o"]["t"].tolist() == [1, 1]


def _save_sharded(folder, rank, world):
    mesh = init_device_mesh("cpu", (world,))
    whole = ember.arange(15.0).reshape(5, 3)
    state = {"rows": distribute_tensor(whole, mesh, [Shard(0)]),
             "cols": distribute_tensor(whole * 2, mesh, [Shard(1)]),
             "same": distribute_tensor(whole + 1, mesh, [Replicate()]),
             "plain": ember.full((2,), 7.0), "step": 11}
    dcp.save(state, checkpoint_id=os.path.join(folder, "dcp"))
    hf = {"rows": state["rows"], "cols": state["cols"]}
    dcp.save(hf, storage_writer=HuggingFaceStorageWriter(
        os.path.join(folder, "hf"), save_distributed=True, enable_consolidation=True))
    # reloaded on the same two ranks with the layouts swapped: each reads the overlaps
    back = {"rows": distribute_tensor(ember.zeros(5, 3), mesh, [Shard(1)]),
            "cols": distribute_tensor(ember.zeros(5, 3), mesh, [Shard(0)]),
            "same": distribute_tensor(ember.zeros(5, 3), mesh, [Shard(0)]),
            "plain": ember.zeros(2), "step": 0}
    dcp.load(back, checkpoint_id=os.path.join(folder, "dcp"))
    return [back["rows"].full_tensor().tolist(), back["cols"].full_tensor().tolist(),
            back["same"].full_tensor().tolist(), back["plain"].tolist(), back["step"],
            back["rows"].to_local().shape[1]]


def test_two_ranks_save_shards_reloaded_on_two_and_on_one(tmp_path):
    results = _launch(functools.partial(_save_sharded, str(tmp_path)))
    whole = ember.arange(15.0).reshape(5, 3)
    expected = [whole.tolist(), (whole * 2).tolist(), (whole + 1).tolist(), [7.0, 7.0], 11]
    assert results[0][:5] == expected and results[1][:5] == expected
    assert (results[0][5], results[1][5]) == (2, 1)  # Shard(1) of 3 columns on 2 ranks
    assert sorted(os.listdir(tmp_path / "dcp")) == [".metadata", "__0_0.distcp",
                                                    "__1_0.distcp"]
    md = dcp.FileSystemReader(tmp_path / "dcp").read_metadata()
    assert [len(md.state_dict_metadata[k].chunks) for k in ("rows", "cols", "same", "plain")] \
        == [2, 2, 1, 1]  # a tensor both ranks hold is written once
    assert sorted(tuple(c.offsets) for c in md.state_dict_metadata["cols"].chunks) == \
        [(0, 0), (0, 2)]
    # one process, no process group: the whole tensors out of both ranks' files
    single = {"rows": ember.zeros(5, 3), "cols": ember.zeros(5, 3), "same": ember.zeros(5, 3),
              "plain": ember.zeros(2), "step": 0}
    dcp.load(single, checkpoint_id=tmp_path / "dcp")
    assert [single[k].tolist() for k in ("rows", "cols", "same", "plain")] + \
        [single["step"]] == expected
    # the safetensors shards, and the whole tensors they were consolidated into
    sharded = {"rows": ember.zeros(5, 3), "cols": ember.zeros(5, 3)}
    dcp.load(sharded, storage_reader=HuggingFaceStorageReader(tmp_path / "hf" / "sharded"))
    assert sharded["rows"].tolist() == expected[0] and sharded["cols"].tolist() == expected[1]
    from ember.serialization.safetensors import load_file
    merged = load_file(tmp_path / "hf" / "model-00001-of-00001.safetensors")
    assert merged["rows"].tolist() == expected[0] and merged["cols"].tolist() == expected[1]


class _OddError(Exception):
    pass


def _one_rank_fails(folder, rank, world):
    dcp.save({"w": ember.ones(2)}, checkpoint_id=folder)
    state = {"w": ember.zeros(2)}
    if rank == 1:
        state["missing"] = ember.zeros(1)
    seen = []
    try:
        dcp.load(state, checkpoint_id=folder)
    except dcp.CheckpointException as exc:
        seen.append({r: (type(e).__name__, str(e)) for r, e in exc.failures.items()})

    class Planner(dcp.DefaultSavePlanner):
        def create_local_plan(self):
            if rank == 0:
                raise _OddError("rank 0 cannot plan")
            return super().create_local_plan()
    try:
        dcp.save({"w": ember.ones(2)}, checkpoint_id=folder, planner=Planner())
    except dcp.CheckpointException as exc:
        seen.append({r: (type(e).__name__, str(e)) for r, e in exc.failures.items()})
    return seen


def test_a_failing_rank_fails_every_rank(tmp_path):
    results = _launch(functools.partial(_one_rank_fails, str(tmp_path)))
    expected = [{1: ("RuntimeError", "Missing key in checkpoint state_dict: missing.")},
                {0: ("RuntimeError", "_OddError: rank 0 cannot plan")}]
    assert results[0] == expected and results[1] == expected


def _small_model():
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Linear(3, 5), ember.nn.ReLU(), ember.nn.Linear(5, 2))


def _fsdp_round_trip(folder, rank, world):
    from ember.distributed.fsdp import fully_shard
    from ember.distributed.checkpoint.state_dict import get_model_state_dict, \
        set_model_state_dict
    model = fully_shard(_small_model())
    opt = ember.optim.Adam(model.parameters(), lr=0.1)
    model(ember.randn(4, 3)).sum().backward()
    opt.step()
    msd, osd = get_state_dict(model, opt)
    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=folder)

    other = fully_shard(_small_model())
    other_opt = ember.optim.Adam(other.parameters(), lr=0.5)
    other(ember.randn(4, 3)).sum().backward()
    other_opt.step()
    msd2, osd2 = get_state_dict(other, other_opt)
    state = {"model": msd2, "optim": osd2}
    dcp.load(state, checkpoint_id=folder)
    set_state_dict(other, other_opt, model_state_dict=state["model"],
                   optim_state_dict=state["optim"])
    from_full = fully_shard(_small_model())
    set_model_state_dict(from_full, full, options=StateDictOptions(full_state_dict=True))
    locals_of = lambda m: [p.to_local().tolist() for p in m.parameters()]  # noqa: E731
    return [locals_of(model) == locals_of(other), locals_of(model) == locals_of(from_full),
            {k: (tuple(v.shape), tuple(full[k].shape)) for k, v in msd.items()},
            full["0.weight"].tolist()]


def test_fsdp_sharded_model_and_optimizer(tmp_path):
    pytest.importorskip("ember.distributed.fsdp")
    results = _launch(functools.partial(_fsdp_round_trip, str(tmp_path)))
    assert results[0][:2] == [True, True] and results[1][:2] == [True, True]
    assert results[0][2]["0.weight"] == ((3, 3), (5, 3))  # rank 0's shard, the whole
    assert results[1][2]["0.weight"] == ((2, 3), (5, 3))
    assert results[0][3] == results[1][3]
    plain = {"model": _small_model().state_dict()}
    dcp.load(plain, checkpoint_id=tmp_path)  # the shards, whole in one process
    assert plain["model"]["0.weight"].tolist() == results[0][3]


def test_pytorch_reads_two_ranks_shards(tmp_path, torch):
    import torch.distributed.checkpoint as tdcp
    from torch.distributed.checkpoint.hf_storage import HuggingFaceStorageReader as TorchHF
    _launch(functools.partial(_save_sharded, str(tmp_path)))
    whole = torch.arange(15.0).reshape(5, 3)
    state = {"rows": torch.zeros(5, 3), "cols": torch.zeros(5, 3), "same": torch.zeros(5, 3),
             "plain": torch.zeros(2), "step": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tdcp.load(state, checkpoint_id=tmp_path / "dcp")
    assert torch.equal(state["rows"], whole) and torch.equal(state["cols"], whole * 2)
    assert torch.equal(state["same"], whole + 1) and state["step"] == 11
    # PyTorch's Hugging Face reader needs the `safetensors` package (ember's own does not)
    if importlib.util.find_spec("safetensors") is None:
        return
    hf = {"rows": torch.zeros(5, 3), "cols": torch.zeros(5, 3)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tdcp.load(hf, storage_reader=TorchHF(str(tmp_path / "hf" / "sharded")))
    assert torch.equal(hf["rows"], whole) and torch.equal(hf["cols"], whole * 2)


def test_safetensors_package_reads_ember_files_and_back(tmp_path, torch):
    st = pytest.importorskip("safetensors.torch")
    state = {"a.weight": ember.randn(3, 4), "b": ember.arange(5), "h": ember.ones(2).bfloat16()}
    dcp.save(state, storage_writer=HuggingFaceStorageWriter(
        tmp_path / "e", fqn_to_index_mapping={"a.weight": 1, "b": 2, "h": 2}))
    assert sorted(os.listdir(tmp_path / "e")) == [
        "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
        "model.safetensors.index.json"]
    theirs = {**st.load_file(tmp_path / "e" / "model-00001-of-00002.safetensors"),
              **st.load_file(tmp_path / "e" / "model-00002-of-00002.safetensors")}
    assert {k: v.float().tolist() for k, v in theirs.items()} == \
        {k: v.float().tolist() for k, v in state.items()}
    assert theirs["b"].dtype == torch.int64 and theirs["h"].dtype == torch.bfloat16

    os.makedirs(tmp_path / "t")
    st.save_file({"x": torch.arange(6.0).reshape(2, 3), "y": torch.ones(3).half()},
                 tmp_path / "t" / "model.safetensors")
    back = {"x": ember.zeros(2, 3), "y": ember.zeros(3).half()}
    dcp.load(back, storage_reader=HuggingFaceStorageReader(tmp_path / "t"))
    assert back["x"].tolist() == [[0, 1, 2], [3, 4, 5]] and back["y"].tolist() == [1, 1, 1]


def test_damaged_files_give_clear_errors(tmp_path):
    folder = tmp_path / "c"
    dcp.save({"w": ember.ones(4, 4), "n": 5}, checkpoint_id=folder)
    data = folder / "__0_0.distcp"
    data.write_bytes(data.read_bytes()[:100])
    with pytest.raises(dcp.CheckpointException, match="is truncated"):
        dcp.load({"w": ember.zeros(4, 4), "n": 0}, checkpoint_id=folder)

    meta = folder / ".metadata"
    meta.write_bytes(meta.read_bytes()[:40])
    with pytest.raises(dcp.CheckpointException, match="not a readable checkpoint record"):
        dcp.load({"w": ember.zeros(4, 4)}, checkpoint_id=folder)

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned",))
    meta.write_bytes(pickle.dumps(Evil()))
    with pytest.raises(dcp.CheckpointException, match="GLOBAL posix.system whose module posix "
                                                      "is blocked"):
        dcp.load({"w": ember.zeros(4, 4)}, checkpoint_id=folder)

    hf = tmp_path / "hf"
    dcp.save({"w": ember.ones(2)}, storage_writer=HuggingFaceStorageWriter(hf))
    (hf / "model-00001-of-00001.safetensors").write_bytes(b"\x10\x00\x00")
    with pytest.raises(dcp.CheckpointException, match="not a readable safetensors"):
        dcp.load({"w": ember.zeros(2)}, storage_reader=HuggingFaceStorageReader(hf))


def test_import_under_compat(tmp_path):
    script = tmp_path / "uses_dcp.py"
    script.write_text(
        "import torch.distributed.checkpoint as dcp\n"
        "from torch.distributed.checkpoint.hf_storage import HuggingFaceStorageWriter\n"
        "from torch.distributed.checkpoint.state_dict import get_model_state_dict\n"
        "from torch.distributed.checkpoint.default_planner import DefaultLoadPlanner\n"
        "from torch.distributed.checkpoint._consolidate_hf_safetensors import "
        "consolidate_safetensors_files\n"
        "print(dcp.__name__, HuggingFaceStorageWriter.__module__)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script)],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": root})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ember.distributed.checkpoint",
                                  "ember.distributed.checkpoint.hf_storage"]


def _state_dict_api(lib):
    from importlib import import_module
    sdm = import_module(lib.__name__ + ".distributed.checkpoint.state_dict")
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    model[0].bias.requires_grad_(False)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(lib.ones(2, 3)).sum().backward()
    opt.step()
    osd = sdm.get_optimizer_state_dict(model, opt)
    flat = sdm.get_optimizer_state_dict(model, opt, options=sdm.StateDictOptions(
        flatten_optimizer_state_dict=True))
    seen = [list(osd["state"]), [sorted(s) for s in osd["state"].values()],
            osd["param_groups"][0]["params"], sorted(flat),
            list(sdm.get_model_state_dict(model, options=sdm.StateDictOptions(
                ignore_frozen_params=True))),
            repr(sdm.set_model_state_dict(model, {"0.weight": lib.zeros(4, 3)},
                                          options=sdm.StateDictOptions(strict=False)))]
    with pytest.raises(RuntimeError) as info:
        sdm.set_model_state_dict(model, {"0.weight": lib.zeros(4, 3)})
    return seen + [str(info.value)]


def test_state_dict_api_matches_pytorchs(torch):
    assert _state_dict_api(ember) == _state_dict_api(torch)
