"""`torch.export.save`/`load` for ember's programs: the graph as JSON (node targets as
`torch.` paths, resolved on load against ember's public namespaces and `operator` only, so a
file can name functions but never carries code) and the tensors through `ember.save`, read
back with `weights_only=True`."""
import builtins
import json
import operator

from ..fx._codegen import public_path
from ..fx.graph import Graph
from ..fx.graph_module import GraphModule
from ..fx.node import Node
from ..nn.modules.module import Module
from ._program import (ConstantArgument, ExportedProgram, ExportGraphSignature, InputKind,
                       InputSpec, OutputKind, OutputSpec, TensorArgument)

__all__ = ["save", "load"]

_FORMAT = "ember.export/1"
_OPERATORS = {name: getattr(operator, name) for name in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "neg", "pos", "invert",
    "getitem", "eq", "ne", "lt", "le", "gt", "ge", "and_", "or_", "xor", "lshift", "rshift",
    "abs", "not_")}


def _target(fn):
    if getattr(operator, getattr(fn, "__name__", ""), None) is fn:
        return f"operator.{fn.__name__}"
    if fn is getattr:
        return "builtins.getattr"
    path = public_path(fn)
    if path is None:
        raise ValueError(f"torch.export.save: {fn!r} is not one of ember's public functions, "
                         "so a saved program could not name it")
    return path


def _resolve(path):
    import sys
    if path.startswith("operator."):
        fn = _OPERATORS.get(path[9:])
    elif path == "builtins.getattr":
        fn = builtins.getattr
    elif path.startswith("torch."):
        parts = path.split(".")[1:]
        owner = sys.modules["ember"]
        for prefix in (["nn", "functional"], ["special"], ["linalg"], ["fft"], []):
            if parts[:len(prefix)] == prefix and len(parts) == len(prefix) + 1:
                import importlib
                owner = importlib.import_module(".".join(["ember"] + prefix))
                fn = getattr(owner, parts[-1], None)
                break
        else:
            fn = None
    else:
        fn = None
    if fn is None or not callable(fn) or isinstance(fn, type):
        raise ValueError(f"torch.export.load: the program names {path!r}, which is not one of "
                         "ember's public functions")
    return fn


def _encode(a):
    from .. import dtypes
    from ..device import device
    if isinstance(a, Node):
        return {"node": a.name}
    if isinstance(a, tuple):
        return {"tuple": [_encode(x) for x in a]}
    if isinstance(a, list):
        return [_encode(x) for x in a]
    if isinstance(a, dict):
        return {"dict": {k: _encode(v) for k, v in a.items()}}
    if isinstance(a, slice):
        return {"slice": [_encode(a.start), _encode(a.stop), _encode(a.step)]}
    if isinstance(a, dtypes.dtype):
        return {"dtype": a.name}
    if isinstance(a, device):
        return {"device": str(a)}
    if a is Ellipsis:
        return {"ellipsis": True}
    if isinstance(a, float) and (a != a or a in (float("inf"), float("-inf"))):
        return {"float": repr(a)}
    if a is None or isinstance(a, (bool, int, float, str)):
        return a
    raise ValueError(f"torch.export.save: cannot store the argument {a!r}")


