"""`torch.jit.save` / `load` in ember's own format: a checkpoint (ember.serialization's zip)
holding one dict of plain data (numbers, strings, lists, dicts, tensors) that describes the
module tree: each module's class by name, its parameters, buffers, simple attributes and
children. It holds no code and no pickled objects, so loading it is a weights-only load.

The one step that reaches code is finding each module's class by name. `load` takes a class
only from an allowlist: ember's own modules (`ember.nn...`) and what the caller allowed with
`ember.serialization.add_safe_globals` (or `safe_globals`), and only from modules already
imported. `weights_only=False` lets it import the class's module, which runs that module's
code: pass it only for files you trust. PyTorch's TorchScript archives (code inside) are
refused with a clear error.
"""
import importlib
import io
import sys
import types
import zipfile

from .._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ..serialization import get_safe_globals
from ..serialization import load as _load_checkpoint
from ..serialization import save as _save_checkpoint
from ._script import (RecursiveScriptModule, ScriptFunction, ScriptModule, TopLevelTracedModule,
                      TracedModule, _frozen, wrap_module)

FORMAT = "ember.jit/1"
_WRAPPERS = {"script": RecursiveScriptModule, "trace": TopLevelTracedModule}
# what Module.__init__ and the wrappers keep in __dict__: rebuilt on load, never saved
_INTERNAL = frozenset(Module().__dict__) | {"_original_class", "_frozen", "_trace_examples"}
_REF = "__ember_jit_state__"  # an attribute that is one of the module's own tensors


def _plain(value, where, own):
    """`value` as data a weights-only load rebuilds (the module's own parameters and buffers
    by name, so they stay shared); else PyTorch's kind of error."""
    if isinstance(value, Tensor) and id(value) in own:
        return {_REF: own[id(value)]}
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, Tensor)):
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v, where, own) for v in value)
    if isinstance(value, dict):
        return {_plain(k, where, own): _plain(v, where, own) for k, v in value.items()}
    raise RuntimeError(f"{where}: cannot save an attribute of type '{type(value).__name__}' "
                       "(ember.jit.save keeps tensors, numbers, strings, None and lists, tuples "
                       "and dicts of them)")


def _class_name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def _describe(module, path):
    """The plain-data node of one module (recursively its children)."""
    d = module.__dict__
    cls = d.get("_original_class", type(module))
    where = f"module '{path or _class_name(cls)}'"
    own = {id(t): k for store in (module._parameters, module._buffers)
           for k, t in store.items() if t is not None}
    return {
        "class": _class_name(cls),
        "wrapper": getattr(type(module), "_kind", None) if isinstance(module, ScriptModule) else None,
        "frozen": bool(d.get("_frozen")),
        "training": module.training,
        "parameters": {k: None if p is None else (p.detach(), p.requires_grad)
                       for k, p in module._parameters.items()},
        "buffers": {k: b for k, b in module._buffers.items()},
        "non_persistent": sorted(module._non_persistent_buffers_set),
        "attributes": {k: _plain(v, f"{where}, attribute '{k}'", own) for k, v in d.items()
                       if k not in _INTERNAL},
        "modules": {k: None if c is None else _describe(c, f"{path}.{k}" if path else k)
                    for k, c in module._modules.items()},
    }


def save(m, f, _extra_files=None):
    """Writes a scripted or traced module (or function) to a path or a binary file."""
    if isinstance(m, ScriptFunction):
        payload = {"kind": "function", "function": _class_name(m._fn)}
    elif isinstance(m, ScriptModule):
        payload = {"kind": "module", "root": _describe(m, "")}
        program = _traced_program(m)
        if program is not None:
            payload["program"] = program
    else:
        raise AttributeError(f"'{type(m).__name__}' object has no attribute 'save'")
    payload["format"] = FORMAT
    payload["extra_files"] = {k: v.encode() if isinstance(v, str) else bytes(v)
                              for k, v in (_extra_files or {}).items()}
    _save_checkpoint(payload, f)


def _traced_program(m):
    """A traced module's trace as an exported program (ember.export's file, in bytes): a
    TorchScript file runs without the model's Python class, and so does this one where the
    class cannot be found on load. None where the module was not traced on examples or does
    not export (data-dependent control flow): the file then needs the class, as before."""
    examples = m.__dict__.get("_trace_examples")
    if examples is None:
        return None
    from .. import export as _export
    from ..autograd import no_grad
    # every size is read from the inputs at run time where the code reads one (as a TorchScript
    # trace records aten::size), so another batch size runs; failing that, sizes are fixed
    dynamic = tuple({d: _export.Dim(f"d{i}_{d}") for d in range(a.dim())}
                    if isinstance(a, Tensor) else None for i, a in enumerate(examples))
    for shapes in (dynamic, None):
        try:
            with no_grad():
                program = _export.export(_unwrapped(m), tuple(examples), dynamic_shapes=shapes)
            out = io.BytesIO()
            _export.save(program, out)
            return out.getvalue()
        except Exception:  # noqa: BLE001 (export refused it: try fixed sizes, or keep the
            continue       # class form alone)
    return None


def _unwrapped(module):
    """The eager module tree a script/trace wrapper stands for (sharing its tensors)."""
    if not isinstance(module, ScriptModule):
        return module
    plain = Module.__new__(module.__dict__["_original_class"])
    d = plain.__dict__
    d.update({k: v for k, v in module.__dict__.items() if k not in
              ("_original_class", "_frozen", "_trace_examples")})
    d["_modules"] = {k: None if c is None else _unwrapped(c) for k, c in module._modules.items()}
    return plain


