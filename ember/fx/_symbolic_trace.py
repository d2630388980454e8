"""`torch.fx.symbolic_trace` and `Tracer`. ember's functions do not dispatch on
`__torch_function__` (that would tax every eager call), so while a trace runs the tracer
swaps the public functions of ember's namespaces, `Module.__call__`/`__getattr__` and the
Tensor operators for recording forms, and puts every one back afterwards. An exporting
tracer (`concrete=True`) also runs each op on example values, kept in `node.meta['val']`, so
shape-based Python control flow follows the example as torch.export's does."""
import contextlib
import dis
import functools
import importlib
import inspect
import math
import sys
import types

from .._errors import _assert
from . import _functional_signatures
from .graph import Graph
from .node import has_side_effect, map_aggregate
from .proxy import Attribute, ParameterProxy, Proxy, TraceError

has_side_effect(_assert)  # torch._assert's calls survive dead-code elimination

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "GraphAppendingTracer"]

_NAMESPACES = ("ember", "ember.ops", "ember.nn.functional", "ember.special", "ember.linalg",
               "ember.fft")
_PATHS = {"ember": "torch.", "ember.ops": "torch.", "ember.nn.functional": "torch.nn.functional.",
          "ember.special": "torch.special.", "ember.linalg": "torch.linalg.",
          "ember.fft": "torch.fft."}
_wrapped = []  # (globals dict, name) registered by wrap()
_TENSOR_OPERATORS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
                     "and", "or", "xor", "lshift", "rshift", "eq", "ne", "lt", "le", "gt", "ge")
_METADATA = {"dim", "numel", "nelement", "is_floating_point", "is_complex", "is_contiguous",
             "element_size", "get_device", "stride", "storage_offset", "is_signed"}
_DATA = {"item", "tolist", "numpy", "__bool__", "any_true"}


def _op_object(name, value):
    """Whether `value` is a namespace's function written as a callable object (torch.where,
    which is also a Tensor method descriptor): it names itself as it is named."""
    return callable(value) and not isinstance(value, (type, types.ModuleType)) and \
        getattr(value, "__name__", None) == name


class _PH:
    def __repr__(self):
        return "PH"


PH = _PH()


@has_side_effect
def _assert_is_none(value, msg):
    """The run-time check of a `concrete_args` entry fixed to None."""
    assert value is None, msg


def wrap(fn_or_name):
    """Record calls of a module-level function as one `call_function` node instead of
    tracing into it (called at a module's top level, or used as a decorator)."""
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    if not any(g is frame.f_globals and n == name for g, n in _wrapped):
        _wrapped.append((frame.f_globals, name))
    return fn_or_name


def _proxies(args, kwargs):
    """The Proxies among a call's arguments (inside lists, tuples and dicts too)."""
    found = []
    map_aggregate((args, kwargs), lambda a: found.append(a) if isinstance(a, Proxy) else None)
    return found


def _has_proxy(args, kwargs):
    return bool(_proxies(args, kwargs))


