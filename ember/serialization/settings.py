"""`torch.serialization`'s process-wide settings and small helpers: the byte order assumed for
files without a byteorder record, the mmap flags of `load(mmap=True)`, whether records get a
CRC-32, `skip_data` (save the layout, not the numbers), and `SourceChangeWarning`, `mkdtemp`,
`check_module_version_greater_or_equal`."""
import contextlib
import enum
import mmap
import shutil
import sys
import tempfile
import threading
import warnings

__all__ = ["LoadEndianness", "get_default_load_endianness", "set_default_load_endianness",
           "get_default_mmap_options", "set_default_mmap_options", "get_crc32_options",
           "set_crc32_options", "skip_data", "SourceChangeWarning", "mkdtemp",
           "check_module_version_greater_or_equal"]


class LoadEndianness(enum.Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


LoadEndianness.__module__ = "torch.serialization"


class SourceChangeWarning(Warning):
    """Warned when a pickled module's class source differs from the one loaded (PyTorch's
    legacy format kept class sources)."""


class _Settings:
    load_endianness = None  # None: the machine's own order
    mmap_flags = getattr(mmap, "MAP_PRIVATE", None)
    compute_crc32 = True


SETTINGS = _Settings()


def get_default_load_endianness():
    """The byte order assumed for a checkpoint without a byteorder record (None: native)."""
    return SETTINGS.load_endianness


def set_default_load_endianness(endianness):
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    SETTINGS.load_endianness = endianness


def little_endian_default():
    """Whether a file without a byteorder record is read as little-endian."""
    order = SETTINGS.load_endianness
    if order is None or order is LoadEndianness.NATIVE:
        return sys.byteorder == "little"
    return order is LoadEndianness.LITTLE


def get_default_mmap_options():
    return SETTINGS.mmap_flags


class set_default_mmap_options:
    """`load(mmap=True)` maps storages with these flags: mmap.MAP_PRIVATE (writes stay in
    memory, the default) or mmap.MAP_SHARED (writes reach the file). A context manager that
    restores the previous flags, or a plain call that sets them."""

    def __init__(self, flags):
        if sys.platform == "win32":
            raise RuntimeError("Changing the default mmap options is currently not supported "
                               "for Windows")
        if flags != mmap.MAP_PRIVATE and flags != mmap.MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, expected "
                             f"mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = SETTINGS.mmap_flags
        SETTINGS.mmap_flags = flags

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        SETTINGS.mmap_flags = self.prev


def get_crc32_options():
    return SETTINGS.compute_crc32


def set_crc32_options(compute_crc32):
    SETTINGS.compute_crc32 = compute_crc32


class _SkipState(threading.local):
    skip_data = False
    materialize_fake_tensors = False


SKIP = _SkipState()


class skip_data:
    """Inside this context `save` writes every record but leaves the storages' bytes out
    (zeros of the right size), and `load` builds tensors without reading their bytes: to lay
    out a checkpoint first and fill its data later."""

    def __init__(self, materialize_fake_tensors=False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        self._old = (SKIP.skip_data, SKIP.materialize_fake_tensors)
        SKIP.skip_data = True
        SKIP.materialize_fake_tensors = self.materialize_fake_tensors

    def __exit__(self, *exc):
        SKIP.skip_data, SKIP.materialize_fake_tensors = self._old


@contextlib.contextmanager
def mkdtemp():
    """A temporary folder for the `with` block, removed with its contents afterwards."""
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)


def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed=True):
    """Whether `module.__version__` is at least `req_version_tuple` (compared field by field
    in the tuple's types); a version that does not parse raises, or warns and passes."""
    try:
        fields = module.__version__.split(".")
        version = tuple(type(req)(fields[i]) for i, req in enumerate(req_version_tuple))
        return version >= req_version_tuple
    except Exception as exc:
        message = (f"'{module.__name__}' module version string is malformed "
                   f"'{module.__version__}' and cannot be compared with tuple "
                   f"{req_version_tuple}")
        if error_if_malformed:
            raise RuntimeError(message) from exc
        warnings.warn(message + ", but continuing assuming that requirement is met",
                      stacklevel=2)
        return True
