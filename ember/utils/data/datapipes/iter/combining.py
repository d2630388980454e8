"""Concater (`concat`), Zipper (`zip`), Multiplexer (`mux`), and the splitters Forker (`fork`:
every item to each child) and Demultiplexer (`demux`: each item to the child a classifier
picks), whose children share one pass over the source through a bounded buffer."""
import copy as copymodule
import warnings
from collections import deque

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ["ConcaterIterDataPipe", "DemultiplexerIterDataPipe", "ForkerIterDataPipe",
           "MultiplexerIterDataPipe", "ZipperIterDataPipe"]


def _lengths(datapipe, sources):
    if all(hasattr(dp, "__len__") for dp in sources):
        return [len(dp) for dp in sources]
    raise TypeError(f"{type(datapipe).__name__} instance doesn't have valid length")


@functional_datapipe("concat")
class ConcaterIterDataPipe(IterDataPipe):
    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("Expected all inputs to be `IterDataPipe`")
        self.datapipes = datapipes

    def __iter__(self):
        for dp in self.datapipes:
            yield from dp

    def __len__(self):
        return sum(_lengths(self, self.datapipes))


@functional_datapipe("zip")
class ZipperIterDataPipe(IterDataPipe):
    def __init__(self, *datapipes):
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("All inputs are required to be `IterDataPipe` for `ZipIterDataPipe`.")
        super().__init__()
        self.datapipes = datapipes

    def __iter__(self):
        yield from zip(*self.datapipes)

    def __len__(self):
        return min(_lengths(self, self.datapipes))


@functional_datapipe("mux")
class MultiplexerIterDataPipe(IterDataPipe):
    """One item from each source in turn; stops at the first round a source cannot finish."""

    def __init__(self, *datapipes):
        self.datapipes = datapipes
        self.buffer = []

    def __iter__(self):
        iterators = [iter(dp) for dp in self.datapipes]
        while iterators:
            for it in iterators:
                try:
                    self.buffer.append(next(it))
                except StopIteration:
                    self.buffer.clear()
                    return
            yield from self.buffer
            self.buffer.clear()

    def __len__(self):
        return min(_lengths(self, self.datapipes)) * len(self.datapipes)

    def reset(self):
        self.buffer = []


class _ChildDataPipe(IterDataPipe):
    """Child `instance_id` of a fork/demux: its items come from the shared main pipe."""
    _is_child_datapipe = True

    def __init__(self, main_datapipe, instance_id):
        self.main_datapipe = main_datapipe
        self.instance_id = instance_id

    def __iter__(self):
        self.main_datapipe._start_child(self.instance_id)
        while True:
            try:
                item = self.main_datapipe._next_for(self.instance_id)
            except StopIteration:
                return
            yield item

    def __len__(self):
        return self.main_datapipe._child_len(self.instance_id)


class _SplitterBase:
    """The shared pass over the source: restarted when a child starts over."""

    def __init__(self, datapipe, num_instances, buffer_size):
        self.main_datapipe = datapipe
        self.num_instances = num_instances
        self.buffer_size = buffer_size
        self._source = None
        self._started = [False] * num_instances

    def _start_child(self, instance_id):
        if self._source is None or self._started[instance_id]:
            if self._source is not None and not all(self._started):
                warnings.warn("Some child DataPipes are not exhausted when __iter__ is called. We "
                              "are resetting the buffer and each child DataPipe will read from "
                              "the start again.", UserWarning)
            self._source = iter(self.main_datapipe)
            self._started = [False] * self.num_instances
            self._restart()
        self._started[instance_id] = True

    def _overflow(self, name):
        # torch's fork message has no space after the comma; demux's has one
        gap = "" if name == "ForkerIterDataPipe" else " "
        return BufferError(f"{name} buffer overflow,{gap}buffer size {self.buffer_size} is "
                           "insufficient.")


class _Forker(_SplitterBase):
    def __init__(self, datapipe, num_instances, buffer_size, copy):
        super().__init__(datapipe, num_instances, buffer_size)
        if copy is None:
            self.copy_fn = lambda x: x
        elif copy == "shallow":
            self.copy_fn = copymodule.copy
        elif copy == "deep":
            self.copy_fn = copymodule.deepcopy
        else:
            raise ValueError(f"Unknown copy method `{copy}` requested, choose one of None, "
                             "`shallow` or `deep`.")

    def _restart(self):
        self._buffer = deque()
        self._positions = [0] * self.num_instances  # next item index of each child
        self._first = 0  # index of the buffer's first item
        self._end = None

    def _next_for(self, i):
        pos = self._positions[i]
        if pos - self._first < len(self._buffer):
            item = self._buffer[pos - self._first]
        else:
            if self._end is not None:
                raise StopIteration
            try:
                item = next(self._source)
            except StopIteration:
                self._end = pos
                raise
            self._buffer.append(item)
            if 0 <= self.buffer_size < len(self._buffer):
                raise self._overflow("ForkerIterDataPipe")
        self._positions[i] = pos + 1
        # drop the items every child has read
        while self._buffer and min(self._positions) > self._first:
            self._buffer.popleft()
            self._first += 1
        return self.copy_fn(item)

    def _child_len(self, i):
        return len(self.main_datapipe)


class _Demultiplexer(_SplitterBase):
    def __init__(self, datapipe, num_instances, classifier_fn, drop_none, buffer_size):
        super().__init__(datapipe, num_instances, buffer_size)
        self.classifier_fn = classifier_fn
        self.drop_none = drop_none

    def _restart(self):
        self._buffers = [deque() for _ in range(self.num_instances)]
        self._buffered = 0

    def _next_for(self, i):
        if self._buffers[i]:
            self._buffered -= 1
            return self._buffers[i].popleft()
        for value in self._source:
            target = self.classifier_fn(value)
            if target is None and self.drop_none:
                continue
            if target is None or not 0 <= target < self.num_instances:
                raise ValueError("Output of the classification fn should be between 0 and "
                                 f"{self.num_instances - 1}. {target} is returned.")
            if target == i:
                return value
            self._buffers[target].append(value)
            self._buffered += 1
            if 0 <= self.buffer_size < self._buffered:
                raise self._overflow("DemultiplexerIterDataPipe")
        raise StopIteration

    def _child_len(self, i):
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")


@functional_datapipe("fork")
class ForkerIterDataPipe(IterDataPipe):
    def __new__(cls, datapipe, num_instances, buffer_size=1000, copy=None):
        if num_instances < 1:
            raise ValueError(f"Expected `num_instances` larger than 0, but {num_instances} is "
                             "found")
        if num_instances == 1:
            return datapipe
        main = _Forker(datapipe, num_instances, buffer_size, copy)
        return tuple(_ChildDataPipe(main, i) for i in range(num_instances))


@functional_datapipe("demux")
class DemultiplexerIterDataPipe(IterDataPipe):
    def __new__(cls, datapipe, num_instances, classifier_fn, drop_none=False, buffer_size=1000):
        if num_instances < 1:
            raise ValueError(f"Expected `num_instances` larger than 0, but {num_instances} is "
                             "found")
        main = _Demultiplexer(datapipe, num_instances, classifier_fn, drop_none, buffer_size)
        return tuple(_ChildDataPipe(main, i) for i in range(num_instances))
