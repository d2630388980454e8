"""`torch.jit.script` with eager semantics: ember compiles nothing, so a scripted module is a
`RecursiveScriptModule` that shares the original's parameters and buffers, holds scripted
children, and runs the original class's Python methods; a scripted function is a
`ScriptFunction` that calls the function. Both print, save and load as PyTorch's do.
There is no TorchScript IR: `.code` is the Python source that runs, and `.graph` says there is
no graph rather than showing an invented one.
"""
import inspect

from ..nn.modules.module import Module

_INTERNAL = frozenset({"training"})  # Module's own entries of __dict__ besides `_...` ones


class Error(Exception):
    """`torch.jit.Error`: raised by code that TorchScript would raise from (an `unused` method)."""


def _source(fn):
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""


def _no_graph(obj):
    raise AttributeError(f"'{type(obj).__name__}' object has no attribute 'graph': ember.jit runs "
                         "eagerly and builds no TorchScript graph (use .code for the source)")


class ScriptModule(Module):
    """A module TorchScript would have compiled; also the base of the legacy form
    `class M(torch.jit.ScriptModule)` with `@torch.jit.script_method` methods."""

    def __setattr__(self, name, value):
        if isinstance(value, Attribute):  # the declared type is for the compiler
            value = value.value
        super().__setattr__(name, value)

    @property
    def code(self):
        return _source(self._method_owner().forward)

    def __getattr__(self, name):
        if name in ("graph", "inlined_graph"):  # a property raising would land here anyway
            _no_graph(self)
        return super().__getattr__(name)

    @property
    def original_name(self):
        return self._method_owner().__name__

    def _method_owner(self):
        return type(self)

    def save(self, f, **kwargs):
        from ._serialization import save
        save(self, f, **kwargs)


class RecursiveScriptModule(ScriptModule):
    """A scripted `nn.Module`: same parameters and buffers (the same tensor objects), children
    scripted too, Python attributes copied; methods are the original class's."""
    _kind = "script"

    def _method_owner(self):
        return self.__dict__["_original_class"]

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        return f"original_name={self.original_name}"

    def forward(self, *args, **kwargs):
        return self._method_owner().forward(self, *args, **kwargs)

    def __getattr__(self, name):
        if name in ("graph", "inlined_graph"):
            _no_graph(self)
        try:
            return super().__getattr__(name)
        except AttributeError:
            pass
        owner = self.__dict__.get("_original_class")
        if owner is not None:
            try:
                attr = inspect.getattr_static(owner, name)
            except AttributeError:
                pass
            else:
                if getattr(attr, "_torchscript_modifier", None) == "unused":
                    return _raise_unused
                return attr.__get__(self, type(self)) if hasattr(attr, "__get__") else attr
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    # container protocols (scripted ModuleList, Sequential, ModuleDict) live on the class
    def __iter__(self):
        return self._method_owner().__iter__(self)

    def __len__(self):
        return self._method_owner().__len__(self)

    def __getitem__(self, key):
        return self._method_owner().__getitem__(self, key)

    def __contains__(self, key):
        return self._method_owner().__contains__(self, key)


class TracedModule(RecursiveScriptModule):
    """A module inside a traced one: prints under its original class name, as PyTorch's."""
    _kind = "trace"

    def _get_name(self):
        return self.original_name


class TopLevelTracedModule(TracedModule):
    pass


def _raise_unused(*args, **kwargs):
    raise Error("This Python function is annotated to be ignored and cannot be run")


def wrap_module(module, cls):
    """The script/trace wrapper (`cls`) of an eager module tree; wrapped children keep their
    own wrapper (a scripted child of a traced module stays scripted)."""
    if isinstance(module, ScriptModule):
        return module
    if type(module).forward is None and not module._modules:
        raise RuntimeError(f"Module '{type(module).__name__}' has no attribute 'forward'")
    new = Module.__new__(cls)
    d = new.__dict__
    for key, value in module.__dict__.items():
        d[key] = dict(value) if isinstance(value, dict) else value
    d["_non_persistent_buffers_set"] = set(module._non_persistent_buffers_set)
    d["_original_class"] = type(module)
    child_cls = TracedModule if issubclass(cls, TracedModule) else cls
    d["_modules"] = {name: None if child is None else wrap_module(child, child_cls)
                     for name, child in module._modules.items()}
    for key, value in list(d.items()):
        if isinstance(value, Attribute):
            d[key] = value.value
    return new