class Tracer:
    # as in torch.fx, a buffer read in forward stays a tensor (it becomes a get_attr node where
    # it meets the graph); exporting, every parameter and buffer is a node from the start
    proxy_buffer_attributes = False

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(),
                 param_shapes_constant=False):
        self.autowrap_modules = autowrap_modules
        self.autowrap_functions = tuple(autowrap_functions)
        self.param_shapes_constant = param_shapes_constant
        self.concrete = False
        self._active = False  # its recording forms are in place
        self.dynamic = frozenset()  # exporting: example sizes read at run time
        self.graph = None
        self.root = None

    # ---- what a trace records ------------------------------------------------------------
    def is_leaf_module(self, m, module_qualified_name):
        from ..nn.modules.container import Sequential
        module = type(m).__module__
        return (module.startswith("ember.nn") or module.startswith("torch.nn")) and \
            not isinstance(m, Sequential)

    def path_of_module(self, mod):
        for name, m in self.root.named_modules():
            if m is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def create_arg(self, a):
        from .._tensor import Tensor
        from ..nn.modules.module import Module

        def one(x):
            if isinstance(x, Proxy):
                return x.node
            if isinstance(x, Tensor):
                return self._constant(x).node
            if isinstance(x, Module):
                raise RuntimeError(f"Unsupported node type: a module ({type(x).__name__}) "
                                   "passed as an argument")
            return x
        return map_aggregate(a, one)

    def _constant(self, t):
        """A tensor the program holds: a parameter or buffer of the root by its name, or
        else a new `_tensor_constant<N>` attribute of the root. As in torch.fx, each such
        use reads the attribute anew (`_tensor_constant0_1 = self._tensor_constant0`);
        exporting, one node per tensor, which becomes its lifted placeholder."""
        fresh = not self.concrete
        for name, p in list(self.root.named_parameters()) + list(self.root.named_buffers()):
            if p is t:
                return self._get_attr(name, p, fresh)
        for name, value in self._tensor_constants.items():
            if value is t:
                return self._get_attr(name, t, fresh)
        name = f"_tensor_constant{len(self._tensor_constants)}"
        self._tensor_constants[name] = t
        setattr(self.root, name, t)
        return self._get_attr(name, t, fresh)

    def _get_attr(self, name, value, fresh=False):
        if fresh:
            return self.proxy(self.create_node("get_attr", name, (), {}))
        if name not in self._attr_proxies:
            node = self.create_node("get_attr", name, (), {})
            if self.concrete:
                node.meta["val"] = value
            self._attr_proxies[name] = self.proxy(node)
        return self._attr_proxies[name]

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        node = self.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs),
                                name, type_expr)
        if self.concrete:
            node.meta["val"] = self._run(node, args, kwargs)
        return proxy_factory_fn(node) if proxy_factory_fn else self.proxy(node)

    def call_module(self, m, forward, args, kwargs):
        try:
            module_qualified_name = self.path_of_module(m)
        except NameError:  # not part of the traced module: only a module traced through
            if self.is_leaf_module(m, ""):
                raise
            return forward(*args, **kwargs)
        if not self.is_leaf_module(m, module_qualified_name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", module_qualified_name, args, kwargs)

    def call_method(self, name, args, kwargs):
        if self.concrete:
            val = args[0].node.meta.get("val")
            if name in _DATA:
                raise TraceError(f"Tensor.{name}() reads a traced tensor's data: the program's "
                                 "control flow would depend on it (data-dependent), which a "
                                 "captured graph cannot express")
            if name == "size":
                return self._sizes(args[0], *args[1:], **kwargs)
            if name in _METADATA:
                return getattr(val, name)(*args[1:], **kwargs)
        return self.create_proxy("call_method", name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        from .._tensor import Tensor
        if not isinstance(attr_val, Tensor) or self._computing:
            return attr_val
        lifted = self._named_tensors() if self.concrete or self.proxy_buffer_attributes \
            else self.root.named_parameters()
        for name, p in lifted:
            if p is attr_val:
                if name not in parameter_proxy_cache:
                    proxy = self._get_attr(name, p)
                    if self.param_shapes_constant:
                        proxy = ParameterProxy(self, proxy.node, name, p)
                    parameter_proxy_cache[name] = proxy
                return parameter_proxy_cache[name]
        return attr_val

    def _named_tensors(self):
        if self._tensor_names is None:
            self._tensor_names = list(self.root.named_parameters()) + \
                list(self.root.named_buffers())
        return self._tensor_names

    # ---- what control flow on a Proxy means ------------------------------------------------
    def proxy_getattr(self, proxy, name):
        if self.concrete:
            from .._tensor import Tensor
            val = proxy.node.meta.get("val")
            if name == "shape":
                return self._sizes(proxy)
            if isinstance(val, Tensor):
                attr = getattr(val, name)
                if callable(attr):
                    return Attribute(proxy, name)
                if not isinstance(attr, Tensor):
                    return attr
        return Attribute(proxy, name)

    def to_bool(self, proxy):
        if self.concrete:
            from .._tensor import Tensor
            val = proxy.node.meta["val"]
            if isinstance(val, Tensor):
                raise TraceError("a traced tensor's value decides Python control flow "
                                 "(data-dependent), which a captured graph cannot express")
            return bool(val)
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def to_int(self, proxy, kind=int):
        if self.concrete:
            return kind(proxy.node.meta["val"])
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def iter(self, proxy):
        if self.concrete:
            val = proxy.node.meta["val"]
            return iter([proxy[i] for i in range(len(val))])
        # `a, b, c = proxy` unpacks a known count: fx reads it from the caller's bytecode
        frame = inspect.currentframe().f_back.f_back
        for inst in dis.get_instructions(frame.f_code):
            if inst.offset == frame.f_lasti:
                break
        else:
            inst = None
        following = [i for i in dis.get_instructions(frame.f_code)
                     if i.offset > frame.f_lasti][:1]
        for candidate in [inst] + following:
            if candidate is not None and candidate.opname == "UNPACK_SEQUENCE":
                return iter([proxy[i] for i in range(candidate.argval)])
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function argument. "
                         "See the torch.fx docs on pytorch.org for a more detailed explanation "
                         "of what types of control flow can be traced, and check out the Proxy "
                         "docstring for help troubleshooting Proxy iteration errors")

    def len(self, proxy):
        if self.concrete:
            return len(proxy.node.meta["val"])
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call torch.fx.wrap('len') at "
                           "module scope")

    def keys(self, proxy):
        raise TraceError("Proxy.keys() cannot be traced: ** unpacking of a Proxy")

    def _sizes(self, proxy, dim=None):
        """x.size()/x.shape (or x.size(d)) when exporting: plain ints, except that a size
        equal to a declared dynamic one is a `size` node (read at run time)."""
        val = proxy.node.meta["val"]
        if not self.dynamic:
            return val.size() if dim is None else val.size(dim)
        cache = self._size_cache.setdefault(proxy.node, {})

        def one(d):
            d = d + val.dim() if d < 0 else d
            if val.shape[d] not in self.dynamic:
                return val.shape[d]
            if d not in cache:
                cache[d] = self.create_proxy("call_method", "size", (proxy, d), {})
            return cache[d]
        if dim is not None:
            return one(dim)
        return tuple(one(d) for d in range(val.dim()))

    def _run(self, node, args, kwargs):
        """The example value of a new node (exporting tracers)."""
        def val(a):
            return a.node.meta["val"] if isinstance(a, Proxy) else a
        args, kwargs = map_aggregate(args, val), map_aggregate(kwargs, val)
        self._computing += 1  # real values only: nothing in here is recorded
        try:
            if node.op == "call_function":
                return node.target(*args, **kwargs)
            if node.op == "call_method":
                return getattr(args[0], node.target)(*args[1:], **kwargs)
            if node.op == "call_module":
                return self.root.get_submodule(node.target)(*args, **kwargs)
            return None
        finally:
            self._computing -= 1

    # ---- the trace --------------------------------------------------------------------------
    def trace(self, root, concrete_args=None, example_inputs=None):
        from ..nn.modules.module import Module
        if isinstance(root, Module):
            self.root, fn = root, type(root).forward
        else:
            self.root, fn = Module(), root
        self.graph = Graph(tracer_cls=type(self))
        self._tensor_constants, self._attr_proxies, self._size_cache = {}, {}, {}
        self._tensor_names, self._computing = None, 0
        args = self._placeholders(fn, concrete_args, example_inputs,
                                  is_method=isinstance(root, Module))
        # keyword-only parameters go in by name (the placeholders are in signature order)
        params = list(inspect.signature(fn).parameters.values())[
            1 if isinstance(root, Module) else 0:]
        kwargs = {p.name: a for p, a in zip(params, args) if p.kind == p.KEYWORD_ONLY}
        args = [a for p, a in zip(params, args) if p.kind != p.KEYWORD_ONLY]
        with self._patched():
            result = fn(self.root, *args, **kwargs) if isinstance(root, Module) \
                else fn(*args, **kwargs)
        returns = inspect.signature(fn).return_annotation
        self.create_node("output", "output", (self.create_arg(result),), {},
                         type_expr=None if returns is inspect.Signature.empty else returns)
        if self.concrete:
            list(self.graph.nodes)[-1].meta["val"] = map_aggregate(
                result, lambda a: a.node.meta.get("val") if isinstance(a, Proxy) else a)
        return self.graph

    def _placeholders(self, fn, concrete_args, example_inputs, is_method):
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[1 if is_method else 0:]
        concrete_args = concrete_args or {}
        args = []
        for i, p in enumerate(params):
            if p.name in concrete_args:
                args.append(self._concrete_arg(p, concrete_args[p.name]))
                continue
            if p.kind == p.VAR_POSITIONAL:
                raise TraceError(f"*{p.name} cannot be traced: give the inputs as named "
                                 "parameters")
            if p.kind == p.VAR_KEYWORD:
                continue
            default = p.default if p.default is not p.empty else inspect.Signature.empty
            if example_inputs is not None and i >= len(example_inputs) and \
                    default is not inspect.Signature.empty:
                args.append(default)
                continue
            if self.concrete and example_inputs is not None:
                from .._tensor import Tensor
                value = example_inputs[i] if i < len(example_inputs) else default
                if not isinstance(value, Tensor):  # None, numbers, flags: constants
                    args.append(self._non_tensor_input(p.name, value))
                    continue
            node = self.create_node("placeholder", p.name,
                                    () if default is inspect.Signature.empty else (default,),
                                    {},  # (through create_node, which subclasses override)
                                    type_expr=None if p.annotation is p.empty else p.annotation)
            if self.concrete and example_inputs is not None:
                node.meta["val"] = value
            args.append(self.proxy(node))
        return args

    def _non_tensor_input(self, name, value):
        """What the trace sees for an example input that is not a tensor: the value itself, a
        constant of the graph (the exporting tracer gives containers of tensors inputs)."""
        return value

    def _concrete_arg(self, param, value):
        """A parameter fixed by `concrete_args`. As torch.fx does, a scalar or None still
        becomes an input of the graph (named `<name>_1`), checked at run time to hold the value
        the trace was specialized on; `PH` makes a plain input. Other values (tensors,
        containers) are used as they are, with no input."""
        default = param.default if param.default is not param.empty else inspect.Signature.empty
        if value is PH:
            return self.proxy(self.graph.placeholder(f"{param.name}_1", default_value=default))
        if self.concrete or not (value is None or type(value) in (bool, int, float, str)):
            return value
        node = self.graph.placeholder(f"{param.name}_1", default_value=default)
        message = (f"{param.name} has been specialized to have value {value} but got another "
                   "value")
        if value is None:
            self.create_proxy("call_function", _assert_is_none, (node, message), {})
        else:
            self.create_proxy("call_function", _assert, (self.proxy(node) == value, message),
                              {})
        return value

    @contextlib.contextmanager
    def _patched(self):
        from .. import ops
        from .._tensor import Tensor
        from ..nn.modules.module import Module
        from ..ops._aten import OpOverload, OpOverloadPacket
        # every op in place before the namespaces are patched (a family loaded mid-trace
        # would put its functions past the recording wrappers)
        ops.load_all()
        saved = []

        def patch(owner, name, value):
            saved.append((owner, name, owner.__dict__[name] if isinstance(owner, type)
                          else owner[name] if isinstance(owner, dict) else getattr(owner, name)))
            if isinstance(owner, dict):
                owner[name] = value
            else:
                setattr(owner, name, value)

        tracer = self
        cache = {}
        original_call, original_getattr = Module.__call__, Module.__getattr__
        self._active = True

        def module_call(mod, *args, **kwargs):
            if not _has_proxy(args, kwargs):
                return original_call(mod, *args, **kwargs)
            return tracer.call_module(mod, lambda *a, **k: type(mod).forward(mod, *a, **k),
                                      args, kwargs)

        def module_getattr(mod, name):
            return tracer.getattr(name, original_getattr(mod, name), cache)

        try:
            patch(Module, "__call__", module_call)
            patch(Module, "__getattr__", module_getattr)
            for name in _TENSOR_OPERATORS:
                if f"__{name}__" in Tensor.__dict__:
                    patch(Tensor, f"__{name}__", _recording_method(
                        Tensor.__dict__[f"__{name}__"], _TENSOR_METHOD_OF.get(name, f"__{name}__")))
                if f"__r{name}__" in Tensor.__dict__:
                    patch(Tensor, f"__r{name}__", _deferring(Tensor.__dict__[f"__r{name}__"]))
            patch(Tensor, "__getitem__", _recording_getitem(Tensor.__dict__["__getitem__"]))
            for op_class in (OpOverloadPacket, OpOverload):  # torch.ops.<ns>.<op>[.<overload>]
                patch(op_class, "__call__", _recording_op_call(op_class.__dict__["__call__"]))
            for module_name in _NAMESPACES:
                module = sys.modules.get(module_name) or importlib.import_module(module_name)
                originals = {}
                for name, value in list(vars(module).items()):
                    if name.startswith("__") or not (isinstance(
                            value, (types.FunctionType, types.BuiltinFunctionType)) or
                            _op_object(name, value)):
                        continue
                    originals[name] = value
                    patch(module, name, self._recording(
                        value, as_functional=module_name == "ember.nn.functional",
                        path=_PATHS[module_name] + name))
                module._fx_originals = originals
            # functions a module keeps as attributes (TransformerEncoderLayer.activation)
            known = {id(fn) for m in _NAMESPACES if m in sys.modules
                     for fn in vars(sys.modules[m]).get("_fx_originals", {}).values()}
            # ... and those a module's code imported by name (`from torch import flatten`):
            # the globals its forward (and its methods') reads them from
            seen_globals = set()
            for sub in self.root.modules():
                for name, value in list(vars(sub).items()):
                    if id(value) in known and callable(value):
                        patch(vars(sub), name, self._recording(value))
                for cls in type(sub).__mro__:
                    module_globals = vars(sys.modules[cls.__module__]) \
                        if cls.__module__ in sys.modules else None
                    if module_globals is None or id(module_globals) in seen_globals or \
                            cls.__module__ in _NAMESPACES:
                        continue
                    seen_globals.add(id(module_globals))
                    for name, value in list(module_globals.items()):
                        if id(value) in known and callable(value):
                            patch(module_globals, name, self._recording(value))
            for module in self.autowrap_modules:
                for name, value in list(vars(module).items()):
                    if not name.startswith("_") and isinstance(value, types.BuiltinFunctionType):
                        patch(module, name, self._recording(value))
            for globals_, name in _wrapped + [(getattr(f, "__globals__", {}), f.__name__)
                                              for f in self.autowrap_functions]:
                if name in globals_:
                    patch(globals_, name, self._recording(globals_[name]))
            yield
        finally:
            self._active = False
            for owner, name, value in reversed(saved):
                if isinstance(owner, dict):
                    owner[name] = value
                else:
                    setattr(owner, name, value)
            for module_name in _NAMESPACES:
                module = sys.modules.get(module_name)
                if module is not None:
                    module.__dict__.pop("_fx_originals", None)

    def _recording(self, fn, as_functional=False, path=None):
        """`fn`'s recording form. `as_functional`: called as torch.nn.functional.<name>,
        whose Python-level functions PyTorch records with their parameters normalised.
        `path`: the name it was called by (one ember function may be both `torch.softmax`
        and `torch.nn.functional.softmax`), which the node keeps for its code."""
        tracer = self
        layout = _functional_signatures.SIGNATURES.get(fn.__name__) if as_functional else None

        @functools.wraps(fn)
        def record(*args, **kwargs):
            if _has_proxy(args, kwargs):
                if layout is not None:
                    args, kwargs = _normalized(fn, layout, args, kwargs)
                proxy = tracer.create_proxy("call_function", fn, args, kwargs,
                                            name=path.rsplit(".", 1)[1] if path else None)
                if path is not None:
                    proxy.node.meta["torch_path"] = path
                return proxy
            return fn(*args, **kwargs)
        record.__fx_original__ = fn
        return record


