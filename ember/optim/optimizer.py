"""`Optimizer`: parameter groups with per-group options, per-parameter state, and
state_dict / load_state_dict in PyTorch's layout (so a PyTorch optimizer state loads).
Subclasses implement `step`, updating parameters in place under no_grad."""
import copy
import functools
from collections import OrderedDict, defaultdict
from itertools import chain

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..utils.hooks import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook",
           "required"]

# Hooks every optimizer runs around its step: the global pre hooks before its own, the global
# post hooks after its own.
_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """`hook(optimizer, args, kwargs)` runs before every optimizer's step; it may return
    `(new_args, new_kwargs)` for the step. Returns a handle whose `remove()` unregisters it."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """`hook(optimizer, args, kwargs)` runs after every optimizer's step."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        self._optimizer_step_pre_hooks = {}
        self._optimizer_step_post_hooks = {}
        self._add_state_dict_hook_tables()
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {params.type()}")
        param_groups = list(params)
        if not param_groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)
        if defaults.get("fused") and defaults.get("foreach"):  # the optimizers with a fused form
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", {})
        self.__dict__.setdefault("_optimizer_step_post_hooks", {})
        self._add_state_dict_hook_tables()
        self._patch_step_function()

    def _patch_step_function(self):
        """A subclass's own `step` (a user's optimizer) runs the step hooks too, as in PyTorch:
        wrapped once, on the class, by `profile_hook_step` (ember's built-in steps are
        already wrapped by `step_with_hooks`, which marks them `hooked`)."""
        cls = type(self)
        if not getattr(cls.step, "hooked", None):
            cls.step = self.profile_hook_step(cls.step)
            cls.step.hooked = True

    def _add_state_dict_hook_tables(self):
        # kept by an unpickled optimizer too (PyTorch's __setstate__ adds missing ones)
        for name in ("_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())

    def __repr__(self):
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):  # a blank line between groups
            out += f"\nParameter Group {i}\n"
            out += "".join(f"    {key}: {group[key]}\n" for key in sorted(group)
                           if key != "params")
        return out + ")"

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        existing = set()
        for group in self.param_groups:
            existing.update(id(p) for p in group["params"])
        if any(id(p) in existing for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # PyTorch's error for a sparse gradient, for optimisers that take none (None: accepted)
    _sparse_error = None

    def zero_grad(self, set_to_none=True):
        from ..nn.modules.module import zero_grads
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure=None):
        raise NotImplementedError

    def _stepping(self, group, with_state=True, negate=True):
        """(parameter, gradient to step along, its state) for each parameter of `group` that
        has a gradient; `maximize` negates the gradient here, once for every optimiser (unless
        `negate` is False: the functional forms take the raw gradient and `maximize`).
        Without `with_state` the state is None and none is created (SGD without momentum
        keeps an empty state, as PyTorch's does)."""
        if self._sparse_error is not None:
            for p in group["params"]:
                if p.grad is not None and p.grad.is_sparse:
                    raise RuntimeError(self._sparse_error)
        for p in group["params"]:
            if p.grad is not None:
                yield (p, -p.grad if negate and group.get("maximize") else p.grad,
                       self.state[p] if with_state else None)

    # ---- state dict ------------------------------------------------------------------------
    def state_dict(self):
        """{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}; the pre hooks
        run first (hook(optimizer)), then each post hook may replace the result."""
        for hook in list(self._optimizer_state_dict_pre_hooks.values()):
            hook(self)
        index = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {index[id(p)]: v for p, v in self.state.items() if id(p) in index}
        state_dict = {"state": state, "param_groups": groups}
        for hook in list(self._optimizer_state_dict_post_hooks.values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        state_dict = state_dict.copy()
        for hook in list(self._optimizer_load_state_dict_pre_hooks.values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, s in zip(groups, saved_groups):
            if len(g["params"]) != len(s["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = {key: self._cast(param, value, key) for key, value in v.items()}
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for hook in list(self._optimizer_load_state_dict_post_hooks.values()):
            hook(self)

    @staticmethod
    def _cast(param, value, key):
        """State tensors follow their parameter's device (and dtype, except `step`)."""
        if isinstance(value, Tensor):
            if key == "step":
                return value
            if param.is_floating_point():
                return value.to(dtype=param.dtype, device=param.device)
            return value.to(device=param.device)
        if isinstance(value, dict):
            return {k: Optimizer._cast(param, v, k) for k, v in value.items()}
        return value

    # ---- hooks ------------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    @staticmethod
    def _add_hook(table, hook, prepend):
        handle = RemovableHandle(table)
        table[handle.id] = hook
        if prepend:
            table.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer), called before `state_dict` packs the state."""
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> a state dict to return instead, or None."""
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> a state dict to load instead, or None."""
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer), called once `load_state_dict` has loaded the state."""
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    @staticmethod
    def profile_hook_step(func):
        """Decorator for a `step(self, *args, **kwargs)`: runs it inside a profiler region
        named `Optimizer.step#<class>.step`, between the step pre and post hooks."""
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            from ..autograd.profiler import record_function
            self = args[0]
            with record_function(f"Optimizer.step#{type(self).__name__}.step"):
                args, kwargs = _run_pre_hooks(self, func, args, kwargs)
                out = func(*args, **kwargs)
                _run_post_hooks(self, args, kwargs)
                return out
        return wrapper


def _run_pre_hooks(self, step, args, kwargs):
    """The global then the optimizer's step pre hooks; each may replace (args, kwargs)."""
    for hook in chain(list(_global_optimizer_pre_hooks.values()),
                      list(self._optimizer_step_pre_hooks.values())):
        result = hook(self, args, kwargs)
        if result is not None:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                   f"new_kwargs), but got {result}.")
            args, kwargs = result
    return args, kwargs


def _run_post_hooks(self, args, kwargs):
    for hook in chain(list(self._optimizer_step_post_hooks.values()),
                      list(_global_optimizer_post_hooks.values())):
        hook(self, args, kwargs)


def step_with_hooks(step):
    """Decorator for `step`: runs under no_grad, with the closure evaluated under enable_grad,
    and calls the step hooks."""
    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        args, kwargs = _run_pre_hooks(self, step, args, kwargs)
        closure = _closure_of(args, kwargs)
        loss = None
        if closure is not None:
            from ..autograd.grad_mode import enable_grad
            with enable_grad():
                loss = closure()
        with no_grad():
            step(self)
        self._opt_called = True  # lr schedulers warn when stepped before the optimizer
        _run_post_hooks(self, args, kwargs)
        return loss
    wrapper.hooked = True
    return wrapper


def _closure_of(args, kwargs):
    """The closure of a `step(self, closure=None)` call, from its arguments."""
    if len(args) > 2 or (len(args) == 2 and "closure" in kwargs):
        raise TypeError("step() takes from 1 to 2 positional arguments but "
                        f"{len(args)} were given")
    unknown = set(kwargs) - {"closure"}
    if unknown:
        raise TypeError(f"step() got an unexpected keyword argument '{unknown.pop()}'")
    return args[1] if len(args) == 2 else kwargs.get("closure")


def state_step(state, device=None):
    """The parameter's step counter: PyTorch keeps it as a float32 scalar tensor in the
    state, which the functional forms bump."""
    if "step" not in state:
        from ..ops.creation import zeros
        from .. import dtypes
        state["step"] = zeros((), dtype=dtypes.float32, device=device)
    return state["step"]


def bump(step_t):
    """Advance a step counter tensor; its new value as a Python number."""
    step_t.add_(1)
    return step_t.item()


def real_views(*lists):
    """The lists (parameters, gradients, state), with every complex tensor viewed as the real
    tensor of its (re, im) pairs (the lists themselves when none is). PyTorch steps a complex
    parameter so: the real and imaginary parts are separate coordinates, each with its own
    moments (complex arithmetic on the tensors themselves gives other updates), and in-place
    updates of the views reach the complex tensors."""
    if not any(t.is_complex() for t in lists[0]):
        return lists
    from ..ops.complex_views import view_as_real
    return tuple([t if t is None or not t.is_complex() else view_as_real(t) for t in lst]
                 for lst in lists)
