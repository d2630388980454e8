"""`torch.utils.data._utils.fetch`: how a batch of indices becomes a batch of samples."""
from ..dataloader import (_BaseDatasetFetcher, _IterableDatasetFetcher,  # noqa: F401
                          _MapDatasetFetcher)
