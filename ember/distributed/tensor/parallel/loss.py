"""`torch.distributed.tensor.parallel.loss`: `loss_parallel`."""
import contextlib

__all__ = ["loss_parallel"]


@contextlib.contextmanager
def loss_parallel():
    raise NotImplementedError("ember: loss_parallel is not supported yet")
    yield