class GraphAppendingTracer(Tracer):
    """The tracer of Proxies made on an existing graph's nodes (`Proxy(node)`): what they
    record is appended to that graph."""

    def __init__(self, graph):
        super().__init__()
        from ..nn.modules.module import Module
        self.graph = graph
        self.root = graph.owning_module if graph.owning_module is not None else Module()
        self._tensor_constants, self._attr_proxies, self._size_cache = {}, {}, {}
        self._tensor_names, self._computing = None, 0


@functools.lru_cache(maxsize=None)
def _signature(fn):
    return inspect.signature(fn)


def _normalized(fn, layout, args, kwargs):
    """(args, kwargs) of a call as PyTorch's `__torch_function__` re-dispatch passes them;
    as written when ember's parameters differ from the layout."""
    positional, keywords = layout
    try:
        bound = _signature(fn).bind(*args, **kwargs)
    except TypeError:
        return args, kwargs
    bound.apply_defaults()
    values = bound.arguments
    if not all(name in values for name in positional + keywords):
        return args, kwargs
    return tuple(values[n] for n in positional), {k: values[k] for k in keywords}


# `tensor <op> proxy` is recorded as PyTorch's __torch_function__ records it: a call_method
# of the Tensor method the operator stands for (`_tensor_constant0.add(x)`), or of the
# dunder itself where PyTorch keeps that (`__and__`, `__floordiv__`, shifts).
_TENSOR_METHOD_OF = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div",
                     "matmul": "matmul", "pow": "pow", "mod": "remainder", "eq": "eq",
                     "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}


