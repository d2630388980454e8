"""The keyword names PyTorch accepts for each public callable, read from PyTorch itself.

For a Python-defined torch function that is `inspect.signature`. The C-bound ones have no
signature, so their names come from three places PyTorch ships, joined:
- the type stubs generated from the Python argument parser's own signatures
  (`torch/_C/_VariableFunctions.pyi` for `torch.*`, class `TensorBase` in `torch/_C/__init__.pyi`
  for methods, `torch/_C/_nn.pyi`), one `def` per overload;
- the signature lines of the docstring (`zeros(*size, *, out=None, dtype=None, ...) -> Tensor`);
- the ATen schemas (`aten::linalg_norm(Tensor self, ...)`), where `self` is the `input` keyword.
A `*size` parameter counts as the keyword `size`: the parser takes `zeros(size=(2, 3))` too.
"""
import ast
import functools
import inspect
import os
import re


def _stub_path(torch, name):
    return os.path.join(os.path.dirname(torch.__file__), "_C", name)


def _params_of(fn_node):
    a = fn_node.args
    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    if a.vararg is not None:
        names.append(a.vararg.arg)
    return names


@functools.lru_cache(maxsize=None)
def _stub_defs(torch, filename, class_name=None):
    """{function name: set of parameter names over its overloads} of one stub file (or of one
    class in it)."""
    path = _stub_path(torch, filename)
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        tree = ast.parse(f.read())
    scope = tree
    if class_name is not None:
        scope = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    defs = {}
    # defs may sit under `if sys.version_info ...` blocks, so walk the whole scope
    for node in ast.walk(scope):
        if isinstance(node, ast.FunctionDef):
            defs.setdefault(node.name, set()).update(_params_of(node))
    return defs


_SIG_LINE = re.compile(r"^\s*(?:[\w.]+\.)?(\w+)\((.*)\)\s*->")


def _doc_names(obj, name):
    """Parameter names of the docstring's signature lines for `name`."""
    names = set()
    for line in (getattr(obj, "__doc__", None) or "").splitlines():
        m = _SIG_LINE.match(line)
        if not m or m.group(1) != name:
            continue
        for part in m.group(2).split(","):
            part = part.strip().lstrip("*").split("=")[0].split(":")[0].strip()
            if part.isidentifier():
                names.add(part)
    return names


def _schema_names(torch, aten_name):
    names = set()
    try:
        schemas = torch._C._jit_get_schemas_for_operator(f"aten::{aten_name}")
    except Exception:
        return names
    for s in schemas:
        for arg in s.arguments:
            # an out variant's written arguments (`L`, `info`) are the Python `out=` tuple
            names.add("input" if arg.name == "self" else "out" if arg.is_out else arg.name)
    return names


def torch_keywords(torch, obj, namespace, name):
    """The keyword names `obj` (torch's `<namespace>.<name>`) accepts; None when unknown.
    namespace: "torch", "Tensor", "nn.functional", "linalg", "fft", "special"."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        names = set()
        for p in sig.parameters.values():
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                names.add(p.name)
            elif p.kind == p.VAR_KEYWORD:
                return None  # takes anything: nothing to hold ember to
        names.discard("self")
        return names
    # the stubs and schemas are the parser's own names; a docstring's signature line sometimes
    # names a parameter otherwise (`bmm(batch2)` for the parser's `mat2`), so it is the last resort
    if namespace == "Tensor":
        names = set(_stub_defs(torch, "__init__.pyi", "TensorBase").get(name, ()))
    elif namespace == "torch":
        names = set(_stub_defs(torch, "_VariableFunctions.pyi").get(name, ()))
    elif namespace == "nn.functional":
        names = set(_stub_defs(torch, "_nn.pyi").get(name, ()))
        names |= _stub_defs(torch, "_VariableFunctions.pyi").get(name, set())
    else:
        names = _schema_names(torch, name if name.startswith(namespace) else f"{namespace}_{name}")
    if not names:
        names = _doc_names(obj, name)
    names.discard("self")
    return names or None
