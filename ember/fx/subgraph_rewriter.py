"""`torch.fx.subgraph_rewriter.replace_pattern`: find every match of a pattern function's
graph in a GraphModule and splice in the replacement function's graph."""
from typing import NamedTuple

__all__ = ["replace_pattern", "Match"]


class Match(NamedTuple):
    anchor: object
    nodes_map: dict


def _graph_of(fn):
    from ._symbolic_trace import symbolic_trace
    return fn.graph if hasattr(fn, "graph") else symbolic_trace(fn).graph


def _same_target(p, g):
    if p.op != g.op:
        return False
    if p.op in ("call_function", "call_method"):
        return p.target == g.target or getattr(p.target, "__fx_original__", None) is g.target
    if p.op == "get_attr":
        return True
    return p.op != "call_module" or p.target == g.target


def _match(pnode, gnode, mapping):
    """Whether the pattern rooted at `pnode` matches at `gnode` (extending `mapping`)."""
    if pnode in mapping:
        return mapping[pnode] is gnode
    if pnode.op == "placeholder":  # a pattern input matches any value
        mapping[pnode] = gnode
        return True
    if not _same_target(pnode, gnode) or len(pnode.args) != len(gnode.args) or \
            set(pnode.kwargs) != set(gnode.kwargs):
        return False
    mapping[pnode] = gnode
    pairs = list(zip(pnode.args, gnode.args)) + [(pnode.kwargs[k], gnode.kwargs[k])
                                                 for k in pnode.kwargs]
    for pa, ga in pairs:
        from .node import Node
        if isinstance(pa, Node):
            if not isinstance(ga, Node) or not _match(pa, ga, mapping):
                return False
        elif pa != ga:
            return False
    return True


def replace_pattern(gm, pattern, replacement):
    """Replace each non-overlapping match of `pattern` (a function or GraphModule) in `gm`
    by `replacement`; returns the Matches, and recompiles `gm`."""
    pattern_graph, replacement_graph = _graph_of(pattern), _graph_of(replacement)
    p_out = next(n for n in pattern_graph.nodes if n.op == "output")
    p_anchor = p_out.args[0]
    p_inputs = [n for n in pattern_graph.nodes if n.op == "placeholder"]
    matches, used = [], set()
    for gnode in list(gm.graph.nodes):
        mapping = {}
        if gnode in used or not _match(p_anchor, gnode, mapping):
            continue
        inner = [g for p, g in mapping.items() if p.op != "placeholder"]
        if any(g in used for g in inner):
            continue
        # interior nodes may not be read from outside the match
        if any(u not in inner for g in inner if g is not gnode for u in g.users):
            continue
        used.update(inner)
        matches.append(Match(gnode, dict(mapping)))
    graph = gm.graph
    for match in matches:
        anchor = match.anchor
        val_map = {}
        r_inputs = [n for n in replacement_graph.nodes if n.op == "placeholder"]
        for r, p in zip(r_inputs, p_inputs):
            val_map[r] = match.nodes_map[p]
        with graph.inserting_before(anchor):
            result = graph.graph_copy(replacement_graph, val_map)
        anchor.replace_all_uses_with(result)
        for node in reversed([g for p, g in match.nodes_map.items()
                              if p.op != "placeholder"]):
            if not node.users:
                graph.erase_node(node)
    gm.recompile()
    return matches
