"""Normalisation, dropout and embedding ops, with derivatives.

One op family (its `__all__`, `METHODS`, `FUNCTIONAL`) split by kind of op:
  norms      batch, layer, group, RMS, instance and local response norm, `normalize`
  dropout    dropout, alpha and feature dropout, dropout1d/2d/3d
  embedding  embedding, embedding_bag, one_hot
  sync_stats the pieces of SyncBatchNorm (batch_norm_stats, batch_norm_elemt ...)
  _common    the helpers they share
Where PyTorch's top-level function and its `nn.functional` namesake take different
arguments (`torch.batch_norm` / `F.batch_norm`, `torch.embedding(weight, indices)` /
`F.embedding(input, weight)` ...), one function here accepts both forms.
"""
from .dropout import *  # noqa: F401,F403
from .embedding import *  # noqa: F401,F403
from .norms import *  # noqa: F401,F403
from .sync_stats import *  # noqa: F401,F403
from .sync_stats import __all__ as _sync_stats

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm",
           "native_batch_norm", "native_layer_norm", "native_group_norm", "dropout", "dropout_",
           "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
           "feature_dropout", "feature_dropout_", "embedding"] + _sync_stats
METHODS = []
FUNCTIONAL = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "local_response_norm",
              "normalize", "rms_norm", "dropout", "dropout1d", "dropout2d", "dropout3d",
              "alpha_dropout", "feature_alpha_dropout", "embedding", "embedding_bag", "one_hot"]
