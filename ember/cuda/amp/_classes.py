"""The pair of deprecated classes, made once for the autocast_mode and grad_scaler modules."""
from ... import dtypes as _dt
from ...amp._deprecated import deprecated_spellings

autocast, GradScaler = deprecated_spellings("cuda", _dt.float16, "ember.cuda.amp")
