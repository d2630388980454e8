"""Attributes of a package that load on first use (PEP 562), so `import ember` does not pay
for rarely used subpackages (distributions, hub's urllib/ssl, utils.data's multiprocessing...).

`lazy_attributes(package, table)` gives the package a `__getattr__` and a `__dir__`: `table`
maps a public name to `(module, attribute)`, where `attribute` None means the module itself.
The first access imports the module and stores the value in the package, so later accesses are
plain attribute reads; `from ember import fft`, `import ember.special` and pickles that name
these modules work as before, since Python's import system finds the submodule by itself."""
import importlib


def lazy_attributes(package, table):
    """Install PEP 562 hooks on `package` (a module object) for the names of `table`."""
    namespace = vars(package)
    previous = namespace.get("__getattr__")

    def __getattr__(name):
        found = table.get(name)
        if found is None:
            if previous is not None:
                return previous(name)
            raise AttributeError(f"module {package.__name__!r} has no attribute {name!r}")
        module_name, attribute = found
        value = importlib.import_module(module_name, package.__name__)
        if attribute is not None:
            value = getattr(value, attribute)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(table))

    namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = __dir__
