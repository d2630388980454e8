"""Python source for a Graph, written as PyTorch's fx writes it: one line per node, a name
dropped (`x = None`) after its last use, ember's functions under their `torch.` paths."""
import builtins
import keyword
import operator

from .node import annotation_code

__all__ = ["public_path", "python_code", "PythonCode"]

_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
           operator.matmul: "@", operator.lshift: "<<", operator.rshift: ">>",
           operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.eq: "==",
           operator.ne: "!=", operator.lt: "<", operator.le: "<=", operator.gt: ">",
           operator.ge: ">="}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}
_NAMESPACES = (("", "ember"), ("nn.functional.", "ember.nn.functional"),
               ("special.", "ember.special"), ("linalg.", "ember.linalg"), ("fft.", "ember.fft"))


def public_path(fn):
    """`torch.<path>` under which ember exposes `fn`, or None."""
    import importlib
    import sys
    name = getattr(fn, "__name__", None)
    if name is None:
        return None
    from ..ops._aten import OpOverload, OpOverloadPacket
    from ..ops._numpy_names import binds
    if isinstance(fn, OpOverloadPacket):
        return f"torch.ops.{fn.namespace}.{fn._opname}"
    if isinstance(fn, OpOverload):
        return f"torch.ops.{fn.namespace}.{fn._opname}.{fn._overloadname}"
    for prefix, module_name in _NAMESPACES:
        module = sys.modules.get(module_name) or importlib.import_module(module_name)
        original = getattr(module, "_fx_originals", {}).get(name)
        if binds(getattr(module, name, None), fn) or binds(original, fn):
            return f"torch.{prefix}{name}"
    module_name = getattr(fn, "__module__", None) or ""
    if module_name.startswith("ember.fx.") and \
            getattr(sys.modules.get(module_name), name, None) is fn:
        return "torch" + module_name[len("ember"):] + "." + name  # fx's own helpers
    return None


class PythonCode:
    def __init__(self, src, globals_):
        self.src, self.globals = src, globals_


def _repr(a, globals_):
    """Source for a constant argument."""
    from .node import Node
    from .. import dtypes
    from ..device import device as Device
    if isinstance(a, Node):
        return a.name
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        inner = ", ".join(_repr(x, globals_) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(_repr(x, globals_) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k!r}: {_repr(v, globals_)}" for k, v in a.items()) + "}"
    if isinstance(a, slice):
        return (f"slice({_repr(a.start, globals_)}, {_repr(a.stop, globals_)}, "
                f"{_repr(a.step, globals_)})")
    if isinstance(a, dtypes.dtype):
        return f"torch.{a.name}"
    if isinstance(a, Device):
        globals_["device"] = Device
        return repr(a)
    if a is Ellipsis:
        return "Ellipsis"
    if isinstance(a, float) and (a != a or a in (float("inf"), float("-inf"))):
        return repr(a)  # `-inf`, `nan` as fx writes them: the code's globals bind inf and nan
    if callable(a) and not isinstance(a, type):
        return _callable(a, globals_)
    return repr(a)


def _callable(fn, globals_):
    path = public_path(fn)
    if path is not None:
        return path
    name = getattr(fn, "__name__", None)
    if name is not None and getattr(builtins, name, None) is fn:
        return name
    key = "_".join(filter(None, [getattr(fn, "__module__", "") or "", name or "fn"]))
    key = "".join(c if c.isalnum() else "_" for c in key)
    while key in globals_ and globals_[key] is not fn:
        key += "_"
    globals_[key] = fn
    return key


def _args(args, kwargs, globals_):
    parts = [_repr(a, globals_) for a in args]
    parts += [f"{k} = {_repr(v, globals_)}" for k, v in kwargs.items()]
    return ", ".join(parts)


def _attr_path(target, root="self"):
    """`self.a.b`, with `getattr(..., "0")` for a part that is not an identifier (a
    Sequential's child), as fx writes it."""
    out = root
    for part in target.split("."):
        if part.isidentifier() and not keyword.iskeyword(part):
            out += f".{part}"
        else:
            out = f"getattr({out}, {part!r})".replace("'", '"')
    return out


