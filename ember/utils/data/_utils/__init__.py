"""`ember.utils.data._utils`: the internals PyTorch keeps in `torch.utils.data._utils`
(collate, worker, fetch), for code that imports them by that path."""
from . import collate, fetch, worker  # noqa: F401
from ..dataloader import MP_STATUS_CHECK_INTERVAL  # noqa: F401
