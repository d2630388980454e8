"""Dropout in its forms: dropout, alpha dropout, feature (channel) dropout, dropout1d/2d/3d,
with their in-place variants. Each is a multiplication by a random mask, so its derivative is
the multiplication's.
"""
import math
import warnings

from ..._tensor import make_tensor, xp_of
from .._draws import bernoulli_mask
from ._common import _opmath

__all__ = [
    "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout",
    "feature_alpha_dropout_", "feature_dropout", "feature_dropout_", "dropout1d", "dropout2d",
    "dropout3d",
]


# ---- dropout --------------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _bernoulli_keep(input, shape, p):
    """A float mask of `shape`: 1 with probability 1 - p, drawn as PyTorch's dropout draws it
    (`bernoulli_(1 - p)` on a mask of the input's dtype: u < 1 - p, u of 53 bits), so that a
    seeded CPU run drops PyTorch's elements."""
    from ...random import generator_for
    rng = generator_for(input._device, None).rng
    return bernoulli_mask(rng, shape, 1 - p).astype(_opmath(input._array).dtype)


def _feature_shape(input):
    return tuple(input.shape[:2]) + (1,) * (input.ndim - 2)


def _dropout_impl(input, p, train, inplace_, feature, alpha):
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = make_tensor(xp_of(input).zeros((), dtype=input._array.dtype), input._device)
        return input.mul_(zero) if inplace_ else input * zero
    shape = _feature_shape(input) if feature else tuple(input.shape)
    keep = _bernoulli_keep(input, shape, p)
    if alpha:
        a_ = 1.7580993408473766
        a = 1.0 / math.sqrt((a_ * a_ * p + 1) * (1 - p))
        b = make_tensor(((keep - 1) * (a_ * a) + a_ * a * p).astype(input._array.dtype),
                        input._device)
        noise = make_tensor((keep * a).astype(input._array.dtype), input._device)
        if inplace_:
            return input.mul_(noise).add_(b)
        return input * noise + b
    noise = make_tensor((keep / (1 - p)).astype(input._array.dtype), input._device)
    return input.mul_(noise) if inplace_ else input * noise


def _train_arg(training, train):
    return training if train is None else train


def dropout(input, p=0.5, training=True, inplace=False, *, train=None):
    """`F.dropout(input, p=0.5, training=True, inplace=False)`; also `torch.dropout(input, p,
    train)`."""
    _check_p(p)
    return _dropout_impl(input, p, _train_arg(training, train), inplace, False, False)


def dropout_(input, p=0.5, train=True):
    _check_p(p)
    return _dropout_impl(input, p, train, True, False, False)


def feature_dropout(input, p, train):
    return _dropout_impl(input, p, train, False, True, False)


def feature_dropout_(input, p, train):
    return _dropout_impl(input, p, train, True, True, False)


def alpha_dropout(input, p=0.5, training=False, inplace=False, *, train=None):
    _check_p(p)
    return _dropout_impl(input, p, _train_arg(training, train), inplace, False, True)


def alpha_dropout_(input, p=0.5, train=False):
    return _dropout_impl(input, p, train, True, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False, *, train=None):
    _check_p(p)
    return _dropout_impl(input, p, _train_arg(training, train), inplace, True, True)


def feature_alpha_dropout_(input, p=0.5, train=False):
    return _dropout_impl(input, p, train, True, True, True)


def _unbatched_feature_dropout(input, p, training, inplace_, batched):
    if batched:
        return _dropout_impl(input, p, training, inplace_, True, False)
    if inplace_:
        view = input.unsqueeze(0)
        _dropout_impl(view, p, training, True, True, False)
        return input
    return _dropout_impl(input.unsqueeze(0), p, training, False, True, False).squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    d = input.ndim
    if d not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {d}D input. "
                           "Note that dropout1d exists to provide channel-wise dropout on inputs "
                           "with 1 spatial dimension, a channel dimension, and an optional batch "
                           "dimension (i.e. 2D or 3D inputs).")
    return _unbatched_feature_dropout(input, p, training, inplace, d == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    d = input.ndim
    if d not in (3, 4):
        warnings.warn(f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated and "
                      "will result in an error in a future release. To retain the behavior and "
                      "silence this warning, please use dropout instead. Note that dropout2d "
                      "exists to provide channel-wise dropout on inputs with 2 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      "3D or 4D inputs).", stacklevel=2)
    if d == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change in "
                      "a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    d = input.ndim
    if d not in (4, 5):
        warnings.warn(f"dropout3d: Received a {d}-D input to dropout3d, which is deprecated and "
                      "will result in an error in a future release. To retain the behavior and "
                      "silence this warning, please use dropout instead. Note that dropout3d "
                      "exists to provide channel-wise dropout on inputs with 3 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      "4D or 5D inputs).", stacklevel=2)
    return _unbatched_feature_dropout(input, p, training, inplace, d == 5)
