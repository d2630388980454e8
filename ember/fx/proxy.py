"""`torch.fx.Proxy`: what a traced program computes with. Every operation on a Proxy
records a Node in the tracer's graph and returns a Proxy of it; control flow on a Proxy
cannot be recorded and raises TraceError (an exporting tracer resolves sizes on its
example instead)."""
import operator

__all__ = ["Proxy", "TraceError", "Attribute", "ParameterProxy"]  # (+ GraphAppendingTracer)


class TraceError(ValueError):
    pass


class Proxy:
    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = getattr(node.graph, "_tracer", None)
        if tracer is None:
            from ._symbolic_trace import GraphAppendingTracer
            tracer = node.graph._tracer = GraphAppendingTracer(node.graph)
        self.node, self.tracer = node, tracer

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, name):
        # a private attribute (`_array`...) is ember's internals reaching into a tensor: it
        # has no traced meaning, and handing out the example's would bake it into the graph
        if name.startswith("_") or name in ("node", "tracer"):
            raise AttributeError(f"'Proxy' object has no attribute '{name}': an ember "
                                 "function that records no node was called with a traced "
                                 "value")
        return self.tracer.proxy_getattr(self, name)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __getitem__(self, index):
        return self.tracer.create_proxy("call_function", operator.getitem, (self, index), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    def __iter__(self):
        return self.tracer.iter(self)

    def __len__(self):
        return self.tracer.len(self)

    def __index__(self):
        return self.tracer.to_int(self)

    def __int__(self):
        return self.tracer.to_int(self)

    def __float__(self):
        return float(self.tracer.to_int(self, float))

    def keys(self):
        return self.tracer.keys(self)

    def __setitem__(self, index, value):
        self.tracer.create_proxy("call_function", operator.setitem, (self, index, value), {})

    def __contains__(self, item):
        raise TraceError("Proxy object cannot be used in `in` tests; symbolic tracing cannot "
                         "record control flow")


class Attribute(Proxy):
    """`proxy.name`: a `getattr` node made only if the attribute is used as a value; calling
    it records a `call_method` instead."""

    def __init__(self, root, attr):
        self.root, self.attr, self.tracer = root, attr, root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.call_method(self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A parameter read in a traced forward: its shape and dtype are known constants."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        self.param, self.name = param, name

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()


def _binary(op, reflected=False):
    def method(self, other):
        args = (other, self) if reflected else (self, other)
        return self.tracer.create_proxy("call_function", op, args, {})
    return method


for _name, _op in [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("floordiv", operator.floordiv),
                   ("mod", operator.mod), ("pow", operator.pow), ("matmul", operator.matmul),
                   ("lshift", operator.lshift), ("rshift", operator.rshift),
                   ("and", operator.and_), ("or", operator.or_), ("xor", operator.xor)]:
    setattr(Proxy, f"__{_name}__", _binary(_op))
    setattr(Proxy, f"__r{_name}__", _binary(_op, reflected=True))
for _name, _op in [("eq", operator.eq), ("ne", operator.ne), ("lt", operator.lt),
                   ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge)]:
    setattr(Proxy, f"__{_name}__", _binary(_op))
for _name, _op in [("neg", operator.neg), ("pos", operator.pos), ("invert", operator.invert),
                   ("abs", operator.abs)]:
    setattr(Proxy, f"__{_name}__",
            (lambda op: lambda self: self.tracer.create_proxy("call_function", op,
                                                               (self,), {}))(_op))
Proxy.__hash__ = object.__hash__


def __getattr__(name):
    if name == "GraphAppendingTracer":  # (defined with the Tracer it extends)
        from ._symbolic_trace import GraphAppendingTracer
        return GraphAppendingTracer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
