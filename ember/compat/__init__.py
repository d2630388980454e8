"""Run PyTorch scripts unchanged: `ember.compat.install()` makes `import torch`,
`import torchvision` and every deeper path (`torch.nn.modules.linear`, `torch.optim.lr_scheduler`,
`torchvision.transforms` ...) resolve to ember's modules; `python -m ember.compat script.py
args...` runs a script that way. Pickled models name those paths too, so they load.

`torch` IS the module `ember` (one object: classes, isinstance checks and state are shared),
so one attribute cannot answer `ember.__version__` with ember's release and
`torch.__version__` with PyTorch's. While compat is installed the program is PyTorch code, and
code such as `if torch.__version__ >= "2.0":` must take PyTorch 2.13's branch: install() sets
`__version__` to the PyTorch (torchvision) release whose API ember follows, with ember's
release as the local label ("2.13.0+ember.0.1.0", "0.28.0+ember.0.1.0"); uninstall() gives
back ember's own. A proxy module answering differently would break `torch is ember`."""
import importlib
import importlib.abc
import importlib.util
import sys
import warnings

__all__ = ["install", "uninstall", "is_installed", "ALIASES"]

ALIASES = {"torch": "ember", "torchvision": "ember.vision"}


def _target(fullname):
    for alias, real in ALIASES.items():
        if fullname == alias or fullname.startswith(alias + "."):
            return real + fullname[len(alias):]
    return None


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `torch.x.y` as the module `ember.x.y`: the very same module object, so classes,
    isinstance checks and module state are shared whichever name imported them."""

    def find_spec(self, fullname, path=None, target=None):
        real = _target(fullname)
        if real is None:
            return None
        try:
            if importlib.util.find_spec(real) is None:
                return None
        except ModuleNotFoundError:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module(_target(spec.name))
        self._saved = (module.__spec__, getattr(module, "__loader__", None))
        return module

    def exec_module(self, module):
        # importlib stamped the alias's spec on the module: give it back its own
        module.__spec__, module.__loader__ = self._saved


_finder = _AliasFinder()


def install():
    """From now on `import torch` (and torchvision, and their submodules) gives ember."""
    already = [name for name in sys.modules if _target(name) is not None
               and not getattr(sys.modules[name], "__name__", "").startswith("ember")]
    if already:
        warnings.warn("PyTorch was imported before ember.compat.install(); later imports of "
                      f"torch resolve to ember, but objects already taken from it stay "
                      f"PyTorch's ({', '.join(sorted(already)[:3])} ...)", RuntimeWarning)
        for name in already:
            del sys.modules[name]
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    for alias, real in ALIASES.items():
        sys.modules[alias] = importlib.import_module(real)
    _show_api_versions(True)
    # submodules ember has already imported answer to their torch names at once
    for name, module in list(sys.modules.items()):
        for alias, real in ALIASES.items():
            if name.startswith(real + ".") and module is not None:
                sys.modules.setdefault(alias + name[len(real):], module)


def is_installed():
    """Whether `import torch` resolves to ember in this process."""
    return _finder in sys.meta_path


def _show_api_versions(installed):
    """`torch.__version__` / `torchvision.__version__`: the API's while installed, else
    ember's own release."""
    version = importlib.import_module("ember.version")
    vision = importlib.import_module("ember.vision")
    ember = sys.modules["ember"]
    if installed:
        ember.__version__ = version.__version__ = version.pytorch_api_version()
        vision.__version__ = f"{vision.TORCHVISION_API}+ember.{version.EMBER_RELEASE}"
    else:
        ember.__version__ = version.__version__ = version.TorchVersion(version.EMBER_RELEASE)
        vision.__version__ = version.EMBER_RELEASE


def uninstall():
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
        _show_api_versions(False)
    for name in [n for n in sys.modules if _target(n) is not None]:
        module = sys.modules[name]
        if getattr(module, "__name__", "").startswith("ember"):
            del sys.modules[name]
