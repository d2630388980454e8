"""`torch.quantization`: the older name of `torch.ao.quantization`, re-exported as PyTorch does."""
from ..ao.quantization import *  # noqa: F401,F403
from ..ao.quantization import __all__  # noqa: F401