def _is_torchscript_archive(f):
    try:
        pos = f.tell() if hasattr(f, "tell") else None
        with zipfile.ZipFile(f) as z:
            names = z.namelist()
        if pos is not None:
            f.seek(pos)
    except (zipfile.BadZipFile, OSError, ValueError):
        return False
    return any(n.endswith("/constants.pkl") or "/code/" in n for n in names)


class _NotAllowed(RuntimeError):
    """A class or function the load may not take (PyTorch's type: RuntimeError)."""


def _resolve(name, weights_only):
    """The class or function called `name`, from the allowlist (or imported, if the caller
    said weights_only=False)."""
    allowed = {_class_name(g) if not isinstance(g, tuple) else g[1]: g if not isinstance(g, tuple) else g[0]
               for g in get_safe_globals()}
    if name in allowed:
        return allowed[name]
    module_name, _, qualname = name.rpartition(".")
    while module_name and module_name not in sys.modules and weights_only:
        module_name, _, head = module_name.rpartition(".")  # a nested qualname: Outer.Inner
        qualname = f"{head}.{qualname}"
    obj = None
    if module_name and (not weights_only or module_name.split(".")[:2] == ["ember", "nn"]):
        try:
            obj = importlib.import_module(module_name)
            for part in qualname.split("."):
                obj = getattr(obj, part)
                # weights-only: the name must lead to ember's own class or function, not
                # through a module ember.nn imported (`ember.nn.modules.module.os.system`)
                if weights_only and isinstance(obj, types.ModuleType):
                    obj = None
                    break
        except (ImportError, AttributeError):
            obj = None
        if weights_only and obj is not None and \
                not str(getattr(obj, "__module__", "")).startswith("ember."):
            obj = None
    if obj is None:
        hint = ("" if not weights_only else
                f" Allow it with ember.serialization.add_safe_globals([{qualname}]) (or the "
                "safe_globals context manager), or pass weights_only=False if you trust the "
                "file: that imports the class's module, which runs its code.")
        raise _NotAllowed(f"ember.jit.load: '{name}' is not an allowed class or function.{hint}")
    return obj


def _unplain(value, own):
    if isinstance(value, dict):
        if set(value) == {_REF}:
            return own[value[_REF]]
        return {k: _unplain(v, own) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_unplain(v, own) for v in value)
    return value


def _rebuild(node, weights_only):
    cls = _resolve(node["class"], weights_only)
    if not (isinstance(cls, type) and issubclass(cls, Module)):
        raise RuntimeError(f"ember.jit.load: '{node['class']}' is not an nn.Module class")
    module = Module.__new__(cls)
    Module.__init__(module)
    d = module.__dict__
    d["training"] = node["training"]
    for k, entry in node["parameters"].items():
        module._parameters[k] = None if entry is None else Parameter(entry[0], entry[1])
    module._buffers.update(node["buffers"])
    own = {**module._parameters, **module._buffers}
    for k, v in node["attributes"].items():
        d[k] = _unplain(v, own)
    module._non_persistent_buffers_set.update(node["non_persistent"])
    for k, child in node["modules"].items():
        module._modules[k] = None if child is None else _rebuild(child, weights_only)
    wrapper = node["wrapper"]
    if wrapper is not None and not issubclass(cls, ScriptModule):
        module = wrap_module(module, _WRAPPERS[wrapper])
        if wrapper == "trace":  # children of a traced module print as TracedModule
            for k, c in module._modules.items():
                if type(c) is TopLevelTracedModule:
                    c.__class__ = TracedModule
    if node["frozen"]:
        module = _frozen(module, set())
    return module


def load(f, map_location=None, _extra_files=None, *, weights_only=True):
    """Reads what `save` wrote. `_extra_files` ({name: ''}) is filled with the saved files."""
    if isinstance(f, (bytes, bytearray)):
        f = io.BytesIO(f)
    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        with open(f, "rb") as fh:
            return load(fh, map_location, _extra_files, weights_only=weights_only)
    if _is_torchscript_archive(f):
        raise RuntimeError("ember.jit.load: this is a TorchScript archive (compiled code); ember "
                           "runs models eagerly and loads only what ember.jit.save wrote. Load "
                           "the weights with torch.load / ember.load of a state_dict instead.")
    payload = _load_checkpoint(f, map_location=map_location, weights_only=weights_only)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise RuntimeError("ember.jit.load: not a file written by ember.jit.save")
    if _extra_files is not None:
        for k in list(_extra_files):
            if k in payload["extra_files"]:
                _extra_files[k] = payload["extra_files"][k]
    if payload["kind"] == "function":
        fn = _resolve(payload["function"], weights_only)
        return fn if isinstance(fn, ScriptFunction) else ScriptFunction(fn)
    try:
        return _rebuild(payload["root"], weights_only)
    except _NotAllowed:
        if "program" not in payload:
            raise
    # the model's class is not at hand: the trace it was saved with runs instead (as a
    # TorchScript file's code does), reading only ember's public functions
    from .. import export as _export
    module = _export.load(io.BytesIO(payload["program"])).module()
    module.train(payload["root"]["training"])
    return module
