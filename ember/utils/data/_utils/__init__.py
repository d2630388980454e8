"""`ember.utils.data._utils`: the internals PyTorch keeps in `torch.utils.data._utils`: the
worker side of DataLoader (`worker`), the fetchers (`fetch`) and the collate functions."""
MP_STATUS_CHECK_INTERVAL = 5.0  # how long shutdown waits for a worker before terminating it

from . import collate, fetch, worker  # noqa: E402,F401
