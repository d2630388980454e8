"""The map-style DataPipes: SequenceWrapper, Mapper (`map`), Batcher (`batch`), Concater
(`concat`), Zipper (`zip`), and Shuffler (`shuffle`, which turns a MapDataPipe into a shuffled
IterDataPipe over its indices)."""
import copy
import random
import warnings

from .._decorator import functional_datapipe
from ..datapipe import DataChunk, IterDataPipe, MapDataPipe
from ..iter._common import _check_unpickable_fn
from ..iter.combinatorics import _draw_seed

__all__ = ["BatcherMapDataPipe", "ConcaterMapDataPipe", "MapperMapDataPipe",
           "SequenceWrapperMapDataPipe", "ShufflerIterDataPipe", "ZipperMapDataPipe"]


class SequenceWrapperMapDataPipe(MapDataPipe):
    def __init__(self, sequence, deepcopy=True):
        if deepcopy:
            try:
                self.sequence = copy.deepcopy(sequence)
            except TypeError:
                warnings.warn("The input sequence can not be deepcopied, please be aware of "
                              "in-place modification would affect source data")
                self.sequence = sequence
        else:
            self.sequence = sequence

    def __getitem__(self, index):
        return self.sequence[index]

    def __len__(self):
        return len(self.sequence)


@functional_datapipe("map")
class MapperMapDataPipe(MapDataPipe):
    def __init__(self, datapipe, fn):
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(fn)
        self.fn = fn

    def __getitem__(self, index):
        return self.fn(self.datapipe[index])

    def __len__(self):
        return len(self.datapipe)


@functional_datapipe("batch")
class BatcherMapDataPipe(MapDataPipe):
    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        super().__init__()
        self.datapipe = datapipe
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.wrapper_class = wrapper_class

    def __getitem__(self, index):
        start = index * self.batch_size
        batch = [self.datapipe[i] for i in range(start, min(start + self.batch_size,
                                                            len(self.datapipe)))]
        if not batch or (self.drop_last and len(batch) < self.batch_size):
            raise IndexError(f"Index {index} is out of bound.")
        return self.wrapper_class(batch)

    def __len__(self):
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe("concat")
class ConcaterMapDataPipe(MapDataPipe):
    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        if not all(isinstance(dp, MapDataPipe) for dp in datapipes):
            raise TypeError("Expected all inputs to be `MapDataPipe`")
        if not all(hasattr(dp, "__len__") for dp in datapipes):
            raise TypeError("Expected all inputs to be `Sized`")
        self.datapipes = datapipes

    def __getitem__(self, index):
        offset = 0
        for dp in self.datapipes:
            if index - offset < len(dp):
                return dp[index - offset]
            offset += len(dp)
        raise IndexError(f"Index {index} is out of range.")

    def __len__(self):
        return sum(len(dp) for dp in self.datapipes)


@functional_datapipe("zip")
class ZipperMapDataPipe(MapDataPipe):
    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        if not all(isinstance(dp, MapDataPipe) for dp in datapipes):
            raise TypeError("Expected all inputs to be `MapDataPipe`")
        if not all(hasattr(dp, "__len__") for dp in datapipes):
            raise TypeError("Expected all inputs to be `Sized`")
        self.datapipes = datapipes

    def __getitem__(self, index):
        items = []
        for dp in self.datapipes:
            try:
                items.append(dp[index])
            except IndexError as e:
                raise IndexError(f"Index {index} is out of range for one of the input "
                                 f"MapDataPipes {dp}.") from e
        return tuple(items)

    def __len__(self):
        return min(len(dp) for dp in self.datapipes)


class ShufflerIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, *, indices=None):
        super().__init__()
        self.datapipe = datapipe
        self.indices = list(range(len(datapipe))) if indices is None else indices
        self._enabled = True
        self._seed = None
        self._rng = random.Random()
        self._shuffled_indices = self.indices

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self

    def __iter__(self):
        if not self._enabled:
            for idx in self.indices:
                yield self.datapipe[idx]
        else:
            while self._shuffled_indices:
                yield self.datapipe[self._shuffled_indices.pop()]

    def reset(self):
        if self._enabled:
            self._rng.seed(_draw_seed() if self._seed is None else self._seed)
            self._seed = None
            self._shuffled_indices = self._rng.sample(self.indices, len(self.indices))

    def __len__(self):
        return len(self.datapipe)


# an IterDataPipe made from a MapDataPipe: registered as a MapDataPipe function by hand
MapDataPipe.register_datapipe_as_function("shuffle", ShufflerIterDataPipe)
