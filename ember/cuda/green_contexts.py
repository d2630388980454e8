"""`torch.cuda.green_contexts`: a CUDA green context gives a stream a share of the GPU's
multiprocessors. CuPy does not create them, so ember answers as PyTorch built without them."""

__all__ = ["GreenContext"]

SUPPORTED = False


class GreenContext:
    """A CUDA green context (not available under ember: create raises)."""

    @staticmethod
    def create(*, num_sms=None, workqueue_scope=None, workqueue_concurrency_limit=None,
               device_id=None):
        raise RuntimeError("PyTorch was not built with Green Context support!")

    @staticmethod
    def max_workqueue_concurrency(device_id=None):
        raise RuntimeError("PyTorch was not built with Green Context support!")
