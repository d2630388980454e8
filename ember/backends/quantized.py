"""`torch.backends.quantized`: the engine quantized operators run on. ember has no quantized
kernels; the setting is kept for scripts to set and read, with the engines and default of
PyTorch's CPU build for this machine (x86: fbgemm, x86, onednn and qnnpack, default x86;
elsewhere qnnpack). An unknown name raises as in PyTorch; `supported_engines` is read-only."""
import platform
import sys
import types

# PyTorch's engine ids, by name
_IDS = {"none": 0, "fbgemm": 1, "qnnpack": 2, "onednn": 3, "x86": 4}
_CPP_NAMES = {0: "NoQEngine", 1: "FBGEMM", 2: "QNNPACK", 3: "ONEDNN", 4: "X86"}

if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86"):
    _SUPPORTED = (2, 3, 4, 1)
    _engine = 4
else:
    _SUPPORTED = (2,)
    _engine = 2


def _engine_id(name):
    if name is None or name == "":
        return 0
    if name not in _IDS:
        raise RuntimeError(f"{name} is not a valid value for quantized engine")
    return _IDS[name]


def _engine_name(engine_id):
    return {v: k for k, v in _IDS.items()}.get(engine_id, "*undefined")


class _EngineProp:
    def __get__(self, obj, objtype):
        return _engine_name(globals()["_engine"])

    def __set__(self, obj, value):
        engine_id = _engine_id(value)
        if engine_id not in _SUPPORTED:
            raise RuntimeError(f"quantized engine {_CPP_NAMES[engine_id]} is not supported")
        globals()["_engine"] = engine_id


class _SupportedEnginesProp:
    def __get__(self, obj, objtype):
        return [_engine_name(e) for e in _SUPPORTED]

    def __set__(self, obj, value):
        raise RuntimeError("Assignment not supported")


class QuantizedEngine(types.ModuleType):
    """The module's type, as PyTorch's: `engine` and `supported_engines` are properties."""

    engine = _EngineProp()
    supported_engines = _SupportedEnginesProp()


sys.modules[__name__].__class__ = QuantizedEngine
