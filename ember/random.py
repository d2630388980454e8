"""Random-number generators: an `ember.Generator` per device on the backend's bit generator.

Same seed, same numbers. On the CPU the bit generator is PyTorch's: the 32-bit Mersenne
Twister seeded with the seed's low 32 bits (NumPy's MT19937 seeded as the C++ std::mt19937
is), and the uniform, integer and permutation samplers (ops/random_ops.py) turn its words
into numbers as PyTorch's CPU kernels do, so `torch.manual_seed(0); torch.rand(3)`, a
layer's initial weights and a DataLoader's shuffled order are PyTorch's. The other samplers
(normal, bernoulli, dropout ...) draw from the same stream by NumPy's methods: reproducible,
but not PyTorch's numbers. A CUDA generator is CuPy's.
`manual_seed` seeds the CPU generator and every CUDA generator, made or yet to be made.
"""
import contextlib
import os
import pickle
import sys

import numpy as np

from ._frozen import Frozen, fill
from .device import backend_of, canonical, no_aten_cuda

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng", "thread_safe_generator"]

_DEFAULT_SEED = 67280421310721  # PyTorch's initial seed, so `initial_seed()` reads the same


class Generator(Frozen):
    """A stream of random numbers on one device. Like PyTorch's, it takes no attributes of
    its own (a user's subclass may)."""

    __slots__ = ("_device", "_initial", "_rng")
    _torch_name = "torch._C.Generator"

    def __init__(self, device="cpu"):
        device = canonical(device)
        if device.type == "cuda" and not backend_of(device).is_available():
            raise RuntimeError(no_aten_cuda("Cannot get CUDA generator"))  # a CPU-only build's
        self._start(device)

    @classmethod
    def _on(cls, device):
        """A device's default generator, made without the check: `torch.cuda.manual_seed`
        seeds the CUDA ones even where there is no CUDA (PyTorch queues the call)."""
        gen = cls.__new__(cls)
        gen._start(canonical(device))
        return gen

    def _start(self, device):
        # the backend's generator is made on first draw: seeding is cheap, drawing makes it
        fill(self, _device=device, _initial=_DEFAULT_SEED, _rng=None)

    def __reduce__(self):  # the device, then the stream's position (and a subclass's fields)
        return (type(self), (self._device,),
                (self._initial, self._rng, getattr(self, "__dict__", None)))

    def __setstate__(self, state):
        initial, rng, fields = state
        fill(self, _initial=initial, _rng=rng, **(fields or {}))

    @property
    def device(self):
        return self._device

    @property
    def rng(self):
        """The backend's generator (numpy.random.Generator on PyTorch's Mersenne Twister, or
        CuPy's) that ops draw from."""
        if self._rng is None:
            fill(self, _rng=_new_rng(self.device, self._initial))
        return self._rng

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < -(1 << 63) or seed >= (1 << 64):
            raise ValueError("Overflow when unpacking long long")
        # a negative seed wraps, as in PyTorch
        fill(self, _initial=seed & ((1 << 64) - 1), _rng=None)
        return self

    def seed(self):
        self.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        return self._initial

    def initial_seed(self):
        return self._initial

    def get_state(self):
        """The generator's state as a uint8 tensor, as PyTorch returns it: on the CPU, PyTorch's
        5056 bytes (so states cross between the two); elsewhere the backend's, pickled."""
        from ._tensor import Tensor
        if isinstance(self.rng.bit_generator, np.random.MT19937):
            raw = _cpu_state_bytes(self._initial, self.rng)
        else:
            raw = pickle.dumps((self._initial, _capture(self.rng)))
        return Tensor._wrap(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state):
        from ._tensor import Tensor
        if not isinstance(new_state, Tensor) or new_state.dtype.name != "uint8":
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = bytes(new_state._host().tobytes())
        cpu = isinstance(self.rng.bit_generator, np.random.MT19937)
        if cpu and len(raw) == _CPU_STATE.itemsize:
            initial, rng = _cpu_state_from(raw)
        else:
            try:
                # Only a state this module made is accepted (on the CPU, the pickled form
                # ember wrote before it took PyTorch's layout, as in older checkpoints): a
                # tuple of ints, dicts and bytes, taken into a new generator, so a bad one
                # leaves this one as it was.
                initial, bit_state = _StateUnpickler(raw).load()
                rng = _new_rng(self.device, initial)
                _restore(rng, bit_state)
            except Exception:
                if cpu:
                    _cpu_state_from(raw)  # PyTorch's error for a state of another size
                raise RuntimeError("Invalid mt19937 state") from None
        fill(self, _initial=initial, _rng=rng)
        return self

    def graphsafe_get_state(self):
        return self.get_state()

    def graphsafe_set_state(self, state):
        return self.set_state(state)

    def clone_state(self):
        """A new generator on the same device, at this one's position in the stream."""
        twin = Generator._on(self.device)
        twin.set_state(self.get_state())
        return twin

    def get_offset(self):
        # Only PyTorch's counter-based (Philox, CUDA) generators have an offset.
        raise RuntimeError(f"{self.device.type.upper()} Generator does not use offset")

    def set_offset(self, offset):
        raise RuntimeError(f"{self.device.type.upper()} Generator does not use offset")

    def __repr__(self):
        return f"<torch._C.Generator object at {hex(id(self))}>"


