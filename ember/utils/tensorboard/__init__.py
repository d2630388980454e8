"""`ember.utils.tensorboard`, as torch.utils.tensorboard: `SummaryWriter` writes TensorBoard
event files through the `tensorboard` package (an optional extra: `pip install tensorboard`),
so TensorBoard, and anything that reads its files, sees what a PyTorch run would log."""
try:
    import tensorboard as _tensorboard
except ModuleNotFoundError as missing:
    raise ModuleNotFoundError(
        "ember.utils.tensorboard (torch.utils.tensorboard) writes its files with the "
        "'tensorboard' package, which is not installed: pip install tensorboard",
        name="tensorboard") from missing


def _version_tuple(text):
    parts = []
    for piece in text.split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


if _version_tuple(getattr(_tensorboard, "__version__", "0")) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")
del _tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
