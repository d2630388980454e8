"""`torch.distributed.checkpoint.api`: the error every rank raises when a checkpoint step
failed on some rank."""
import traceback

__all__ = ["CheckpointException"]


class CheckpointException(BaseException):
    """A save or load step failed on the ranks in `failures` (rank -> its exception)."""

    def __init__(self, msg, failures):
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self):
        return self._failures

    def __str__(self):
        text = f"CheckpointException ranks:{self._failures.keys()}\n"
        for rank, exc in self._failures.items():
            text += f"Traceback (most recent call last): (RANK {rank})\n"
            text += "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return text