def _recording_method(method, method_name):
    """A Tensor operator that records `tensor <op> proxy` in the Proxy's graph."""
    @functools.wraps(method)
    def recording(self, other):
        if isinstance(other, Proxy):
            return other.tracer.create_proxy("call_method", method_name, (self, other), {})
        return method(self, other)
    return recording


def _recording_op_call(call):
    """An operator's call (`torch.ops.aten.mm`, `torch.ops.profiler._record_function_exit`)
    on a Proxy recorded as a call_function of the operator itself, as PyTorch records it."""
    @functools.wraps(call)
    def recording(op, *args, **kwargs):
        proxies = _proxies(args, kwargs)
        if proxies:
            return proxies[0].tracer.create_proxy("call_function", op, args, kwargs)
        return call(op, *args, **kwargs)
    return recording


def _recording_getitem(method):
    """`tensor[proxy]` (a Proxy anywhere in the index) recorded as PyTorch records it: a
    call_method of `__getitem__` on the tensor."""
    @functools.wraps(method)
    def recording(self, index):
        proxies = []
        map_aggregate(index, lambda a: proxies.append(a) if isinstance(a, Proxy) else None)
        if proxies:
            parts = index if isinstance(index, tuple) else (index,)
            if not proxies[0].tracer.concrete and any(
                    isinstance(p, slice) and _has_proxy((p.start, p.stop, p.step), {})
                    for p in parts):
                # torch.fx cannot trace `t[:n]` for a real tensor t and a Proxy n either
                raise TypeError("slice indices must be integers or None or have an "
                                "__index__ method")
            return proxies[0].tracer.create_proxy("call_method", "__getitem__",
                                                  (self, index), {})
        return method(self, index)
    return recording


def _deferring(method):
    """A Tensor operator that leaves `tensor <op> proxy` to the Proxy's reflected form."""
    @functools.wraps(method)
    def deferring(self, other):
        if isinstance(other, Proxy):
            return NotImplemented
        return method(self, other)
    return deferring


def symbolic_trace(root, concrete_args=None):
    """The GraphModule of `root`'s forward (or of a function), traced with Proxies."""
    from .graph_module import GraphModule
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if not isinstance(root, types.FunctionType) else root.__name__
    return GraphModule(tracer.root, graph, name)


__all__ += ["TraceError"]
