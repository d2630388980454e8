"""`torch.fx.GraphModule`: a Module whose forward is the Python source generated from its
Graph; it holds the submodules, parameters and buffers the graph reads."""
import copy

from ..nn.modules.module import Module
from .graph import Graph

__all__ = ["GraphModule"]


def _copy_attr(src, dst, target):
    """Give `dst` the object at dotted `target` of `src`, making empty Modules on the way."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(src, item)
        t = getattr(dst, item, None)
        if t is None or t is f:
            t = Module()
            setattr(dst, item, t)
        src, dst = f, t
    value = getattr(src, field)
    from .._tensor import Tensor
    from ..nn.parameter import Parameter
    if isinstance(value, Tensor) and not isinstance(value, Parameter) and \
            field in getattr(src, "_buffers", {}):
        dst.register_buffer(field, value, persistent=field not in getattr(
            src, "_non_persistent_buffers_set", ()))
    else:
        setattr(dst, field, value)


class GraphModule(Module):
    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__ = type(class_name, (GraphModule,), {}) \
            if type(self) is GraphModule else type(self)
        self.__class__.__module__ = GraphModule.__module__
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    *prefix, field = node.target.split(".")
                    owner = self
                    for item in prefix:
                        if not hasattr(owner, item):
                            setattr(owner, item, Module())
                        owner = getattr(owner, item)
                    setattr(owner, field, root[node.target])
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph

    @property
    def graph(self):
        return self._graph

    @graph.setter
    def graph(self, g):
        assert isinstance(g, Graph), f"Expected a Graph, got {type(g)}"
        object.__setattr__(self, "_graph", g)
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        return self._code

    def recompile(self):
        """Generate the forward again from the graph (after editing it)."""
        python_code = self._graph.python_code(root_module="self")
        object.__setattr__(self, "_code", python_code.src)
        namespace = dict(python_code.globals)
        exec(compile(python_code.src, f"<eval_with_key>.{id(self)}", "exec"), namespace)
        type(self).forward = namespace["forward"]
        return python_code

    def __call__(self, *args, **kwargs):
        """Called on Proxies (of another graph being built), the forward records into that
        graph: its tracer's recording forms are put in place for the call."""
        from .node import map_aggregate
        from .proxy import Proxy
        proxies = []
        map_aggregate((args, kwargs), lambda a: proxies.append(a) if isinstance(a, Proxy)
                      else None)
        if not proxies or proxies[0].tracer._active:
            return super().__call__(*args, **kwargs)
        with proxies[0].tracer._patched():
            return super().__call__(*args, **kwargs)

    def add_submodule(self, target, m):
        """Install `m` at the dotted path `target`, making the plain Modules on the way;
        False when a step on the way is not a Module."""
        *path, last = target.split(".")
        owner = self
        for item in path:
            child = getattr(owner, item, None)
            if child is None:
                child = Module()
                owner.add_module(item, child)
            elif not isinstance(child, Module):
                return False
            owner = child
        owner.add_module(last, m)
        return True

    def delete_submodule(self, target):
        """Remove the submodule at `target`; False when there is none."""
        *path, last = target.split(".")
        owner = self
        for item in path:
            owner = getattr(owner, item, None)
            if not isinstance(owner, Module):
                return False
        if not isinstance(getattr(owner, last, None), Module):
            return False
        delattr(owner, last)
        return True

    def delete_all_unused_submodules(self):
        """Drop every submodule no call_module or get_attr node reaches (a used module keeps
        its ancestors; a called module keeps its children)."""
        used = set()
        for node in self._graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = node.target.split(".")
                used.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
                if node.op == "call_module":
                    sub = self.get_submodule(node.target)
                    used.update(f"{node.target}.{name}" for name, _ in sub.named_modules()
                                if name)
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)

    def print_readable(self, print_output=True, include_stride=False, include_device=False,
                       colored=False):
        lines = [f"class {type(self).__name__}(torch.nn.Module):"]
        body = self._code.strip("\n").split("\n")
        if any(n.op not in ("placeholder", "output") for n in self.graph.nodes):
            # ember records no stack traces on nodes; fx says so above the first node that is
            # not a parameter's (`input_1 = input`), a blank line below those
            params = {f"    {n.name} = {n.target.lstrip('*')}" for n in self.graph.nodes
                      if n.op == "placeholder"}
            first = next(i for i, line in enumerate(body) if line.startswith("    ")
                         and not line.lstrip().startswith("#") and line not in params)
            note = ["    # No stacktrace found for following nodes"]
            body[first:first] = ([""] + note) if body[first - 1] in params else note
        lines += ["    " + line if line else line for line in body]
        out = "\n".join(lines).rstrip() + "\n"
        if print_output:
            print(out)
        return out

    def __str__(self):
        # the module, its code, and fx's reminder line, one line apart
        return "\n".join([super().__str__(), self._code,
                          "# To see more debug info, please use `graph_module.print_readable()`"])

    def __copy__(self):
        return GraphModule(self, self._graph, type(self).__name__)

    def __deepcopy__(self, memo):
        root = Module()
        for name, module in self.named_children():
            setattr(root, name, copy.deepcopy(module, memo))
        for name, p in self._parameters.items():
            setattr(root, name, copy.deepcopy(p, memo))
        for name, b in self._buffers.items():
            root.register_buffer(name, copy.deepcopy(b, memo))
        return GraphModule(root, copy.deepcopy(self._graph, memo), type(self).__name__)

    def __reduce__(self):
        """Pickled as its attributes (submodules, parameters, buffers) and its Graph, whose
        node targets pickle by reference; loading rebuilds the forward from the graph."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        return (_rebuild, (state, self._graph, type(self).__name__))


def _rebuild(state, graph, class_name):
    root = Module()
    root.__dict__.update(state)
    return GraphModule(root, graph, class_name)
