"""Batcher (`batch`), UnBatcher (`unbatch`) and Grouper (`groupby`)."""
from collections import defaultdict

from .._decorator import functional_datapipe
from ..datapipe import DataChunk, IterDataPipe
from ._common import _check_unpickable_fn, _len_of

__all__ = ["BatcherIterDataPipe", "GrouperIterDataPipe", "UnBatcherIterDataPipe"]


@functional_datapipe("batch")
class BatcherIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        super().__init__()
        self.datapipe = datapipe
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.wrapper_class = wrapper_class

    def __iter__(self):
        batch = []
        for x in self.datapipe:
            batch.append(x)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self):
        n = _len_of(self, self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe("unbatch")
class UnBatcherIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, unbatch_level=1):
        self.datapipe = datapipe
        self.unbatch_level = unbatch_level

    def __iter__(self):
        for element in self.datapipe:
            yield from self._dive(element, unbatch_level=self.unbatch_level)

    def _dive(self, element, unbatch_level):
        if unbatch_level < -1:
            raise ValueError("unbatch_level must be -1 or >= 0")
        if unbatch_level == -1:  # flatten every level of lists
            if isinstance(element, (list, DataChunk)):
                for item in element:
                    yield from self._dive(item, unbatch_level=-1)
            else:
                yield element
        elif unbatch_level == 0:
            yield element
        elif isinstance(element, (list, DataChunk)):
            for item in element:
                yield from self._dive(item, unbatch_level=unbatch_level - 1)
        else:
            raise IndexError(f"unbatch_level {self.unbatch_level} exceeds the depth of the "
                             "DataPipe")


@functional_datapipe("groupby")
class GrouperIterDataPipe(IterDataPipe):
    """Buffers items by key; yields a key's group when it reaches group_size, the biggest group
    when the buffer is full, and the rest at the end."""

    def __init__(self, datapipe, group_key_fn, *, keep_key=False, buffer_size=10000,
                 group_size=None, guaranteed_group_size=None, drop_remaining=False):
        _check_unpickable_fn(group_key_fn)
        self.datapipe = datapipe
        self.group_key_fn = group_key_fn
        self.keep_key = keep_key
        self.max_buffer_size = buffer_size
        self.buffer_elements = defaultdict(list)
        self.curr_buffer_size = 0
        self.group_size = group_size
        self.guaranteed_group_size = None
        if group_size is not None and buffer_size is not None:
            if not 0 < group_size <= buffer_size:
                raise AssertionError("group_size must be > 0 and <= buffer_size")
            self.guaranteed_group_size = group_size
        if guaranteed_group_size is not None:
            if group_size is None or not 0 < guaranteed_group_size <= group_size:
                raise AssertionError("guaranteed_group_size must be > 0 and <= group_size and "
                                     "group_size must be set")
            self.guaranteed_group_size = guaranteed_group_size
        self.drop_remaining = drop_remaining
        self.wrapper_class = DataChunk

    def _remove_biggest_key(self):
        biggest_key, biggest_size = None, 0
        for key, items in self.buffer_elements.items():
            if len(items) > biggest_size:
                biggest_key, biggest_size = key, len(items)
        if (self.guaranteed_group_size is not None and biggest_size < self.guaranteed_group_size
                and not self.drop_remaining):
            raise RuntimeError("Failed to group items", str(self.buffer_elements[biggest_key]))
        result = None
        if self.guaranteed_group_size is None or biggest_size >= self.guaranteed_group_size:
            result = self.buffer_elements[biggest_key]
        self.curr_buffer_size -= biggest_size
        del self.buffer_elements[biggest_key]
        return result

    def _out(self, key, items):
        result = self.wrapper_class(items)
        return (key, result) if self.keep_key else result

    def __iter__(self):
        for x in self.datapipe:
            key = self.group_key_fn(x)
            self.buffer_elements[key].append(x)
            self.curr_buffer_size += 1
            if self.group_size is not None and self.group_size == len(self.buffer_elements[key]):
                yield self._out(key, self.buffer_elements[key])
                self.curr_buffer_size -= len(self.buffer_elements[key])
                del self.buffer_elements[key]
            if self.curr_buffer_size == self.max_buffer_size:
                biggest = self._remove_biggest_key()
                if biggest is not None:
                    yield self._out(key, biggest)
        for key in tuple(self.buffer_elements.keys()):
            items = self.buffer_elements.pop(key)
            self.curr_buffer_size -= len(items)
            yield self._out(key, items)

    def reset(self):
        self.curr_buffer_size = 0
        self.buffer_elements = defaultdict(list)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["buffer_elements"] = defaultdict(list)
        state["curr_buffer_size"] = 0
        return state