def python_code(graph, root_module="self"):
    import sys
    globals_ = {"torch": sys.modules["ember"], "operator": operator, "inf": float("inf"),
                "nan": float("nan"), "NoneType": type(None)}
    nodes = list(graph.nodes)
    # walking backwards, a value's first user met is its last; values dying at one node are
    # listed in the order that node reads them (`add = bn2 + x;  bn2 = x = None`), as fx does
    seen, dies_at = set(), {}
    for node in reversed(nodes):
        for inp in node.all_input_nodes:
            if inp not in seen:
                seen.add(inp)
                dies_at.setdefault(node, []).append(inp)
    params, body = [], []
    for node in nodes:
        line = _line(node, globals_, root_module, params)
        if line is None:
            continue
        dead = [v.name for v in dies_at.get(node, []) if node.op != "output"]
        if node.op != "output" and not node.users and node.op != "placeholder":
            dead.append(node.name)
        if dead:
            line += ";  " + " = ".join(dead) + " = None"
        body.append("    " + line)
    if not body or not body[-1].lstrip().startswith("return"):
        body.append("    return None")
    signature = ", ".join([root_module] + params)
    returns = annotation_code(nodes[-1].type, globals_) if nodes and \
        nodes[-1].op == "output" else None
    if returns is not None:
        signature += f") -> {returns}"
    else:
        signature += ")"
    # functions registered with fx.wrap stay wrapped when the code is traced again
    from ._symbolic_trace import _wrapped
    wrapped = {id(g.get(name)) for g, name in _wrapped}
    heads = []
    for node in nodes:
        if node.op == "call_function" and id(node.target) in wrapped:
            line = f'torch.fx._symbolic_trace.wrap("{_callable(node.target, globals_)}")'
            if line not in heads:
                heads.append(line)
    src = "\n" + "\n".join(heads) + f"\n\ndef forward({signature}:\n" + "\n".join(body) + \
        "\n    "
    return PythonCode(src, globals_)


def _line(node, globals_, self_name, params):
    op, target = node.op, node.target
    if op == "placeholder":
        annotation = annotation_code(node.type, globals_)
        param = target if annotation is None else f"{target} : {annotation}"
        if isinstance(target, str) and target.startswith("*"):
            params.append(target)
        elif node.args:
            params.append(f"{param} = {_repr(node.args[0], globals_)}")
        else:
            params.append(param)
        # a parameter named like a builtin (`input`) gets its node's own name, as in fx
        bare = target.lstrip("*") if isinstance(target, str) else target
        return None if node.name == bare else f"{node.name} = {bare}"
    if op == "output":
        return f"return {_repr(node.args[0], globals_)}"
    if op == "get_attr":
        return f"{node.name} = {_attr_path(target, self_name)}"
    if op == "call_module":
        return f"{node.name} = {_attr_path(target, self_name)}" \
               f"({_args(node.args, node.kwargs, globals_)})"
    if op == "call_method":
        obj, rest = node.args[0], node.args[1:]
        return f"{node.name} = {_repr(obj, globals_)}.{target}" \
               f"({_args(rest, node.kwargs, globals_)})"
    # call_function
    if target in _BINARY and len(node.args) == 2 and not node.kwargs:
        a, b = (_repr(x, globals_) for x in node.args)
        return f"{node.name} = {a} {_BINARY[target]} {b}"
    if target in _UNARY and len(node.args) == 1 and not node.kwargs:
        return f"{node.name} = {_UNARY[target]}{_repr(node.args[0], globals_)}"
    if target is operator.getitem and len(node.args) == 2:
        obj, index = node.args
        # fx writes the index object as it is: `x[(slice(None, None, None), 0)]`
        return f"{node.name} = {_repr(obj, globals_)}[{_repr(index, globals_)}]"
    if target is getattr and len(node.args) == 2 and isinstance(node.args[1], str):
        return f"{node.name} = {_repr(node.args[0], globals_)}.{node.args[1]}"
    name = node.meta.get("torch_path") or _callable(target, globals_)
    return f"{node.name} = {name}({_args(node.args, node.kwargs, globals_)})"