def _decode(a, nodes):
    from .. import dtypes
    from ..device import device
    if isinstance(a, list):
        return [_decode(x, nodes) for x in a]
    if not isinstance(a, dict):
        return a
    (key, value), = a.items()
    if key == "node":
        return nodes[value]
    if key == "tuple":
        return tuple(_decode(x, nodes) for x in value)
    if key == "dict":
        return {k: _decode(v, nodes) for k, v in value.items()}
    if key == "slice":
        return slice(*(_decode(x, nodes) for x in value))
    if key == "dtype":
        d = getattr(dtypes, value, None)
        if not isinstance(d, dtypes.dtype):
            raise ValueError(f"torch.export.load: unknown dtype {value!r}")
        return d
    if key == "device":
        return device(value)
    if key == "ellipsis":
        return Ellipsis
    if key == "float":
        return float(value)
    raise ValueError(f"torch.export.load: unknown argument encoding {key!r}")


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2):
    from ..serialization import save as ember_save
    nodes = []
    for n in ep.graph.nodes:
        if n.op in ("call_module", "get_attr"):
            raise ValueError(f"torch.export.save: node {n.name} ({n.op}) refers to a module "
                             "attribute; only programs of functions can be saved")
        target = (n.meta.get("torch_path") or _target(n.target)) if n.op == "call_function" \
            else n.target
        nodes.append({"op": n.op, "name": n.name, "target": target,
                      "args": _encode(n.args), "kwargs": _encode(n.kwargs)})
    signature = {
        "inputs": [[s.kind.name, s.arg.name, s.target, s.persistent]
                   for s in ep.graph_signature.input_specs],
        "outputs": [[s.kind.name, getattr(s.arg, "name", None), s.target]
                    for s in ep.graph_signature.output_specs],
        "input_structures": _encode(ep._input_structures),
        "input_sizes": ep._input_sizes}
    ember_save({"format": _FORMAT, "graph": json.dumps({"nodes": nodes, "signature": signature}),
                "state_dict": dict(ep.state_dict), "constants": dict(ep.constants),
                "extra_files": dict(extra_files or {})}, f)


def load(f, *, extra_files=None, expected_opset_version=None):
    from ..serialization import load as ember_load
    data = ember_load(f, weights_only=True)
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise RuntimeError("torch.export.load: not a program saved by ember's torch.export.save")
    spec = json.loads(data["graph"])
    graph, nodes = Graph(), {}
    for item in spec["nodes"]:
        op = item["op"]
        if op not in ("placeholder", "call_function", "call_method", "output"):
            raise ValueError(f"torch.export.load: unexpected node kind {op!r}")
        target = _resolve(item["target"]) if op == "call_function" else str(item["target"])
        if op == "call_method" and not target.isidentifier():
            raise ValueError(f"torch.export.load: bad method name {target!r}")
        node = graph.create_node(op, target, _decode(item["args"], nodes),
                                 _decode(item["kwargs"], nodes), name=item["name"])
        if op == "call_function" and item["target"].startswith("torch."):
            node.meta["torch_path"] = item["target"]
        nodes[item["name"]] = node
    gm = GraphModule(Module(), graph)
    structures = _decode(spec["signature"].get("input_structures", {"dict": {}}), nodes)
    constants = _check_structures(structures, {
        n for k, n, *_ in spec["signature"]["inputs"] if k == InputKind.USER_INPUT.name})
    inputs = [InputSpec(InputKind[k], ConstantArgument(n, constants[n]) if n in constants
                        else TensorArgument(n), t, *rest)
              for k, n, t, *rest in spec["signature"]["inputs"]]
    outputs = [OutputSpec(OutputKind[k], TensorArgument(n), t)
               for k, n, t in spec["signature"]["outputs"]]
    if extra_files is not None:
        extra_files.update(data.get("extra_files", {}))
    sizes = spec["signature"].get("input_sizes", {})
    if not (isinstance(sizes, dict) and all(
            isinstance(v, list) and all(n is None or type(n) is int for n in v)
            for v in sizes.values())):
        raise ValueError("torch.export.load: the input sizes are not lists of sizes")
    return ExportedProgram(gm, ExportGraphSignature(inputs, outputs), data["state_dict"],
                           data["constants"], input_structures=structures, input_sizes=sizes)


def _check_structures(structures, user_inputs):
    """A file's container structures must name the program's own user inputs (a hand-edited
    file could otherwise make module() read leaves that are no inputs)."""
    from ._inputs import leaves
    constants = {}
    for arg, structure in structures.items():
        try:
            found = leaves(structure, arg)
        except (AttributeError, TypeError, ValueError):
            found = None
        if not found or not {leaf for leaf, _, _ in found} <= user_inputs:
            raise ValueError(f"torch.export.load: the input structure of {arg!r} does not "
                             "match the program's inputs")
        constants.update({leaf: s["const"] for leaf, _, s in found if s != "tensor"})
    return constants
