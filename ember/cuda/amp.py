"""`torch.cuda.amp`: PyTorch's deprecated spellings of `torch.amp.autocast("cuda")` and
`torch.amp.GradScaler("cuda")`; they warn as PyTorch does and behave the same (without a
GPU both disable themselves with PyTorch's warning)."""
from .. import dtypes as _dt
from ..amp._deprecated import deprecated_spellings

__all__ = ["autocast", "GradScaler"]

autocast, GradScaler = deprecated_spellings("cuda", _dt.float16, __name__)
