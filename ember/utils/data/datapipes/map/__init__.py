"""`ember.utils.data.datapipes.map` (torch.utils.data.datapipes.map): map-style DataPipes."""
from .pipes import (BatcherMapDataPipe as Batcher, ConcaterMapDataPipe as Concater,
                    MapperMapDataPipe as Mapper, SequenceWrapperMapDataPipe as SequenceWrapper,
                    ShufflerIterDataPipe as Shuffler, ZipperMapDataPipe as Zipper)

__all__ = ["Batcher", "Concater", "Mapper", "SequenceWrapper", "Shuffler", "Zipper"]
