"""`nn.Module`: parameters, buffers and submodules registered by attribute assignment, in
order; state_dict round trips; train/eval; device and dtype moves that keep parameter
objects; forward and backward hooks; PyTorch's nested repr."""
import functools
import itertools
import sys
import warnings
from collections import OrderedDict, namedtuple

from ..._environment import typename
from ..._tensor import Tensor
from ...utils.hooks import RemovableHandle
from ..parameter import Buffer, Parameter, is_lazy
from ._loading import load_entry
from .hooks import (_global_backward_hooks, _global_backward_pre_hooks,  # noqa: F401
                    _global_buffer_registration_hooks, _global_forward_hooks,
                    _global_forward_hooks_always_called, _global_forward_hooks_with_kwargs,
                    _global_forward_pre_hooks, _global_module_registration_hooks,
                    _global_parameter_registration_hooks, _run_registration_hooks,
                    _register_global, register_module_buffer_registration_hook,
                    register_module_forward_hook, register_module_forward_pre_hook,
                    register_module_full_backward_pre_hook,
                    register_module_module_registration_hook,
                    register_module_parameter_registration_hook)

__all__ = ["register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_backward_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook", "Module"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What `load_state_dict` returns; prints as PyTorch's does, a short line when all match."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


# Which kind of global backward hook is in use: PyTorch keeps it here, in module.py.
_global_is_full_backward_hook = None  # the first global backward hook decides the kind
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"  # the state-dict key of get_extra_state (PyTorch's name)


def _set_global_backward_kind(full):
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as "
                           "a global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = full


def register_module_backward_hook(hook):
    """Deprecated in PyTorch for `register_module_full_backward_hook`; ember runs both as full
    backward hooks (as its `Module.register_backward_hook` does), but keeps the rule that the
    two kinds are not mixed."""
    _set_global_backward_kind(False)
    return _register_global(_global_backward_hooks, hook)


def register_module_full_backward_hook(hook):
    """`hook(module, grad_input, grad_output)` runs for every module when its input gradients
    are computed."""
    _set_global_backward_kind(True)
    return _register_global(_global_backward_hooks, hook)


def zero_grads(parameters, set_to_none=True):
    """Clear gradients: drop them (the default, as PyTorch 2.x) or zero them in place."""
    for p in parameters:
        g = p.grad
        if g is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if g.grad_fn is not None:
                g.detach_()
            else:
                g.requires_grad_(False)
            g.zero_()


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module:
    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", {})
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", {})
        setattr_(self, "_backward_hooks", OrderedDict())
        setattr_(self, "_backward_pre_hooks", OrderedDict())
        setattr_(self, "_state_dict_hooks", OrderedDict())
        setattr_(self, "_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_post_hooks", OrderedDict())

    forward = None  # subclasses define it

    # ---- registration ------------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        tensor = _run_registration_hooks(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter", self._parameters)
        if param is None:
            self._parameters[name] = _run_registration_hooks(
                _global_parameter_registration_hooks, self, name, None)
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             "function of another Tensor, compute the value in the forward() "
                             "method.")
        self._parameters[name] = _run_registration_hooks(_global_parameter_registration_hooks,
                                                         self, name, param)

    def _check_name(self, name, kind, own):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in own:
            raise KeyError(f"attribute '{name}' already exists")

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = _run_registration_hooks(_global_module_registration_hooks, self,
                                                      name, module)

    register_module = add_module

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Puts `module` at the dotted path `target`; with `strict`, only where a submodule
        already is."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError("`module` is not an nn.Module, found " + str(type(module)))
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def compile(self, *args, **kwargs):
        """`torch.compile` applied in place: ember runs eagerly, so forward stays as it is
        and only the arguments are checked."""
        from ...jit import compile
        compile(self, *args, **kwargs)

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return mod._buffers[name]

    # ---- attribute protocol ---------------------------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            values = d.get(store)
            if values is not None and name in values:
                return values[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, d, "_buffers", "_modules", "_non_persistent_buffers_set")
            d.pop(name, None)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            modules = d.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, d, "_parameters", "_buffers", "_non_persistent_buffers_set")
            d.pop(name, None)
            modules[name] = _run_registration_hooks(_global_module_registration_hooks, self,
                                                    name, value)
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            d["_modules"][name] = _run_registration_hooks(_global_module_registration_hooks,
                                                          self, name, value)
        elif isinstance(value, Buffer):
            d.pop(name, None)
            self.register_buffer(name, value, persistent=value._is_buffer_marker)
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            d["_buffers"][name] = _run_registration_hooks(_global_buffer_registration_hooks,
                                                          self, name, value)
        else:
            object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name, d, *stores):
        for store in stores:
            values = d.get(store)
            if values is not None and name in values:
                if isinstance(values, set):
                    values.discard(name)
                else:
                    del values[name]

    def __delattr__(self, name):
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, ()):
                del self.__dict__[store][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = set(dir(type(self))) | set(self.__dict__)
        keys |= set(self._parameters) | set(self._modules) | set(self._buffers)
        return sorted(k for k in keys if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs",
                     "_state_dict_pre_hooks", "_load_state_dict_post_hooks",
                     "_backward_pre_hooks"):
            self.__dict__.setdefault(name, OrderedDict() if "hooks" in name else {})
        self.__dict__.setdefault("_non_persistent_buffers_set", set())

    # ---- iteration ----------------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    # ---- modes -----------------------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        zero_grads(self.parameters(), set_to_none)

    def share_memory(self):
        return self._apply(lambda t: t.share_memory_())

    # ---- moves -------------------------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        """Replace every parameter's and buffer's data by fn(data), keeping the objects."""
        from ...autograd.grad_mode import no_grad
        if recurse:
            for module in self.children():
                module._apply(fn)
        from ... import __future__ as future
        swap = future.get_swap_module_params_on_conversion()
        overwrite = future.get_overwrite_module_params_on_conversion()
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                new = fn(param)
                grad = None if param._grad is None else fn(param._grad)
            if swap:  # the parameter and its grad keep their objects
                from ...utils import swap_tensors
                old_grad = param._grad
                if grad is not None:
                    swap_tensors(old_grad, grad.requires_grad_(old_grad.requires_grad))
                swap_tensors(param, Parameter(new, requires_grad=param.requires_grad))
                param.grad = old_grad
            elif overwrite:
                fresh = Parameter(new, requires_grad=param.requires_grad)
                if grad is not None:
                    fresh.grad = grad.detach().requires_grad_(param._grad.requires_grad)
                self._parameters[key] = fresh
            else:
                param.data = new
                if grad is not None:
                    param._grad.data = grad
        for key, buf in self._buffers.items():
            if buf is not None:
                if is_lazy(buf):  # stays the placeholder, with the new device and dtype
                    buf.data = fn(buf)
                else:
                    self._buffers[key] = fn(buf)
        return self

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        from ...ops.conversion import _parse_to
        dev, dtype, _, fmt = _parse_to(args, dict(kwargs))
        fmt = None if "memory_format" not in kwargs else fmt
        from ... import dtypes as _dt
        if dtype is not None:
            dtype = _dt.to_dtype(dtype)
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                                f"got desired dtype={dtype}")

        def convert(t):
            # as PyTorch: a memory format applies to the 4-D and 5-D tensors only
            kw = {} if fmt is None or t.dim() not in (4, 5) else {"memory_format": fmt}
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                return t.to(dev, dtype, **kw) if dev is not None else t.to(dtype, **kw)
            return t.to(dev, **kw) if dev is not None else (t.to(**kw) if kw else t)
        return self._apply(convert)

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def _float_apply(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        from ... import dtypes as _dt
        return self._float_apply(_dt.float32)

    def double(self):
        from ... import dtypes as _dt
        return self._float_apply(_dt.float64)

    def half(self):
        from ... import dtypes as _dt
        return self._float_apply(_dt.float16)

    def bfloat16(self):
        from ... import dtypes as _dt
        return self._float_apply(_dt.bfloat16)

    def to_empty(self, *, device=None, recurse=True):
        from ...ops.creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse)

    def _replicate_for_data_parallel(self):
        """A shallow copy for `nn.parallel.replicate`, which fills in its parameters (as plain
        tensors on the replica's device) and buffers."""
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = {}
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        replica._is_replica = True
        return replica

    # ---- calling -----------------------------------------------------------------------------------
    def _call_impl(self, *args, **kwargs):
        if args and type(args[0]) is not Tensor and _untraced_proxy(args[0]):
            # a module called on fx Proxies outside a trace records its forward into their
            # graph, as PyTorch's __torch_function__ makes it do
            with args[0].tracer._patched():
                return type(self).forward(self, *args, **kwargs)
        pre_hooks = self._forward_pre_hooks
        if pre_hooks or _global_forward_pre_hooks:
            for hid, hook in list(itertools.chain(_global_forward_pre_hooks.items(),
                                                  pre_hooks.items())):
                if hid in self._forward_pre_hooks_with_kwargs:
                    res = hook(self, args, kwargs)
                    if res is not None:
                        args, kwargs = res
                else:
                    res = hook(self, args)
                    if res is not None:
                        args = res if isinstance(res, tuple) else (res,)
        if (self._backward_hooks or self._backward_pre_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            from .hooks import BackwardHook
            # global hooks run first, as PyTorch runs them
            bw = BackwardHook(self, [*_global_backward_hooks.values(),
                                     *self._backward_hooks.values()],
                              [*_global_backward_pre_hooks.values(),
                               *self._backward_pre_hooks.values()])
            args = bw.setup_input_hook(args)
        else:
            bw = None
        if self.forward is None:
            raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                      '"forward" function')
        result = self.forward(*args, **kwargs)
        hooks = self._forward_hooks
        if hooks or _global_forward_hooks:
            called = set()
            try:
                for hid, hook in list(itertools.chain(_global_forward_hooks.items(),
                                                      hooks.items())):
                    called.add(hid)
                    if (hid in self._forward_hooks_with_kwargs
                            or hid in _global_forward_hooks_with_kwargs):
                        res = hook(self, args, kwargs, result)
                    else:
                        res = hook(self, args, result)
                    if res is not None:
                        result = res
            except Exception:
                self._run_always_called_hooks(args, kwargs, result, called)
                raise
        if bw is not None:
            result = bw.setup_output_hook(result)
        return result

    def _run_always_called_hooks(self, args, kwargs, result, called):
        """A forward hook raised: the global hooks registered with `always_call=True` that have
        not run yet still run; what they raise in turn is only warned about."""
        for hid, hook in list(_global_forward_hooks.items()):
            if hid not in _global_forward_hooks_always_called or hid in called:
                continue
            try:
                if hid in _global_forward_hooks_with_kwargs:
                    hook(self, args, kwargs, result)
                else:
                    hook(self, args, result)
            except Exception as e:
                warnings.warn("global module forward hook with ``always_call=True`` raised an "
                              "exception that was silenced as another error was raised in "
                              f"forward: {e}", stacklevel=2)

    __call__ = _call_impl

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        handle = RemovableHandle(self._forward_hooks, extra_dict=self._forward_hooks_with_kwargs)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        return handle

    def register_backward_hook(self, hook):
        return self.register_full_backward_hook(hook)

    # ---- state dict ----------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        extra = getattr(type(self), "get_extra_state", None)
        if extra is not None and extra is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:  # the legacy positional form (destination, prefix, keep_vars)
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = {"version": self._version}
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, {"version": self._version})
            if result is not None:
                destination = result
        return destination

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called.")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        assign = local_metadata.get("assign_to_params_buffers", False)
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                 if v is not None}
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            load_entry(self, name, param, key, state_dict[key], assign, error_msgs)
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        has_extra = getattr(type(self), "set_extra_state", None) is not Module.set_extra_state
        if has_extra:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    rest = key[len(prefix):]
                    first = rest.split(".", 1)[0]
                    if first not in self._modules and first not in local:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(state_dict, prefix, local_metadata, True, missing,
                                         unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")
            incompatible = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, incompatible)

        load(self)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def register_state_dict_pre_hook(self, hook):
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook):
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    register_state_dict_post_hook = _register_state_dict_hook

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = (
            functools.partial(hook, self) if with_module else hook)
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # ---- printing ------------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for key, module in self._modules.items():
            lines.append("(" + key + "): " + _addindent(repr(module), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _untraced_proxy(value):
    """Whether `value` is an fx Proxy whose tracer is not recording right now (fx is looked
    up only if something loaded it: a module never imports it)."""
    proxy = sys.modules.get("ember.fx.proxy")
    return proxy is not None and isinstance(value, proxy.Proxy) and \
        not getattr(value.tracer, "_active", True)
