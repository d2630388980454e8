"""`get_unsafe_globals_in_checkpoint`: the classes and functions a checkpoint's pickle names
that a weights-only load would refuse, found by reading its opcodes (nothing is unpickled)."""
import _compat_pickle
import io
import pickletools

from ._torch_paths import ember_name
from .allowlist import _allowed_global, _user_safe
from .records import PyTorchFileReader

__all__ = ["get_unsafe_globals_in_checkpoint"]

_STRINGS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING",
            "BINSTRING", "STRING"}


def _globals_in_pickle(data):
    """Every `module.name` the pickle's GLOBAL / STACK_GLOBAL opcodes name, Python 2 names
    mapped to Python 3's (as the unpickler maps them)."""
    found, memo, recent = set(), {}, []
    for op, arg, _ in pickletools.genops(io.BytesIO(data)):
        name = op.name
        if name in _STRINGS:
            recent.append(arg)
        elif name in ("BINPUT", "LONG_BINPUT", "PUT"):
            memo[arg] = recent[-1] if recent else None
        elif name == "MEMOIZE":
            memo[len(memo)] = recent[-1] if recent else None
        elif name in ("BINGET", "LONG_BINGET", "GET"):
            recent.append(memo.get(arg))
        if name == "GLOBAL":
            module, _, attr = arg.partition(" ")
        elif name == "STACK_GLOBAL" and len(recent) >= 2:
            module, attr = recent[-2], recent[-1]
        else:
            continue
        if (module, attr) in _compat_pickle.NAME_MAPPING:
            module, attr = _compat_pickle.NAME_MAPPING[(module, attr)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        found.add((module, attr))
    return found


def get_unsafe_globals_in_checkpoint(f):
    """The `module.name` strings of a checkpoint's globals that are not allowed by default
    nor by `add_safe_globals`: what `safe_globals([...])` must list to load it weights-only."""
    import os
    opened = isinstance(f, (str, os.PathLike))
    fh = open(f, "rb") if opened else f
    try:
        import zipfile
        start = fh.tell()
        if not zipfile.is_zipfile(fh):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        fh.seek(start)
        reader = PyTorchFileReader(fh)
        if reader.has_record("constants.pkl"):
            raise ValueError("Expected input to be a checkpoint returned by torch.save but got "
                             "a torchscript checkpoint")
        data = reader.get_record("data.pkl")
    finally:
        if opened:
            fh.close()
    return [f"{module}.{name}" for module, name in _globals_in_pickle(data)
            if _allowed_global(module, name) is None and (module, name) not in _user_safe
            and ember_name(module, name) not in _user_safe]
