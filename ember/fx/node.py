"""`torch.fx.Node`: one operation of a Graph, its arguments (which may name other nodes) and
its users."""
import builtins
import operator
import typing

__all__ = ["Node", "map_arg", "map_aggregate", "Argument", "Target"]

Argument = typing.Optional[typing.Union[tuple, list, dict, slice, range, "Node", str, int,
                                        float, bool, complex]]
Target = typing.Union[typing.Callable[..., typing.Any], str]
_OPS = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output",
        "root")


def map_aggregate(a, fn):
    """`fn` applied to every leaf of a (nested) tuple/list/dict/slice argument."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(x, fn) for x in a)
        return type(a)(*mapped) if hasattr(a, "_fields") else mapped
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """`fn` applied to every Node in the argument `a`."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _target_name(target):
    if isinstance(target, str):
        return target
    mod = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))
    if target in vars(operator).values() and mod in ("_operator", "operator"):
        return f"operator.{name}"
    if getattr(builtins, name, None) is target:
        return f"builtins.{name}"
    from ._codegen import public_path
    return public_path(target) or f"{mod}.{name}"


# Functions a graph must keep calling even when nothing uses their result (dead code
# elimination leaves them): the run-time checks fx writes, and what `has_side_effect` marks.
_side_effectful_functions = set()


def has_side_effect(fn):
    """Mark `fn` as having a side effect, so dead code elimination keeps its calls."""
    _side_effectful_functions.add(fn)
    return fn


class Node:
    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in _OPS:
            raise ValueError(f"Unknown node op {op!r}")
        self.graph, self.name, self.op, self.target = graph, name, op, target
        self.type = return_type
        self.meta = {}
        self.users = {}
        self._input_nodes = {}
        self._args, self._kwargs = (), {}
        self._update_args_kwargs(tuple(args), dict(kwargs))

    # ---- arguments and users ------------------------------------------------------------
    def _update_args_kwargs(self, args, kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        self._input_nodes = {}
        map_arg((args, kwargs), lambda n: self._input_nodes.setdefault(n, None))
        for n in self._input_nodes:
            n.users.setdefault(self, None)

    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, value):
        self._update_args_kwargs(tuple(value), self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value):
        self._update_args_kwargs(self._args, dict(value))

    @property
    def all_input_nodes(self):
        return list(self._input_nodes)

    def update_arg(self, idx, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        self.kwargs = {**self.kwargs, key: arg}

    def replace_input_with(self, old, new):
        fn = lambda n: new if n is old else n  # noqa: E731
        self._update_args_kwargs(map_arg(self.args, fn), map_arg(self.kwargs, fn))

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True,
                              *, propagate_meta=False):
        """Every user of this node reads `replace_with` instead; returns those users."""
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        changed = []
        for user in list(self.users):
            if not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    # ---- position in the graph ----------------------------------------------------------
    @property
    def next(self):
        nodes = self.graph._nodes
        i = nodes.index(self)
        return nodes[i + 1] if i + 1 < len(nodes) else self.graph._root

    @property
    def prev(self):
        nodes = self.graph._nodes
        i = nodes.index(self)
        return nodes[i - 1] if i > 0 else self.graph._root

    def prepend(self, x):
        """Move node `x` to just before this one."""
        nodes = self.graph._nodes
        if x in nodes:
            nodes.remove(x)
        nodes.insert(nodes.index(self), x)

    def append(self, x):
        """Move node `x` to just after this one."""
        nodes = self.graph._nodes
        if x in nodes:
            nodes.remove(x)
        nodes.insert(nodes.index(self) + 1, x)

    # ---- printing -------------------------------------------------------------------------
    def _pretty(self, a):
        if isinstance(a, Node):
            return f"%{a.name}"
        if isinstance(a, tuple):
            inner = ", ".join(self._pretty(x) for x in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, list):
            return "[" + ", ".join(self._pretty(x) for x in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k}: {self._pretty(v)}" for k, v in a.items()) + "}"
        # fx prints a leaf argument with str(): a string bare (`getattr(%x, shape)`), a device
        # as `cpu`, a dtype as `torch.float32`
        return str(a) if not callable(a) else _target_name(a)

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        users = f"[num_users={len(self.users)}]"
        shown = type_name(self.type)
        if shown is not None:
            users = f"{shown} {users}"
        if self.op == "placeholder":
            default = f"(default={self.args[0]!r})" if self.args else ""
            return f"%{self.name} : {users} = placeholder[target={self.target}]{default}"
        if self.op == "get_attr":
            return f"%{self.name} : {users} = get_attr[target={self.target}]"
        if self.op == "output":
            return f"return {self.args[0]!r}"  # as Python writes it: a node reads as its name
        target = self.meta.get("torch_path") or _target_name(self.target)
        return (f"%{self.name} : {users} = {self.op}[target={target}]"
                f"(args = {self._pretty(self.args)}, kwargs = {self._pretty(self.kwargs)})")

    def __repr__(self):
        return self.name

    @property
    def stack_trace(self):
        """Where the node was made, when the tracer recorded it (ember's never does: None)."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    def is_impure(self):
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _side_effectful_functions or \
                getattr(self.target, "_is_impure", False) or \
                getattr(self.target, "__name__", "").endswith("_")
        if self.op == "call_method":
            return self.target.endswith("_")
        # a call_module is pure unless its module says otherwise (fx's rule), so dead code
        # elimination drops an unused one
        if self.op == "call_module":
            module = self.graph.owning_module
            try:
                sub = module.get_submodule(self.target)
            except AttributeError:  # no owning module, or the module is gone
                return False
            return bool(getattr(sub, "_is_impure", False))
        return False


def type_name(t):
    """How fx prints a node's type annotation (`%x : torch.Tensor [num_users=1]`); None for
    no annotation."""
    if t is None:
        return None
    if isinstance(t, type):
        from .._tensor import Tensor
        if issubclass(t, Tensor) and t.__module__.startswith("ember"):
            return "torch.Tensor"
        return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
    return repr(t).replace("ember.Tensor", "torch.Tensor")


def annotation_code(t, globals_):
    """A type annotation as fx writes it into generated code (`torch.Tensor`, `int`,
    `typing_Union[torch.Tensor,NoneType]`), registering the typing names it uses in
    `globals_`; None for one it cannot write (which is then left out)."""
    if isinstance(t, type):
        from .._tensor import Tensor
        if t is Tensor:
            return "torch.Tensor"
        if t is type(None):
            return "NoneType"
        return t.__name__ if t.__module__ == "builtins" else None
    origin, args = typing.get_origin(t), typing.get_args(t)
    name = "Union" if origin is typing.Union else getattr(t, "_name", None)
    if origin is None or name is None or not hasattr(typing, name):
        return None
    inner = [annotation_code(a, globals_) for a in args]
    if any(i is None for i in inner):
        return None
    globals_[f"typing_{name}"] = getattr(typing, name)
    return f"typing_{name}[{','.join(inner)}]" if inner else f"typing_{name}"

