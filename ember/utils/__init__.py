"""`ember.utils`: data loading (`ember.utils.data`) and other helpers, as `torch.utils`."""
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401
