"""Sampler (items in a Sampler's order) and Shuffler (`shuffle`: a buffer shuffle whose seed
the DataLoader sets each epoch through graph_settings.apply_random_seed)."""
import random

from ...sampler import SequentialSampler
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ._common import _len_of

__all__ = ["SamplerIterDataPipe", "ShufflerIterDataPipe"]


class SamplerIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, sampler=SequentialSampler, sampler_args=None,
                 sampler_kwargs=None):
        if not isinstance(datapipe, IterDataPipe) or not hasattr(datapipe, "__len__"):
            raise AssertionError("Sampler class requires input datapipe implemented `__len__`")
        super().__init__()
        self.datapipe = datapipe
        self.sampler_args = () if sampler_args is None else sampler_args
        self.sampler_kwargs = {} if sampler_kwargs is None else sampler_kwargs
        self.sampler = sampler(*self.sampler_args, data_source=self.datapipe,
                               **self.sampler_kwargs)

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self):
        return _len_of(self, self.sampler)


def _draw_seed():
    """A fresh 64-bit seed from ember's default generator, as torch draws one from its own."""
    from ..... import dtypes
    from .....ops.creation import empty
    return int(empty((), dtype=dtypes.int64).random_().item())


@functional_datapipe("shuffle")
class ShufflerIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, *, buffer_size=10000, unbatch_level=0):
        super().__init__()
        if buffer_size <= 0:
            raise AssertionError("buffer_size should be larger than 0")
        self.datapipe = datapipe if unbatch_level == 0 else datapipe.unbatch(
            unbatch_level=unbatch_level)
        self.buffer_size = buffer_size
        self._buffer = []
        self._enabled = True
        self._seed = None
        self._rng = random.Random()

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self

    def __iter__(self):
        if not self._enabled:
            yield from self.datapipe
            return
        for x in self.datapipe:
            if len(self._buffer) == self.buffer_size:
                idx = self._rng.randint(0, len(self._buffer) - 1)
                val, self._buffer[idx] = self._buffer[idx], x
                yield val
            else:
                self._buffer.append(x)
        while self._buffer:
            yield self._buffer.pop(self._rng.randint(0, len(self._buffer) - 1))

    def __len__(self):
        return _len_of(self, self.datapipe)

    def reset(self):
        self._buffer = []
        if self._enabled:
            # a seed set for this epoch is used once; the next epoch draws a new one
            self._rng.seed(_draw_seed() if self._seed is None else self._seed)
            self._seed = None

    def __getstate__(self):
        return (self.datapipe, self.buffer_size, self._enabled, self._seed, self._buffer,
                self._rng.getstate(), self._valid_iterator_id, self._number_of_samples_yielded)

    def __setstate__(self, state):
        (self.datapipe, self.buffer_size, self._enabled, self._seed, self._buffer, rng_state,
         self._valid_iterator_id, self._number_of_samples_yielded) = state
        self._rng = random.Random()
        self._rng.setstate(rng_state)

    def __del__(self):
        self._buffer.clear()
