"""`torch.fx.Interpreter` runs a GraphModule node by node (each kind of node a method a
subclass may override); `Transformer` runs it to build a new graph."""
from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env = {}
        self.garbage_collect_values = garbage_collect_values
        self.user_to_last_uses = {}
        last_use = {}
        for node in self.graph.nodes:
            for inp in node.all_input_nodes:
                last_use[inp] = node
        for value, user in last_use.items():
            self.user_to_last_uses.setdefault(user, []).append(value)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        self.env = dict(initial_env or {})
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, []):
                    self.env.pop(dead, None)
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        """`run` on a list of inputs that it empties (the caller hands over its references)."""
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    def run_node(self, n):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def fetch_args_kwargs_from_env(self, n):
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        def load(a):
            if a not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {a}! Run "
                                   "Graph.lint() to diagnose such issues")
            return self.env[a]
        return map_arg(args, load)

    def placeholder(self, target, args, kwargs):
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but "
                               "one was not passed in!") from None

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    def fetch_attr(self, target):
        owner = self.module
        for i, atom in enumerate(target.split(".")):
            if not hasattr(owner, atom):
                raise RuntimeError(f"Node referenced nonexistent target "
                                   f"{'.'.join(target.split('.')[:i + 1])}")
            owner = getattr(owner, atom)
        return owner


class Transformer(Interpreter):
    """Interpret a GraphModule over Proxies, so that each (overridden) method's result is
    recorded into a new graph; `transform()` returns the new GraphModule."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        from ._symbolic_trace import Tracer

        class _Recorder(Tracer):
            def __init__(self, graph, root):
                super().__init__()
                self.graph, self.root = graph, root
                self._tensor_constants, self._attr_proxies, self._size_cache = {}, {}, {}
                self._tensor_names, self._computing = None, 0

            def is_leaf_module(self, m, name):
                return True
        self.tracer = _Recorder(self.new_graph, module)
        self.new_graph._tracer = self.tracer

    def placeholder(self, target, args, kwargs):
        default = args[0] if args else __import__("inspect").Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target, args, kwargs):
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def transform(self):
        result = super().run(enable_io_processing=False)
        if result is not None:
            self.new_graph.output(map_aggregate(
                result, lambda a: a.node if isinstance(a, Proxy) else a))
        return GraphModule(self.module, self.new_graph)
