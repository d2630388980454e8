"""`ember.utils.data.datapipes.iter` (torch.utils.data.datapipes.iter): the iterable DataPipes,
each registered under its functional name (map, filter, batch, shuffle, sharding_filter, ...)."""
from .callable import CollatorIterDataPipe as Collator, MapperIterDataPipe as Mapper
from .combinatorics import SamplerIterDataPipe as Sampler, ShufflerIterDataPipe as Shuffler
from .combining import (ConcaterIterDataPipe as Concater,
                        DemultiplexerIterDataPipe as Demultiplexer, ForkerIterDataPipe as Forker,
                        MultiplexerIterDataPipe as Multiplexer, ZipperIterDataPipe as Zipper)
from .files import (FileListerIterDataPipe as FileLister, FileOpenerIterDataPipe as FileOpener,
                    StreamReaderIterDataPipe as StreamReader)
from .grouping import (BatcherIterDataPipe as Batcher, GrouperIterDataPipe as Grouper,
                       UnBatcherIterDataPipe as UnBatcher)
from .routeddecoder import RoutedDecoderIterDataPipe as RoutedDecoder
from .selecting import FilterIterDataPipe as Filter
from .sharding import ShardingFilterIterDataPipe as ShardingFilter
from .utils import IterableWrapperIterDataPipe as IterableWrapper

__all__ = ["Batcher", "Collator", "Concater", "Demultiplexer", "FileLister", "FileOpener",
           "Filter", "Forker", "Grouper", "IterableWrapper", "Mapper", "Multiplexer", "RoutedDecoder", "Sampler",
           "ShardingFilter", "Shuffler", "StreamReader", "UnBatcher", "Zipper"]
