"""Writes `_cupy_api.py`: what CuPy's Python API is, read from an installed CuPy (importing
CuPy needs no GPU). The strict stand-in exposes exactly these names, with these signatures and
ufunc loops, so code that works on it uses nothing a real CuPy lacks.

    python -m venv /tmp/cupyvenv && /tmp/cupyvenv/bin/pip install numpy ml_dtypes cupy-cuda12x==14.2.0
    /tmp/cupyvenv/bin/python -P tests/_strict_cupy/list_cupy_names.py \
        > tests/_strict_cupy/_cupy_api.py
(-P: run from this folder, its array.py would shadow the standard library's `array`)
"""
import importlib
import inspect
import pprint

import cupy

MODULES = ["cupy", "cupy.random", "cupy.linalg", "cupy.fft", "cupy.cuda", "cupy.cuda.runtime",
           "cupyx", "cupyx.scipy", "cupyx.scipy.special", "cupyx.scipy.sparse", "cupyx.scipy.linalg",
           "cupyx.scipy.ndimage", "cupy._core._routines_linalg"]
CLASSES = {"ndarray": cupy.ndarray, "random.Generator": cupy.random.Generator,
           "cuda.Device": cupy.cuda.Device, "cuda.Stream": cupy.cuda.Stream,
           "cuda.Event": cupy.cuda.Event, "cuda.MemoryPointer": cupy.cuda.MemoryPointer}


def signature(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return None


def kind(obj):
    if isinstance(obj, cupy.ufunc):
        return "ufunc"
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "value"


def main():
    modules = {}
    for name in MODULES:
        try:
            mod = importlib.import_module(name)
        except ImportError:  # needs a CUDA library (cuBLAS ...) that only a GPU machine has
            continue
        entries = {}
        for attr in dir(mod):
            if attr.startswith("_"):
                continue
            try:
                obj = getattr(mod, attr)
            except (ImportError, AttributeError):  # a lazily loaded CUDA library
                continue
            k = kind(obj)
            entry = {"kind": k}
            if k == "function" and name != "cupy.cuda.runtime":
                entry["signature"] = signature(obj)
            if k == "ufunc":
                entry["types"] = list(obj.types)
                entry["nin"] = obj.nin
            entries[attr] = entry
        modules[name] = entries
    classes = {name: sorted(a for a in dir(cls) if not a.startswith("__")
                            or a in ("__array__", "__cuda_array_interface__", "__dlpack__",
                                     "__dlpack_device__", "__float__", "__int__", "__bool__",
                                     "__complex__", "__len__", "__iter__", "__index__"))
               for name, cls in CLASSES.items()}
    flags = sorted(a for a in dir(cupy._core.flags.Flags) if not a.startswith("_"))
    print(f'"""CuPy {cupy.__version__}\'s Python API, written by list_cupy_names.py (do not edit)."""')
    print("MODULES = " + pprint.pformat(modules, width=100, compact=True))
    print("CLASSES = " + pprint.pformat(classes, width=100, compact=True))
    generator = {n: signature(getattr(cupy.random.Generator, n))
                 for n in classes["random.Generator"] if not n.startswith("_")}
    print("GENERATOR_METHODS = " + pprint.pformat(generator, width=100, compact=True))
    print("FLAGS = " + pprint.pformat(flags, width=100, compact=True))


main()
