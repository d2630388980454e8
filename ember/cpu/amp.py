"""`torch.cpu.amp`: PyTorch's deprecated spellings of `torch.amp.autocast("cpu")` and
`torch.amp.GradScaler("cpu")`; they warn as PyTorch does and behave the same."""
from .. import dtypes as _dt
from ..amp._deprecated import deprecated_spellings

__all__ = ["autocast", "GradScaler"]

autocast, GradScaler = deprecated_spellings("cpu", _dt.bfloat16, __name__)
