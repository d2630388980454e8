"""The pair of deprecated classes, made once for the autocast_mode and grad_scaler modules."""
from ... import dtypes as _dt
from ...amp._deprecated import deprecated_spellings

autocast, GradScaler = deprecated_spellings("cpu", _dt.bfloat16, "ember.cpu.amp")