_TORCH_STREAM = []


def torch_stream_class():
    """TorchStream: NumPy's Generator on PyTorch's Twister, holding the second Box-Muller value
    PyTorch's CPU generator keeps between small normal draws (ops/_torch_stream.py). Made on
    first use, so that `import ember` does not load numpy.random (15 ms)."""
    if not _TORCH_STREAM:
        class TorchStream(np.random.Generator):
            normal_cache = None

            def __reduce__(self):  # NumPy's own reduce would come back as a plain Generator
                return (_torch_stream_from, (self.bit_generator, self.normal_cache))
        _TORCH_STREAM.append(TorchStream)
    return _TORCH_STREAM[0]


def _torch_stream_from(bits, normal_cache):
    rng = torch_stream_class()(bits)
    rng.normal_cache = normal_cache
    return rng


def _new_rng(device, seed):
    xp = backend_of(device).xp
    return torch_stream_class()(torch_mt19937(seed)) if xp is np else \
        xp.random.default_rng(seed)


def torch_mt19937(seed):
    """NumPy's MT19937 in the state PyTorch's CPU generator has after `manual_seed(seed)`:
    std::mt19937 seeded with the seed's low 32 bits (NumPy's legacy seeding is that one)."""
    bits = np.random.MT19937()
    bits._legacy_seeding(int(seed) & 0xFFFFFFFF)
    return bits


def _capture(rng):
    """A picklable snapshot of a backend generator's stream position (plain data only: the
    Twister's 624 words as bytes)."""
    bit = rng.bit_generator
    if isinstance(bit, np.random.MT19937):
        state = bit.state["state"]
        return ("MT19937", state["key"].astype("<u4").tobytes(), int(state["pos"]),
                getattr(rng, "normal_cache", None))
    if isinstance(bit, np.random.BitGenerator):
        return bit.state
    return bytes(bit._state.get().tobytes())  # CuPy: the cuRAND states, copied to the host


def _restore(rng, state):
    bit = rng.bit_generator
    if isinstance(bit, np.random.MT19937):
        name, key, pos, cache = state
        if name != "MT19937" or len(key) != 624 * 4 or not 0 <= pos <= 624 or \
                not (cache is None or isinstance(cache, float)):
            raise ValueError("not a Mersenne Twister state")
        bit.state = {"bit_generator": "MT19937",
                     "state": {"key": np.frombuffer(key, "<u4").astype(np.uint32), "pos": pos}}
        rng.normal_cache = cache
    elif isinstance(bit, np.random.BitGenerator):
        bit.state = state
    else:
        bit._state.set(np.frombuffer(state, dtype=np.int8))  # CuPy: back into device memory


