"""`ember.utils.data.datapipes` (torch.utils.data.datapipes): composable data pipelines."""
from . import iter, map  # noqa: A004  (torch's names)
from .datapipe import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe

__all__ = ["DataChunk", "DFIterDataPipe", "IterDataPipe", "MapDataPipe", "iter", "map"]
