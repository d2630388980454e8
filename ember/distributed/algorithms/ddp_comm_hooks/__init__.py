"""DDP communication hooks: what `DistributedDataParallel.register_comm_hook` runs on each
bucket of gradients instead of its own all_reduce. `default_hooks` has PyTorch's defaults."""
from . import default_hooks  # noqa: F401
