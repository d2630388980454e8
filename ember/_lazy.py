"""Attributes of a package that load on first use (PEP 562), so `import ember` does not pay
for rarely used subpackages (distributions, hub's urllib/ssl, utils.data's multiprocessing...)
nor for the rarely used op families (ember/ops/__init__.py).

`lazy_attributes(package, table)` gives the package a `__getattr__` and a `__dir__`: `table`
maps a public name to `(module, attribute)`, where `attribute` None means the module itself,
or to a function that makes the value.
The first access imports the module and stores the value in the package, so later accesses are
plain attribute reads; `from ember import fft`, `import ember.special` and pickles that name
these modules work as before, since Python's import system finds the submodule by itself.

`lazy_methods(cls, table)` does the same for the methods of a class: each name of `table`
gets a `LazyMethod` on the class, which on first lookup imports its module (whose loading puts
the real function on the class in its place) and hands the real function on.

`bind_on_import(package, bind)` lets a package see each of its submodules arrive, however it
was imported (`import ember.ops.stft` in any module, a pickle, a lazy attribute): the import
system sets the submodule as an attribute of the package, which calls `bind` first."""
import importlib
import types


def lazy_attributes(package, table):
    """Install PEP 562 hooks on `package` (a module object) for the names of `table`."""
    namespace = vars(package)
    previous = namespace.get("__getattr__")
    previous_dir = namespace.get("__dir__")

    def __getattr__(name):
        found = table.get(name)
        if found is None:
            if previous is not None:
                return previous(name)
            raise AttributeError(f"module {package.__name__!r} has no attribute {name!r}")
        if callable(found):
            value = found()
        else:
            module_name, attribute = found
            value = importlib.import_module(module_name, package.__name__)
            if attribute is not None:
                value = getattr(value, attribute)
        namespace[name] = value
        return value

    def __dir__():
        earlier = previous_dir() if previous_dir is not None else ()
        return sorted(set(namespace) | set(table) | set(earlier))

    namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = __dir__


class LazyMethod:
    """Stands on a class for a method whose module is not loaded yet. It is a plain
    (non-data) descriptor, so `cls.name`, `instance.name`, `hasattr`, `inspect.signature`
    and `dir(cls)` all work; the first lookup imports the module, which replaces this object
    on the class with the real function, so later lookups never come here."""
    __slots__ = ("owner", "name", "module")

    def __init__(self, owner, name, module):
        self.owner, self.name, self.module = owner, name, module

    def __get__(self, instance, owner=None):
        module = importlib.import_module(self.module)
        value = vars(self.owner).get(self.name)
        if value is self or value is None:
            # another thread's import of the module has finished running it, and is about
            # to bind its methods: the module holds the function under the method's name
            value = getattr(module, self.name, None)
            if value is None:
                raise AttributeError(f"loading {self.module} did not define "
                                     f"{self.owner.__name__}.{self.name}")
        get = getattr(type(value), "__get__", None)
        return value if get is None else get(value, instance, owner)

    def __repr__(self):
        return f"<{self.owner.__name__}.{self.name}, loaded from {self.module} on first use>"


class LazyProperty(LazyMethod):
    """A LazyMethod for a property that a lazily loaded module puts on the class (Tensor.real):
    a data descriptor, so that an assignment (`t.real = v`) also loads the module and goes
    through the real property instead of landing in the instance."""
    __slots__ = ()

    def __set__(self, instance, value):
        importlib.import_module(self.module)
        vars(self.owner)[self.name].__set__(instance, value)


def lazy_methods(cls, table, stand_in=LazyMethod):
    """Put a `LazyMethod` (or `stand_in`) on `cls` for each name of `table` (name -> absolute
    module name) that the class does not define yet."""
    for name, module in table.items():
        if name not in vars(cls):
            setattr(cls, name, stand_in(cls, name, module))


def bind_on_import(package, bind):
    """Call `bind(name, module)` whenever a submodule `package.name` finishes loading, before
    the import system sets it as the package's attribute `name`; `bind` returns False where
    the attribute must stay as `bind` left it (an op function of the family's own name,
    `ember.ops.stft`, keeps its place over the module `ember.ops.stft`, as at eager import)."""
    prefix = package.__name__ + "."

    class BindingPackage(type(package)):
        def __setattr__(self, name, value):
            if isinstance(value, types.ModuleType) and value.__name__ == prefix + name \
                    and bind(name, value) is False:
                return
            super().__setattr__(name, value)

    package.__class__ = BindingPackage
