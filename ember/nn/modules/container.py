"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
import operator
import warnings
from collections import OrderedDict
from itertools import islice

from ..parameter import Parameter
from .module import Module, _addindent

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


class Container(Module):
    """PyTorch's oldest container, deprecated there: a Module whose keyword arguments become its
    submodules."""

    def __init__(self, **kwargs):
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented "
                      "in `nn.Module`. Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


def _index(idx, n):
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


class Sequential(Module):
    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self._modules))]

    def __setitem__(self, idx, module):
        key = list(self._modules.keys())[_index(idx, len(self._modules))]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules.keys())
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys))]]):
            delattr(self, key)
        # keep keys 0..n-1, as PyTorch does
        items = list(self._modules.items())
        self._modules.clear()
        for i, (_, m) in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return Sequential(*self, *other)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential):
        for layer in sequential:
            self.append(layer)
        return self

    def insert(self, index, module):
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index %= n + 1
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self)))]

    def __setitem__(self, idx, module):
        setattr(self, str(_index(idx, len(self))), module)

    def __delitem__(self, idx):
        keys = list(self._modules.keys())
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys))]]):
            del self._modules[key]
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def insert(self, index, module):
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        _check_iterable(modules, "ModuleList")
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def __repr__(self):
        """Runs of children with equal reprs print once, as `(0-1): 2 x Linear(...)`."""
        if not self._modules:
            return self._get_name() + "()"
        reprs = [repr(m) for m in self._modules.values()]
        lines, start = [], 0
        for end in range(1, len(reprs) + 1):
            if end == len(reprs) or reprs[end] != reprs[start]:
                body = _addindent(reprs[start], 2)
                count = end - start
                lines.append(f"({start}): {body}" if count == 1 else
                             f"({start}-{end - 1}): {count} x {body}")
                start = end
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else _pairs(modules, "ModuleDict")
        for key, module in items:
            self[key] = module


def _check_iterable(values, kind):
    if not hasattr(values, "__iter__"):
        raise TypeError(f"{kind}.extend should be called with an iterable, but got "
                        f"{type(values).__name__}")


def _pairs(entries, kind, who=None):
    """The (key, value) pairs of a sequence given to ModuleDict/ParameterDict.update, each
    checked as PyTorch checks it (`who`: the name its first message gives the class)."""
    if not hasattr(entries, "__iter__"):
        raise TypeError(f"{who or kind}.update should be called with an iterable of key/value "
                        f"pairs, but got {type(entries).__name__}")
    for i, pair in enumerate(entries):
        if not hasattr(pair, "__iter__"):
            raise TypeError(f"{kind} update sequence element #{i} should be Iterable; "
                            f"is{type(pair).__name__}")
        if len(pair) != 2:
            raise ValueError(f"{kind} update sequence element #{i} has length {len(pair)}; 2 is "
                             "required")
        yield pair[0], pair[1]


def _entries_repr(entries, type_text):
    """ParameterList/ParameterDict's lines: `(key): Parameter containing: [<type> of size
    2x3]` (a device other than the CPU named after the size), or the type of a non-tensor."""
    lines = []
    for key, value in entries:
        if hasattr(value, "_array"):
            size = "x".join(str(n) for n in value.size())
            where = f" ({value.device})" if value.device.type != "cpu" else ""
            kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
            lines.append(f"  ({key}): {kind} containing: [{type_text(value)} of size "
                         f"{size}{where}]")
        else:
            lines.append(f"  ({key}): Object of type: {type(value).__name__}")
    return "\n".join(lines)


class ParameterList(Module):
    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self)[idx])
        return getattr(self, str(_index(idx, self._size)))

    def __setitem__(self, idx, param):
        idx = _index(idx, self._size)
        if not isinstance(param, Parameter) and hasattr(param, "_array"):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(self._size))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def append(self, value):
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        _check_iterable(values, "ParameterList")
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return _entries_repr(enumerate(self), lambda p: str(p.dtype))


def _check_key(key):
    if not isinstance(key, str):
        raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is not a "
                        f"string (type is '{type(key).__name__}'). Open an issue on github if you "
                        "need non-string keys.")


class ParameterDict(Module):
    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        _check_key(key)
        return getattr(self, key)

    def __setitem__(self, key, value):
        _check_key(key)
        self._keys[key] = None
        if not isinstance(value, Parameter) and hasattr(value, "_array"):
            value = Parameter(value)
        setattr(self, key, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def get(self, key, default=None):
        return self[key] if key in self else default

    def update(self, parameters):
        # as PyTorch: a plain mapping's entries go in in key order, ordered ones as they are
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = parameters.items()
        elif hasattr(parameters, "items"):
            items = sorted(parameters.items())
        else:
            items = _pairs(parameters, "ParameterDict", "ParametersDict")  # PyTorch's spelling
        for k, v in items:
            self[k] = v

    def extra_repr(self):
        from ..._environment import typename
        return _entries_repr(self.items(), typename)