class ScriptFunction:
    """A scripted (or traced) function: calling it calls the function."""

    def __init__(self, fn):
        self._fn = fn
        self.__name__ = getattr(fn, "__name__", "forward")
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    @property
    def name(self):
        return self.__name__

    @property
    def qualified_name(self):
        return "__torch__." + self.__qualname__.replace(".<locals>", "")

    @property
    def code(self):
        return _source(self._fn)

    @property
    def graph(self):
        _no_graph(self)

    @property
    def schema(self):
        return f"{self.name}{inspect.signature(self._fn)}"

    def save(self, f, **kwargs):
        from ._serialization import save
        save(self, f, **kwargs)

    def __repr__(self):
        return f"<ember.jit.ScriptFunction object {self.qualified_name}>"


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """The scripted form of a module, function or class (see the module docstring)."""
    if isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if isinstance(obj, Module):
        return wrap_module(obj, RecursiveScriptModule)
    if inspect.isclass(obj):
        if issubclass(obj, Module):
            raise RuntimeError(f"Type '{obj}' cannot be compiled since it inherits from "
                               "nn.Module, pass an instance instead")
        return obj  # a TorchScript class: its instances are ordinary Python objects here
    if callable(obj):
        if getattr(obj, "_torchscript_modifier", None) in ("ignore", "unused"):
            return obj
        return ScriptFunction(obj)
    raise RuntimeError(f"Cannot script an object of type {type(obj).__name__}: script takes a "
                       "module, a function or a class")


def script_method(fn):
    """A method of a legacy `ScriptModule` subclass: an ordinary method here."""
    return fn


def script_if_tracing(fn):
    return fn


# ---- markers the compiler reads; in eager Python they leave the function as it is ---------
def _mark(fn, modifier):
    target = fn.fget if isinstance(fn, property) else fn
    try:
        target._torchscript_modifier = modifier
    except (AttributeError, TypeError):
        pass
    return fn


def ignore(drop=False, **kwargs):
    """`@ignore` / `@ignore(drop=True)`: leave a function to Python (drop: as `unused`)."""
    if callable(drop):
        return _mark(drop, "ignore")
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got "
                           f"{drop}")
    drop = kwargs.pop("drop_on_export", drop)
    return lambda fn: _mark(fn, "unused" if drop else "ignore")


def unused(fn):
    """`@unused`: a method a scripted module replaces by one that raises `jit.Error`."""
    return _mark(fn, "unused")


def export(fn):
    return _mark(fn, "export")


def interface(obj):
    """`@interface`: a class declaring methods other classes implement (a Python class here)."""
    if not inspect.isclass(obj):
        raise RuntimeError("interface must be applied to a class")
    obj.__torch_script_interface__ = True
    return obj


class Attribute(tuple):
    """`Attribute(value, type)`: the value of a module attribute with its declared type; a
    scripted module stores the value."""
    __slots__ = ()

    def __new__(cls, value, type):  # noqa: A002 (PyTorch's field name)
        return tuple.__new__(cls, (value, type))

    value = property(lambda self: self[0])
    type = property(lambda self: self[1])

    def __repr__(self):
        return f"Attribute(value={self.value!r}, type={self.type!r})"


def annotate(the_type, the_value):
    return the_value


def is_scripting():
    """False: ember never runs code as TorchScript (Python-only branches stay live)."""
    return False


# ---- freezing: parameters and buffers become constants of the module -----------------------
def _frozen(module, preserved):
    new = Module.__new__(type(module))
    d = new.__dict__
    d.update({k: dict(v) if isinstance(v, dict) else v for k, v in module.__dict__.items()})
    for store in ("_parameters", "_buffers"):
        for name, t in list(d[store].items()):
            if name in preserved:
                continue
            del d[store][name]
            d[name] = None if t is None else t.detach()
    d["_modules"] = {name: None if c is None else _frozen(c, preserved)
                     for name, c in module._modules.items()}
    d["_frozen"] = True
    return new


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """A copy of a scripted module in eval mode whose parameters and buffers are constants:
    no state_dict, nothing to train, the same outputs."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return _frozen(mod, set(preserved_attrs or ()))


def optimize_for_inference(mod, other_methods=None):
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if not mod.__dict__.get("_frozen"):
        mod = freeze(mod.eval(), preserved_attrs=other_methods)
    return mod
