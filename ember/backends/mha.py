"""`torch.backends.mha`: the switch of the inference fast path of nn.MultiheadAttention and
nn.TransformerEncoder. ember's TransformerEncoder follows the fast path where its results
differ (padded positions of a padded batch come out as zeros) while the switch is on."""

_is_fastpath_enabled: bool = True


def get_fastpath_enabled() -> bool:
    """Whether the fast path of TransformerEncoder and MultiheadAttention is enabled (it still
    runs only where the inputs allow it)."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value: bool) -> None:
    """Sets whether the fast path is enabled."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
