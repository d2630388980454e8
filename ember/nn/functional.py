"""`ember.nn.functional`: the functional forms of nn's math. Every function lives with its
op family in `ember.ops` (with its derivative); this namespace gathers them as PyTorch's
`torch.nn.functional` does."""
import sys as _sys

from .. import ops as _ops
from .._lazy import lazy_attributes as _lazy_attributes

# PyTorch's functional namespace also holds many top-level ops (relu, conv2d, softmax ...);
# a family's own functional name wins over a top-level op of the same name
_TOP_LEVEL = ("relu", "sigmoid", "tanh", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
              "conv_transpose2d", "conv_transpose3d", "avg_pool1d", "max_pool1d", "max_pool2d",
              "max_pool3d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "pixel_shuffle",
              "pixel_unshuffle", "dropout", "alpha_dropout", "feature_alpha_dropout",
              "batch_norm", "instance_norm", "layer_norm", "group_norm", "embedding",
              "embedding_bag", "softmax", "log_softmax", "cosine_similarity", "pairwise_distance",
              "pdist", "hardshrink", "threshold", "selu", "celu", "prelu", "rrelu", "bilinear",
              "kl_div", "binary_cross_entropy_with_logits", "ctc_loss", "hinge_embedding_loss",
              "margin_ranking_loss", "poisson_nll_loss", "cosine_embedding_loss",
              "triplet_margin_loss", "native_channel_shuffle", "channel_shuffle")
# the families loaded on first use (ember/ops/__init__.py) give their names when they load
_ops.export(_sys.modules[__name__], public=[n for n in _TOP_LEVEL if n in _ops.__all__],
            functional=_ops.FUNCTIONAL_NAMES, kind="nn.functional")
# by name, not through FUNCTIONAL: it has no op-table entry of its own (nn.MultiheadAttention's
# tests in tests/test_transformer.py check it)
from ..ops.attention import multi_head_attention_forward  # noqa: E402,F401
# scaled_mm's enums, from a family loaded on first use
_lazy_attributes(_sys.modules[__name__], {name: ("ember.ops.scaled_mm", name)
                                          for name in ("ScalingType", "SwizzleType")})
from ..ops._grid_sample import GRID_SAMPLE_INTERPOLATION_MODES, GRID_SAMPLE_PADDING_MODES  # noqa: E402,F401


def assert_int_or_pair(arg, arg_name, message):
    """Raises AssertionError(message.format(arg_name)) unless `arg` is an int or has two items
    (fold/unfold's argument check)."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


__all__ = sorted(n for n in __dir__() if not n.startswith("_"))  # noqa: F821 (ember/_lazy.py's)

# Not ops (so not in __all__): names PyTorch's functional module also holds, which code
# copied from PyTorch's functional source calls (custom losses, attention forks)
from .. import _torch_function as _tf  # noqa: E402
from . import _reduction as _Reduction, grad  # noqa: E402,F401
has_torch_function, has_torch_function_unary = _tf.has_torch_function, _tf.has_torch_function_unary
has_torch_function_variadic = _tf.has_torch_function_variadic
handle_torch_function = _tf.handle_torch_function
