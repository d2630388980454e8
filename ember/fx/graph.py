"""`torch.fx.Graph`: the ordered nodes of a traced program, the API to edit them, and their
printed forms (the graph listing, `print_tabular`, and Python source via _codegen)."""
import builtins
import contextlib
import inspect
import keyword
import re

from ._codegen import python_code
from .node import Node, map_arg

__all__ = ["Graph", "PythonCode"]

from ._codegen import PythonCode  # noqa: E402


def _snake(name):
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", name)
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    if name and name[0].isdigit():
        name = "_" + name
    return name or "_"


class _Namespace:
    """Unique node names, as fx makes them: `add`, `add_1`, ...; never a builtin's or a
    keyword's name (`sum` becomes `sum_1`, a parameter `input` is the node `input_1`)."""

    def __init__(self):
        self._used, self._count = set(), {}

    def create(self, candidate, placeholder=False):
        """A placeholder keeps its parameter's spelling (not snake-cased)."""
        base = candidate if placeholder else _snake(candidate)
        match = re.fullmatch(r"(.*)_(\d+)", base)
        if match and match.group(1) in self._count:
            base = match.group(1)
        name = base
        if name in self._used or keyword.iskeyword(name) or \
                hasattr(builtins, name) or \
                name in ("torch", "self", "operator", "device"):
            k = self._count.get(base, 0) + 1
            while f"{base}_{k}" in self._used:
                k += 1
            self._count[base] = k
            name = f"{base}_{k}"
        self._count.setdefault(base, 0)
        self._used.add(name)
        return name


class Graph:
    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._nodes = []
        self._root = Node.__new__(Node)
        self._root.graph, self._root.op, self._root.name = self, "root", "root"
        self._namespace = _Namespace()
        self._insert = None  # (node, "before"|"after") or None: at the end
        self.owning_module = owning_module
        self._tracer_cls = tracer_cls

    @property
    def nodes(self):
        return _NodeList(self._nodes)

    def _insert_node(self, node):
        if self._insert is None:
            self._nodes.append(node)
            return
        anchor, where = self._insert
        i = self._nodes.index(anchor)
        self._nodes.insert(i if where == "before" else i + 1, node)
        if where == "after":
            self._insert = (node, "after")

    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        candidate = name or (target if isinstance(target, str) else
                             getattr(target, "__name__", "node"))
        if op in ("call_module", "get_attr") and name is None:
            candidate = target.replace(".", "_")
        if op == "call_method" and name is None and len(target) > 4 and \
                target.startswith("__") and target.endswith("__"):
            candidate = target[2:-2]  # `__floordiv__` names its node `floordiv`, as in fx
        if op == "call_function" and name is None:
            # fx keeps a function's own name (`_assert`), dropping only a dunder's underscores
            candidate = getattr(target, "__name__", "fn")
            if candidate.startswith("__") and candidate.endswith("__") and len(candidate) > 4:
                candidate = candidate[2:-2]
        node = Node(self, self._namespace.create(candidate, placeholder=op == "placeholder"),
                    op, target, args or (),
                    kwargs or {}, type_expr)
        self._insert_node(node)
        return node

    # ---- the node-making API -------------------------------------------------------------
    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        node = self.create_node("placeholder", name, args, type_expr=type_expr)
        return node

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args, kwargs,
                                type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        new.meta = dict(node.meta)
        return new

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy `g`'s nodes into this graph (`val_map` maps old nodes to new ones);
        returns the copied output value."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                result = map_arg(node.args[0], lambda n: val_map[n])
                return (result, node) if return_output_node else result
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    @contextlib.contextmanager
    def inserting_before(self, n=None):
        previous = self._insert
        self._insert = (n, "before") if n is not None else \
            ((self._nodes[0], "before") if self._nodes else None)
        try:
            yield
        finally:
            self._insert = previous

    @contextlib.contextmanager
    def inserting_after(self, n=None):
        previous = self._insert
        self._insert = (n, "after") if n is not None else \
            ((self._nodes[0], "before") if self._nodes else None)
        try:
            yield
        finally:
            self._insert = previous

    def erase_node(self, to_erase):
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        to_erase._update_args_kwargs((), {})
        self._nodes.remove(to_erase)

    def eliminate_dead_code(self, is_impure_node=None):
        """Erase nodes nobody uses that have no side effects; True if any went."""
        changed = False
        for node in reversed(list(self._nodes)):
            impure = is_impure_node(node) if is_impure_node else node.is_impure()
            if not node.users and not impure:
                self.erase_node(node)
                changed = True
        return changed

    def find_nodes(self, *, op, target=None, sort=True):
        return [n for n in self._nodes if n.op == op and (target is None or n.target == target)]

    def lint(self):
        """Check the graph's invariants: names unique, every argument defined before use and
        in this graph, users consistent, at most one output, at the end."""
        seen, names = set(), set()
        for i, node in enumerate(self._nodes):
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            for arg in node.all_input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong "
                                       "to this Graph, but was used as an argument! If you "
                                       "are copying nodes from another graph, make sure to "
                                       "use ``arg_transform`` on node_copy() to remap values"
                                       f"\n{self}")
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it "
                                       "has been defined! Please check that Nodes in the "
                                       "graph are topologically ordered\n{self}")
                if node not in arg.users:
                    raise RuntimeError(f"Node {node} uses {arg} but is not in its users")
            if node.op == "output" and i != len(self._nodes) - 1:
                raise RuntimeError("Graph has an output node that is not the last node")
            seen.add(node)

    # ---- printing -------------------------------------------------------------------------
    def python_code(self, root_module="self", **kwargs):
        return python_code(self, root_module)

    def __str__(self):
        lines = ["graph():"]
        for node in self._nodes:
            lines.append("    " + node.format_node())
        return "\n".join(lines)

    def print_tabular(self):
        """The nodes as a table, laid out as fx's (tabulate's "simple" format: a column is
        as wide as its longest cell, and at least its header plus two)."""
        rows = [(n.op, n.name, str(n.target), str(n.args), str(n.kwargs)) for n in self._nodes]
        header = ("opcode", "name", "target", "args", "kwargs")
        widths = [max([len(r[i]) for r in rows] + [len(header[i]) + 2]) for i in range(5)]
        out = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(),
               "  ".join("-" * w for w in widths)]
        out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        print("\n".join(out))

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_tracer", None)
        state["owning_module"] = None
        return state

    def __deepcopy__(self, memo):
        g = Graph(tracer_cls=self._tracer_cls)
        result = g.graph_copy(self, {})
        if result is not None:
            g.output(result)
        return g


class _NodeList:
    """`graph.nodes`: iterable (safely while nodes are erased), sized, reversible."""

    def __init__(self, nodes):
        self._nodes = nodes

    def __iter__(self):
        return iter(list(self._nodes))

    def __len__(self):
        return len(self._nodes)

    def __reversed__(self):
        return iter(list(reversed(self._nodes)))

    def __getitem__(self, i):
        return self._nodes[i]
