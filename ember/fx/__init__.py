"""`torch.fx`: capture a module's forward as a Graph of Nodes by tracing it with Proxies,
edit the graph, and run it again as a GraphModule (whose `code` is the Python it becomes)."""
from . import passes
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter",
           "Transformer", "Node", "has_side_effect", "Proxy", "map_arg", "replace_pattern",
           "PH", "passes"]
