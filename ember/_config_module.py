"""PyTorch's config modules (`torch._dynamo.config`, `torch._inductor.config`): the settings
scripts set, with PyTorch's defaults. ember compiles nothing (compiled code runs eagerly), so
they change no behaviour; an unknown name is refused as PyTorch refuses it, so a misspelt
setting does not pass silently. `patch` changes some for a block or a decorated function."""
import contextlib
import sys
import types


def _public(name):
    return name.replace("ember.", "torch.", 1)


class _Settings:
    """Settings under one name (`config.triton`), taking only the names it holds."""

    def __init__(self, path, defaults):
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_names", frozenset(defaults))
        for name, value in defaults.items():
            object.__setattr__(self, name, _Settings(f"{path}.{name}", value)
                               if isinstance(value, dict) else value)

    def __setattr__(self, name, value):
        if name not in self._names:
            raise AttributeError(f"{_public(self._path)}.{name} does not exist")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return f"<settings {_public(self._path)}>"


class _ConfigModule(types.ModuleType):
    def __setattr__(self, name, value):
        if not name.startswith("_") and name not in self._defaults:
            raise AttributeError(f"{_public(self.__name__)}.{name} does not exist")
        super().__setattr__(name, value)


def _leaf(module, dotted):
    """(owner, name) of a setting named `dotted` ("triton.cudagraphs"), refused if unknown."""
    owner, *path, name = [module] + dotted.split(".")
    for part in path:
        owner = getattr(owner, part, None)
        if not isinstance(owner, _Settings):
            raise AttributeError(f"{_public(module.__name__)}.{dotted} does not exist")
    known = owner._names if isinstance(owner, _Settings) else owner._defaults
    if name not in known:
        raise AttributeError(f"{_public(module.__name__)}.{dotted} does not exist")
    return owner, name


def install(module_name, defaults):
    """Make the module `module_name` a config module holding `defaults` (a dict value is a
    group of settings: `config.triton.cudagraphs`), with `patch` and `get_config_copy`."""
    module = sys.modules[module_name]
    module._defaults = defaults

    def patch(arg=None, value=None, **changes):
        """Settings changed for a `with` block or a decorated function (`patch("name",
        value)`, `patch(name=value)`, `patch({"name": value})`; dotted names reach groups),
        put back afterwards."""
        if isinstance(arg, str):
            changes[arg] = value
        elif isinstance(arg, dict):
            changes.update(arg)
        places = {dotted: _leaf(module, dotted) for dotted in changes}

        class _Patch(contextlib.ContextDecorator):
            def __enter__(self):
                self.saved = {d: getattr(*places[d]) for d in changes}
                for dotted, v in changes.items():
                    setattr(*places[dotted], v)

            def __exit__(self, *exc):
                for dotted, v in self.saved.items():
                    setattr(*places[dotted], v)
        return _Patch()

    def get_config_copy():
        def copy(owner, names):
            return {n: copy(getattr(owner, n), getattr(owner, n)._names)
                    if isinstance(getattr(owner, n), _Settings) else getattr(owner, n)
                    for n in names}
        return copy(module, defaults)

    for name, value in defaults.items():
        setattr(module, name, _Settings(f"{module_name}.{name}", value)
                if isinstance(value, dict) else value)
    module.patch, module.get_config_copy = patch, get_config_copy
    module.__class__ = _ConfigModule
