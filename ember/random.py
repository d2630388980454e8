"""Random-number generators: an `ember.Generator` per device on the backend's bit generator.

Same seed, same numbers (within ember; PyTorch's own streams are not reproduced).
`manual_seed` seeds the CPU generator and every CUDA generator, made or yet to be made.
"""
import os
import pickle

import numpy as np

from .device import backend_of, canonical

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng"]

_DEFAULT_SEED = 67280421310721  # PyTorch's initial seed, so `initial_seed()` reads the same


class Generator:
    def __init__(self, device="cpu"):
        self.device = canonical(device)
        self._initial = _DEFAULT_SEED
        self._rng = None  # made on first draw: seeding is cheap, drawing creates the stream

    @property
    def rng(self):
        """The backend's generator (numpy.random.Generator, or CuPy's) that ops draw from."""
        if self._rng is None:
            xp = backend_of(self.device).xp
            self._rng = xp.random.default_rng(self._initial)
        return self._rng

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < -(1 << 63) or seed >= (1 << 64):
            raise RuntimeError(f"Overflow when unpacking long")
        self._initial = seed & ((1 << 64) - 1)
        self._rng = None
        return self

    def seed(self):
        self.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        return self._initial

    def initial_seed(self):
        return self._initial

    def get_state(self):
        """The generator's state as a uint8 tensor, as PyTorch returns it."""
        from ._tensor import Tensor
        state = (self._initial, self.rng.bit_generator.state)
        return Tensor._wrap(np.frombuffer(pickle.dumps(state), dtype=np.uint8).copy())

    def set_state(self, new_state):
        raw = bytes(new_state.numpy().tobytes())
        initial, bit_state = pickle.loads(raw)  # a state this module made: plain dicts and ints
        self._initial = initial
        self.rng.bit_generator.state = bit_state
        return self

    def __repr__(self):
        return f"<ember.Generator object at {hex(id(self))}>"


default_generator = Generator("cpu")
_cuda_generators = {}


def generator_for(dev, generator=None):
    """The generator an op on `dev` draws from: the one given, else the device's default."""
    if generator is not None:
        if generator.device.type != dev.type:
            raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found "
                               f"'{generator.device.type}'")
        return generator
    if dev.type == "cpu":
        return default_generator
    gen = _cuda_generators.get(dev)
    if gen is None:
        gen = _cuda_generators[dev] = Generator(dev)
        gen.manual_seed(default_generator.initial_seed())
    return gen


def manual_seed(seed):
    default_generator.manual_seed(seed)
    for gen in _cuda_generators.values():
        gen.manual_seed(seed)
    return default_generator


def seed():
    s = default_generator.seed()
    for gen in _cuda_generators.values():
        gen.manual_seed(s)
    return s


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


class fork_rng:
    """Context manager: random draws inside it leave the default generators as they were."""

    def __init__(self, devices=None, enabled=True):
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            self._saved = [(g, g._initial, g._rng and g._rng.bit_generator.state)
                           for g in [default_generator, *_cuda_generators.values()]]

    def __exit__(self, *exc):
        if self.enabled:
            for g, initial, state in self._saved:
                g._initial, g._rng = initial, None
                if state is not None:
                    g.rng.bit_generator.state = state
