"""`torch.utils.module_tracker.ModuleTracker`: which nn.Modules are running, in the forward
and in their backward, by their fully qualified names ("Global" always among them; a module
first seen is named by its class, its children "Parent.child", as in a state_dict).

Global module hooks add a module's name when its forward starts and drop it when it ends;
multi-gradient hooks on its outputs add it again when their gradients arrive in backward,
and hooks on its inputs drop it when theirs are computed. The set is reset to {"Global"}
when the backward ends. FlopCounterMode counts what runs under these names."""
import logging
import weakref

from ..autograd import engine as _engine
from ..autograd.graph import register_multi_grad_hook
from .._tensor import Tensor
from ..nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from ._pytree import tree_flatten

__all__ = ["ModuleTracker"]

logger = logging.getLogger(__name__)


class ModuleTracker:
    """A context manager tracking the module hierarchy as it runs: `parents` is the set of
    the fully qualified names of the modules running now (their forward, or their backward),
    always with "Global"; `is_bw` tells whether a backward is running."""

    parents: set

    def __init__(self) -> None:
        self.parents = {"Global"}
        self._known_modules = weakref.WeakKeyDictionary()
        self._seen_modules = weakref.WeakSet()
        self._has_callback = False
        self._hooks = []

    def _maybe_set_engine_callback(self):
        # one reset per backward (backwards are assumed not to run concurrently)
        if self._has_callback:
            return

        def callback():
            self.parents = {"Global"}
            self._has_callback = False
        _engine.queue_callback(callback)
        self._has_callback = True

    @property
    def is_bw(self):
        """Whether a backward is running now."""
        return _engine.current_graph_task() is not None

    def _get_mod_name(self, mod):
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for child_name, child in mod.named_children():
                self._known_modules[child] = f"{name}.{child_name}"
                self._get_mod_name(child)
            self._seen_modules.add(mod)
        return name

    def _get_append_fn(self, name, is_bw):
        def fn(*args):
            if is_bw:
                self._maybe_set_engine_callback()
            if name in self.parents:
                logger.info("The module hierarchy tracking seems to be broken as this Module "
                            "was already entered. %s during %s", name,
                            "backward" if is_bw else "forward")
            self.parents.add(name)
        return fn

    def _get_pop_fn(self, name, is_bw):
        def fn(*args):
            if name in self.parents:
                self.parents.remove(name)
            else:
                logger.info("The Module hierarchy tracking is confused as we're exiting a "
                            "Module that was never entered. %s during %s", name,
                            "backward" if is_bw else "forward")
        return fn

    def _grad_tensors(self, value):
        leaves, _ = tree_flatten(value)
        return [t for t in leaves if isinstance(t, Tensor) and t.requires_grad]

    def _fw_pre_hook(self, mod, input):
        name = self._get_mod_name(mod)
        self._get_append_fn(name, False)()
        tensors = self._grad_tensors(input)
        if tensors:  # the module's backward ends when its inputs' gradients are computed
            self._hooks.append(register_multi_grad_hook(tensors, self._get_pop_fn(name, True)))

    def _fw_post_hook(self, mod, input, output):
        name = self._get_mod_name(mod)
        self._get_pop_fn(name, False)()
        tensors = self._grad_tensors(output)
        if tensors:  # and starts when its outputs' gradients arrive
            self._hooks.append(register_multi_grad_hook(tensors,
                                                        self._get_append_fn(name, True)))

    def __enter__(self):
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        return self

    def __exit__(self, *args):
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()
