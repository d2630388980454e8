"""The sharded parameters and gradients FSDP leaves on a module.

PyTorch's are `nn.Parameter`s of DTensors, and a DTensor is a Tensor subclass whose ops are
rewritten by sharding propagation. ember's DTensor is not a Tensor, yet the optimizer must
step these parameters in place with ordinary ops. So a sharded parameter here is a Tensor
whose memory is this rank's shard (what every op, the optimizer and `load_state_dict`
compute on) that also is a DTensor: `isinstance(p, DTensor)`, `placements`, `device_mesh`,
`to_local()`, `full_tensor()` and `redistribute()` answer as PyTorch's. The difference:
`shape`, `size()` and `numel()` are the local shard's (as a Tensor's must be for the ops);
the global shape is `p._shape`."""
from ..._tensor import Tensor, _make
from ...nn.parameter import Parameter
from ..tensor._api import DTensor

__all__ = []


class _ShardedTensor(Tensor, DTensor):
    """A Tensor holding this rank's shard, read as the DTensor it is part of."""

    @property
    def _local_tensor(self):
        # a plain Tensor alias in the graph: gathering it sends gradients back to self
        return self.view_as(self)

    def to_local(self, *, grad_placements=None):
        return self._local_tensor

    def detach(self):
        return _sharded(_ShardedTensor, Tensor.detach(self), self)

    def __repr__(self):
        return (f"DTensor(local_tensor={Tensor.detach(self)!r}, device_mesh={self._mesh!r}, "
                f"placements={self._placements!r})")

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        raise NotImplementedError("ember: a DTensor cannot be pickled or saved; save "
                                  "`full_tensor()` (on every rank) or `to_local()` instead")

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            copied = _sharded(type(self), Tensor.detach(self).clone(), self)
            memo[id(self)] = copied.requires_grad_(self.requires_grad)
        return memo[id(self)]


class _ShardedParameter(_ShardedTensor, Parameter):
    """The sharded parameter an FSDP module registers between forwards: the one the
    optimizer holds and steps."""


# named as PyTorch's class, since users print `type(p).__name__` of state-dict values
_ShardedTensor.__name__ = _ShardedTensor.__qualname__ = "DTensor"
_ShardedParameter.__name__ = _ShardedParameter.__qualname__ = "DTensor"


def _sharded(cls, local, like):
    """`local` (sharing its memory and version counter) as a `cls` laid out as `like`."""
    out = _make(cls, local._array, local._device, version=local._vc)
    out._mesh, out._placements, out._shape = like._mesh, like._placements, like._shape
    return out


def make_sharded_parameter(local, mesh, placements, global_shape, requires_grad):
    out = _make(_ShardedParameter, local._array, local._device)
    out._mesh, out._placements = mesh, tuple(placements)
    out._shape = DTensor(local, mesh, placements, global_shape)._shape
    return out.requires_grad_(requires_grad)


def sharded_like(local, param):
    """A gradient (or any tensor of the shard's shape) laid out as `param`."""
    return _sharded(_ShardedTensor, local, param)