# PyTorch's CPU generator state: the initial seed (u64), `left` and `seeded` (i32), `next`
# (u64), the Twister's 624 words (each as u64), three doubles (the second is the cached
# Box-Muller value), its valid flag (i32, then 4 bytes of padding), a cached float and its flag
# (then 3 bytes of padding). `left` counts down to the next twist: 625 - NumPy's `pos`.
_CPU_STATE = np.dtype([("seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"),
                       ("words", "<u8", 624), ("normal_x", "<f8"), ("normal_y", "<f8"),
                       ("normal_rho", "<f8"), ("normal_valid", "<i4"), ("_pad", "V4"),
                       ("float_normal", "<f4"), ("float_valid", "u1"), ("_pad2", "V3")])


def _cpu_state_bytes(initial, rng):
    mt = rng.bit_generator.state["state"]
    key, pos = mt["key"], int(mt["pos"])
    # just seeded (nothing drawn yet): PyTorch's `next` is 0 until the first twist
    fresh = pos == 624 and np.array_equal(key, torch_mt19937(initial).state["state"]["key"])
    state = np.zeros((), _CPU_STATE)
    state["seed"], state["left"], state["seeded"] = initial, 625 - pos, 1
    state["next"], state["words"] = 0 if fresh else pos, key
    cache = getattr(rng, "normal_cache", None)
    if cache is not None:
        state["normal_y"], state["normal_valid"] = cache, 1
    return state.tobytes()


def _cpu_state_from(raw):
    """(initial seed, generator) from PyTorch's CPU state bytes; PyTorch's errors for others.
    (A cached float normal has no place in ember's stream and is dropped.)"""
    if len(raw) != _CPU_STATE.itemsize:
        raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_CPU_STATE.itemsize} but "
                           f"found the input RNG state size to be {len(raw)}")
    state = np.frombuffer(raw, _CPU_STATE)[0]
    left, nxt = int(state["left"]), int(state["next"])
    if not state["seeded"] or not 0 < left <= 624 or nxt > 624:
        raise RuntimeError("Invalid mt19937 state")
    initial = int(state["seed"])
    rng = torch_stream_class()(torch_mt19937(initial))
    rng.bit_generator.state = {"bit_generator": "MT19937", "state": {
        "key": (state["words"] & 0xFFFFFFFF).astype(np.uint32), "pos": 625 - left}}
    rng.normal_cache = float(state["normal_y"]) if state["normal_valid"] else None
    return initial, rng


class _StateUnpickler(pickle.Unpickler):
    """Loads generator states: plain containers only, never a class from the data."""

    def __init__(self, raw):
        import io
        super().__init__(io.BytesIO(raw))

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"unexpected class {module}.{name} in an RNG state")


default_generator = Generator("cpu")
_cuda_generators = {}
_meta_generator = Generator("meta")


def generator_for(dev, generator=None):
    """The generator an op on `dev` draws from: the one given, else the device's default."""
    if generator is not None:
        if generator.device.type != dev.type:
            raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found "
                               f"'{generator.device.type}'")
        return generator
    if dev.type == "cpu":
        return default_generator
    if dev.type == "meta":  # draws shapes only: no state for seeding or forking to keep
        return _meta_generator
    gen = _cuda_generators.get(dev)
    if gen is None:
        gen = _cuda_generators[dev] = Generator._on(dev)
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


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """Random draws inside the block leave the default generators as they were (also a
    decorator, as PyTorch's is)."""
    if not enabled:
        yield
        return
    # each generator's own backend object is put back with its state (not one made anew,
    # which a device whose backend has gone, as the CuPy stand-in's in the tests, cannot)
    saved = [(g, g._initial, g._rng, None if g._rng is None else _capture(g._rng))
             for g in [default_generator, *_cuda_generators.values()]]
    try:
        yield
    finally:
        for g, initial, rng, state in saved:
            fill(g, _initial=initial, _rng=rng)
            if state is not None:
                _restore(rng, state)


def thread_safe_generator():
    """In a DataLoader worker that is a thread: that worker's own Generator; elsewhere (the
    main process, a worker process) None, which makes the random ops use the default one."""
    # read through sys.modules: the loader lives floors above, and when it was never
    # imported no worker can be running
    worker = sys.modules.get("ember.utils.data._utils.worker")
    info = worker.get_worker_info() if worker is not None else None
    if info is not None and info.worker_method == "thread" and info.rng is not None:
        return info.rng.torch_generator
    return None
