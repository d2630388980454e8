"""What `torch.compile(module)` returns: an OptimizedModule wrapping the module (so its
state_dict keys read `_orig_mod.weight`, and `model._orig_mod` is the original, as scripts
that save compiled models expect). ember runs it eagerly: calling it calls the module."""
from ..nn.modules.module import Module

__all__ = ["OptimizedModule"]

# the wrapper's own attributes; every other one is read from and written to the module
_OWN = frozenset({"_orig_mod", "forward", "dynamo_ctx", "get_compiler_config"})


class OptimizedModule(Module):
    def __init__(self, mod, dynamo_ctx=None):
        super().__init__()
        self._orig_mod = mod  # a child: parameters and state_dict keys carry its name

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def _wraps(self):
        return "_orig_mod" in self.__dict__.get("_modules", {})

    # `training` is the module's own flag (model.eval() on either side is seen by both)
    @property
    def training(self):
        return self._orig_mod.training if self._wraps() else True

    @training.setter
    def training(self, value):
        if self._wraps():
            self._orig_mod.training = value

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_orig_mod" or not self._wraps():
                raise
            return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        if name in _OWN or not self._wraps() or name in self.__dict__:
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if name in _OWN or not self._wraps() or name in self.__dict__:
            super().__delattr__(name)
        else:
            delattr(self._orig_mod, name)

    def __len__(self):
        return len(self._orig_mod)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(dir(self._orig_mod)))

    def get_compiler_config(self):
        return None

    def __reduce_ex__(self, protocol):
        # pickled (torch.save of a whole model) as the module it wraps: PyTorch's own form
        # carries its compiler's context objects, which ember has no twins of; the module
        # loads anywhere, and compiling it again is one call
        # (copyreg's protocol-1 form: protocol 2's __newobj__ insists on the wrapper's class)
        return self._orig_mod.__reduce_ex__(1)
