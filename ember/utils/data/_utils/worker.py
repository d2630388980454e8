"""`torch.utils.data._utils.worker`: worker information and the worker loop."""
from ..dataloader import (ExceptionWrapper, WorkerInfo, _generate_state,  # noqa: F401
                          _IterableDatasetStopIteration, _ResumeIteration, _worker_loop,
                          get_worker_info)
