"""`torch.autograd.graph`: the graph's nodes as users see them (`Node`: name,
next_functions, metadata, register_hook, register_prehook), the edge that leads from a
tensor into the graph (`GradientEdge`, `get_gradient_edge`) and `increment_version`, which
marks a tensor as written in place by code autograd does not see."""
from typing import NamedTuple

from .._tensor import Tensor
from ..ops._graph import Node, edge

__all__ = ["GradientEdge", "Node", "get_gradient_edge", "increment_version"]


class GradientEdge(NamedTuple):
    """Where a tensor's gradient enters the graph: the node and which of its inputs."""
    node: Node
    output_nr: int
    ownership_token: object = None  # keeps what the node belongs to alive, where needed


def get_gradient_edge(tensor):
    """The GradientEdge through which `tensor`'s gradient flows (its grad_fn, or the
    accumulator of a leaf). A tensor that does not require grad has none."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, output_nr = edge(tensor)
    # a leaf's accumulator lives only while referenced: the edge owns the tensor with it
    return GradientEdge(node, output_nr, tensor if tensor.grad_fn is None else None)


def increment_version(tensor):
    """Bump the version counter of `tensor` (or of each tensor in an iterable): a backward
    that saved it before then raises, as after any in-place write."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._vc.value += 1
