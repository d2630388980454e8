"""The names classes and functions carry in a pickle, both ways between ember and PyTorch.

A whole object pickled by `ember.save` names PyTorch's module paths for ember's classes
(`ember.nn.modules.linear.Linear` is written `torch.nn.modules.linear.Linear`, `ember.vision.X`
`torchvision.X`), so PyTorch loads it; `ember.load` maps those names back to ember's. The
two directions are inverse, so a file ember wrote loads in ember with or without PyTorch.

ember files most classes where PyTorch does (Tensor, Size, dtype, device ... name `ember` as
their module, as PyTorch's name `torch`); the few it files elsewhere are listed here with
PyTorch's home, so the written name is one PyTorch resolves.
"""
import importlib

# (ember module, qualified name) -> PyTorch's module for that class or function
_TORCH_HOME = {
    ("ember.random", "Generator"): "torch",
    ("ember.optim._adafactor", "Adafactor"): "torch.optim._adafactor",
    ("ember.utils.data._utils.fetch", "_DatasetKind"): "torch.utils.data.dataloader",
    **{("ember.distributions.transforms_structured", name): "torch.distributions.transforms"
       for name in ("CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
                    "IndependentTransform", "LowerCholeskyTransform",
                    "PositiveDefiniteTransform", "ReshapeTransform", "SoftmaxTransform",
                    "StackTransform", "StickBreakingTransform")},
    ("ember.vision.ops.roi", "RoIAlign"): "torchvision.ops.roi_align",
    ("ember.vision.ops.roi", "RoIPool"): "torchvision.ops.roi_pool",
    **{("ember.vision.transforms._augment", name): "torchvision.transforms.transforms"
       for name in ("ColorJitter", "GaussianBlur", "RandomAffine", "RandomApply", "RandomChoice",
                    "RandomCrop", "RandomErasing", "RandomGrayscale", "RandomHorizontalFlip",
                    "RandomOrder", "RandomResizedCrop", "RandomRotation",
                    "RandomVerticalFlip")},
}
_EMBER_HOME = {(torch_module, name): module for (module, name), torch_module in _TORCH_HOME.items()}

# Classes that ember 0.1.0 defined elsewhere, so whole models it pickled still load: its
# module files now follow PyTorch's (a class lives where PyTorch defines it).
_MOVED = {
    **{("ember.nn.modules.normalization", f"{kind}{d}d"): "ember.nn.modules." + home
       for kind, home in (("BatchNorm", "batchnorm"), ("LazyBatchNorm", "batchnorm"),
                          ("InstanceNorm", "instancenorm"), ("LazyInstanceNorm", "instancenorm"))
       for d in (1, 2, 3)},
    ("ember.nn.modules.sync_batchnorm", "SyncBatchNorm"): "ember.nn.modules.batchnorm",
    ("ember.nn.modules.attention", "MultiheadAttention"): "ember.nn.modules.activation",
}

# package prefixes, ember's and PyTorch's; the longer prefix first (ember.vision is torchvision)
_PREFIXES = (("ember.vision", "torchvision"), ("ember", "torch"))


def _swap(module, pairs):
    for old, new in pairs:
        if module == old or module.startswith(old + "."):
            return new + module[len(old):]
    return module


# where PyTorch users reach functions that ember defines in its ops package (relu, tanh ...),
# most specific first; PyTorch resolves `torch.nn.functional.relu` and `torch.tanh` by name
_PUBLIC_NAMESPACES = ("ember.nn.functional", "ember", "ember.special", "ember.linalg",
                      "ember.fft")


def _public_home(obj, module, name):
    """A public ember namespace holding `obj` under `name`, for a function that lives in a
    module PyTorch has no counterpart of (ember.ops.*); else `module`."""
    if not module.startswith("ember.ops"):
        return module
    from ..ops._numpy_names import binds
    for namespace in _PUBLIC_NAMESPACES:
        # imported, not looked up: `import ember` leaves ember.nn for first use, and the name a
        # checkpoint gets must not depend on whether the program touched ember.nn yet
        if binds(getattr(importlib.import_module(namespace), name, None), obj):
            return namespace
    return module


def torch_name(module, name, obj=None):
    """PyTorch's (module, name) for ember's `module.name` (the object itself, when given, to
    find a function's public home); anything not ember's is unchanged."""
    home = _TORCH_HOME.get((module, name))
    if home is not None:
        return home, name
    if obj is not None:
        module = _public_home(obj, module, name)
    return _swap(module, _PREFIXES), name


def ember_name(module, name):
    """ember's (module, name) for a PyTorch path (or a path an older ember wrote)."""
    home = _EMBER_HOME.get((module, name))
    if home is not None:
        return home, name
    module = _swap(module, [(theirs, ours) for ours, theirs in reversed(_PREFIXES)])
    return _MOVED.get((module, name), module), name
