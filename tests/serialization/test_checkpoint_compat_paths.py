"""Whole models that ember 0.1.0 pickled name the module files it had then; the classes
that moved to PyTorch's files since still load from them."""
import pytest

import ember
from ember.serialization.loading import _unpickle

MOVED = [("ember.nn.modules.normalization", "BatchNorm2d", "BatchNorm2d"),
         ("ember.nn.modules.normalization", "LazyInstanceNorm3d", "LazyInstanceNorm3d"),
         ("ember.nn.modules.sync_batchnorm", "SyncBatchNorm", "SyncBatchNorm"),
         ("ember.nn.modules.attention", "MultiheadAttention", "MultiheadAttention"),
         # PyTorch's own paths resolve as before
         ("torch.nn.modules.batchnorm", "BatchNorm1d", "BatchNorm1d")]


@pytest.mark.parametrize("module,name,cls", MOVED)
def test_moved_classes_load_from_their_old_paths(module, name, cls):
    raw = b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"."  # pickle of the class itself
    assert _unpickle(raw, weights_only=False) is getattr(ember.nn, cls)


def test_a_whole_model_round_trips(tmp_path):
    model = ember.nn.Sequential(ember.nn.Conv2d(1, 2, 3), ember.nn.BatchNorm2d(2))
    ember.save(model, tmp_path / "m.pt")
    back = ember.load(tmp_path / "m.pt", weights_only=False)
    assert type(back[1]) is ember.nn.BatchNorm2d
