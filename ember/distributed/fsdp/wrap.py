"""`torch.distributed.fsdp.wrap`: which submodules FSDP1 wraps in FSDP instances of their own.

A policy function is asked `policy(module=..., recurse=..., nonwrapped_numel=...)`: with
`recurse=True`, whether to look into the module's children; with `recurse=False`, whether to
wrap the module itself, given the number of its parameters no wrapped child took. Children
are wrapped before their parents. A `_Policy` object (`ModuleWrapPolicy`, `CustomPolicy`)
answers for the whole tree at once: the modules to wrap, each with its keyword overrides.
`enable_wrap` / `wrap` are the manual form: inside the context, `wrap(m)` wraps."""
import contextlib

from ...nn.modules.activation import MultiheadAttention
from ...nn.modules.container import ModuleDict, ModuleList

__all__ = ["always_wrap_policy", "lambda_auto_wrap_policy", "transformer_auto_wrap_policy",
           "size_based_auto_wrap_policy", "enable_wrap", "wrap", "CustomPolicy",
           "ModuleWrapPolicy"]


def always_wrap_policy(*args, **kwargs):
    return True


def _module_wrap_policy(module, recurse, nonwrapped_numel, module_classes):
    return True if recurse else isinstance(module, tuple(module_classes))


def transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls):
    """Wrap every module that is an instance of one of `transformer_layer_cls`."""
    return _module_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls)


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    """Wrap every module for which `lambda_fn(module)` is true."""
    return True if recurse else lambda_fn(module)


def size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=int(1e8),
                                force_leaf_modules=None, exclude_wrap_modules=None):
    """Wrap a module once its parameters that no wrapped child took number at least
    `min_num_params`; never look into `force_leaf_modules`, never wrap
    `exclude_wrap_modules` (containers)."""
    force_leaf_modules = (size_based_auto_wrap_policy.FORCE_LEAF_MODULES
                          if force_leaf_modules is None else force_leaf_modules)
    exclude_wrap_modules = (size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES
                            if exclude_wrap_modules is None else exclude_wrap_modules)
    if recurse:
        return not isinstance(module, tuple(force_leaf_modules))
    return nonwrapped_numel >= min_num_params and \
        not isinstance(module, tuple(exclude_wrap_modules))


size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {ModuleList, ModuleDict}
size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {MultiheadAttention}


class _Policy:
    """A policy that picks the modules to wrap in one pass over the tree."""

    def _run_policy(self, root_module, ignored_modules, root_kwargs):
        """{module: its FSDP keyword arguments} for every module to wrap."""
        raise NotImplementedError


class ModuleWrapPolicy(_Policy):
    """Wrap every module that is an instance of one of `module_classes`."""

    def __init__(self, module_classes):
        self._module_classes = set(module_classes)
        self._module_classes_str = str(self._module_classes)

    def _run_policy(self, root_module, ignored_modules, root_kwargs):
        classes = tuple(self._module_classes)
        return {m: dict(root_kwargs) for m in _unignored(root_module, ignored_modules)
                if isinstance(m, classes)}

    def __call__(self, module, recurse, *args, **kwargs):
        return _module_wrap_policy(module, recurse, 0, self._module_classes)

    def __repr__(self):
        return super().__repr__() + f"({self._module_classes_str})"


class CustomPolicy(_Policy):
    """`lambda_fn(module)`: False (do not wrap), True (wrap with the root's arguments) or a
    dict of arguments overriding the root's for this module."""

    def __init__(self, lambda_fn):
        self._lambda_fn = lambda_fn

    def _run_policy(self, root_module, ignored_modules, root_kwargs):
        targets = {}
        for m in _unignored(root_module, ignored_modules):
            answer = self._lambda_fn(m)
            if not isinstance(answer, (bool, dict)):
                raise ValueError("The lambda_fn passed to CustomPolicy should return False/"
                                 f"True or a kwarg dict, but it returned {answer}")
            if answer:
                targets[m] = dict(root_kwargs, **(answer if isinstance(answer, dict) else {}))
        return targets


def _unignored(root, ignored_modules):
    """The modules under `root`, not inside an ignored module."""
    out, stack = [], [root]
    while stack:
        m = stack.pop()
        if m in ignored_modules:
            continue
        out.append(m)
        stack.extend(reversed(list(m.children())))
    return out


def policy_targets(policy, root, ignored_modules, ignored_params, root_kwargs):
    """{module: kwargs} of the modules under `root` that `policy` (a `_Policy` or a policy
    function) wraps, the root itself excluded (it is wrapped anyway)."""
    if isinstance(policy, _Policy):
        targets = policy._run_policy(root, ignored_modules, root_kwargs)
    else:
        targets = {}
        _recurse(policy, root, ignored_modules, ignored_params, targets, root_kwargs, True)
    targets.pop(root, None)
    return targets


def _recurse(policy, module, ignored_modules, ignored_params, targets, kwargs, only_children):
    """The documented recursion of a policy function; returns how many parameters of
    `module` the wrapped modules took."""
    numel = sum(p.numel() for p in module.parameters() if id(p) not in ignored_params)
    if not policy(module=module, recurse=True, nonwrapped_numel=numel):
        return 0
    wrapped = 0
    for child in module.children():
        if child not in ignored_modules:
            wrapped += _recurse(policy, child, ignored_modules, ignored_params, targets,
                                kwargs, False)
    if not only_children and policy(module=module, recurse=False,
                                     nonwrapped_numel=numel - wrapped):
        targets[module] = dict(kwargs)
        return numel
    return wrapped


# ---- manual wrapping ---------------------------------------------------------------------------
class _ConfigAutoWrap:
    in_autowrap_context = False
    wrapper_cls = None
    kwargs = {}


@contextlib.contextmanager
def enable_wrap(*, wrapper_cls, **wrapper_kwargs):
    """Inside: `wrap(module)` returns `wrapper_cls(module, **wrapper_kwargs)`."""
    if _ConfigAutoWrap.in_autowrap_context:
        raise NotImplementedError("You are already within an autowrap context and we currently "
                                  "do not supported nested autowrap.")
    _ConfigAutoWrap.in_autowrap_context = True
    _ConfigAutoWrap.wrapper_cls, _ConfigAutoWrap.kwargs = wrapper_cls, wrapper_kwargs
    try:
        yield
    finally:
        _ConfigAutoWrap.in_autowrap_context = False
        _ConfigAutoWrap.wrapper_cls, _ConfigAutoWrap.kwargs = None, {}


def wrap(module, **wrap_overrides):
    """`module` wrapped with `enable_wrap`'s class and arguments (overridden by
    `wrap_overrides`); outside `enable_wrap`, `module` itself."""
    if not _ConfigAutoWrap.in_autowrap_context:
        return module
    kwargs = dict(_ConfigAutoWrap.kwargs, **wrap_overrides)
    return _ConfigAutoWrap.wrapper_cls(module, **kwargs)
