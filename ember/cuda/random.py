"""`torch.cuda.random`: the CUDA devices' default generators (one per device, on CuPy's bit
generator), seeded and saved as PyTorch's: the current device's, or all of them. Seeding
needs no GPU: the seed is kept for the device's first draw, as PyTorch queues it until CUDA
starts."""
import os

from .. import _state, random as _random
from ..device import device as _device

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed"]


def _cuda_device(device="cuda"):
    """`device` ("cuda", "cuda:1", 1, a device) as a cuda device with an index."""
    if isinstance(device, int):
        return _device("cuda", device)
    dev = _device(device) if isinstance(device, str) else device
    return _device("cuda", _state.cuda_device if dev.index is None else dev.index)


def _generator(device="cuda"):
    return _random.generator_for(_cuda_device(device))


def _device_count():
    from . import device_count
    return device_count()


def _require_cuda():
    from . import is_available
    if not is_available():  # PyTorch's lazy CUDA start, on a CPU-only build
        raise AssertionError("Torch not compiled with CUDA enabled")


def get_rng_state(device="cuda"):
    """The state of `device`'s generator, as a uint8 tensor."""
    _require_cuda()
    return _generator(device).get_state()


def get_rng_state_all():
    return [get_rng_state(i) for i in range(_device_count())]


def set_rng_state(new_state, device="cuda"):
    from . import is_available
    if not is_available():  # PyTorch queues it for CUDA's start, which never comes
        return
    _generator(device).set_state(new_state)


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed):
    """Seed the current device's generator."""
    _generator().manual_seed(int(seed))


def manual_seed_all(seed):
    for i in range(max(_device_count(), 1)):
        _generator(i).manual_seed(int(seed))


def seed():
    """Seed the current device's generator with a random number."""
    _generator().seed()


def seed_all():
    """Seed every device's generator with one random number."""
    random_seed = int.from_bytes(os.urandom(8), "little") >> 1
    manual_seed_all(random_seed)


def initial_seed():
    """The current device's generator's seed."""
    _require_cuda()
    return _generator().initial_seed()
