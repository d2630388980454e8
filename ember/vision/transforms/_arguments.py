"""Argument normalisers shared by the v1 transforms (`transforms.py`, `_augment.py`)."""
import numbers
from collections.abc import Sequence

from . import functional as F


def _setup_size(size, error_msg):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


def _interpolation(interpolation):
    if isinstance(interpolation, int) and not isinstance(interpolation, bool):
        return F._interp(interpolation)
    return interpolation
