"""Anomaly detection: with it on, a backward node that returns a NaN gradient raises
PyTorch's RuntimeError naming the node (`Function 'SqrtBackward0' returned nan values in
its 0th output.`). The engine checks only while the mode is on."""
import functools
import warnings

from .._state import anomaly as _anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn anomaly detection on or off for good (`torch.set_anomaly_enabled`)."""
    _anomaly.enabled, _anomaly.check_nan = bool(enabled), bool(check_nan)


def is_anomaly_enabled():
    return _anomaly.enabled


def is_anomaly_check_nan_enabled():
    return _anomaly.check_nan


class _Mode:
    def __enter__(self):
        self._previous = (_anomaly.enabled, _anomaly.check_nan)
        _anomaly.enabled, _anomaly.check_nan = self._mode, self._check_nan
        return self

    def __exit__(self, *exc):
        _anomaly.enabled, _anomaly.check_nan = self._previous
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            previous = (_anomaly.enabled, _anomaly.check_nan)
            _anomaly.enabled, _anomaly.check_nan = self._mode, self._check_nan
            try:
                return func(*args, **kwargs)
            finally:
                _anomaly.enabled, _anomaly.check_nan = previous
        return decorated


class detect_anomaly(_Mode):
    def __init__(self, check_nan=True):
        self._mode, self._check_nan = True, check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)


class set_detect_anomaly(_Mode):
    """Sets the mode at once (a function call); as a context manager, restores it on exit."""

    def __init__(self, mode, check_nan=True):
        self._previous = (_anomaly.enabled, _anomaly.check_nan)
        self._mode, self._check_nan = mode, check_nan
        _anomaly.enabled, _anomaly.check_nan = mode, check_nan

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _anomaly.enabled, _anomaly.check_nan = self._previous
        return False
