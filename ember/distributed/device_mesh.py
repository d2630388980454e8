"""`torch.distributed.device_mesh`: ranks laid out as an n-dimensional array, with one process
group per mesh dimension (the ranks that differ only in that coordinate). Tensor parallelism,
FSDP and DTensor name a mesh dimension where PyTorch's collectives take a group."""
import math

from .. import dtypes as _dt
from ..ops import creation as _creation
from . import distributed_c10d as _c10d

__all__ = ["init_device_mesh", "DeviceMesh"]


class DeviceMesh:
    """`mesh`: the global ranks (a tensor or nested list), `mesh_dim_names` optional names of
    its dimensions. Making a mesh starts the default process group if none is running (from
    the environment, as `init_process_group()`), then the group of each dimension."""

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, backend_override=None,
                 _init_backend=True):
        self.device_type = device_type
        mesh = mesh.detach().to("cpu") if hasattr(mesh, "detach") else _creation.tensor(mesh)
        self.mesh = mesh.to(_dt.int32)
        self.mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names is not None else None
        if self.mesh_dim_names is not None and len(self.mesh_dim_names) != self.mesh.dim():
            raise RuntimeError(f"mesh_dim_names should have the same length as the mesh's "
                               f"dimensions! Found len(mesh_dim_names): "
                               f"{len(self.mesh_dim_names)} and mesh.ndim: {self.mesh.dim()}.")
        if _init_backend:
            if not _c10d.is_initialized():
                _c10d.init_process_group()
            world = _c10d.get_world_size()
            if self.mesh.numel() > world:
                raise RuntimeError(f"Mesh should not be bigger than default world size "
                                   f"{world}, but found {self.mesh.numel()} ranks!")
            self._groups = [self._make_group(d) for d in range(self.mesh.dim())]
        self._coordinate = self._find(_c10d.get_rank())

    def _make_group(self, dim):
        """The process group of this rank along `dim`. Every rank creates every group of the
        dimension, in the same order, as `new_group` requires; a dimension that spans the
        whole world uses the default group."""
        rows = self.mesh.movedim(dim, -1).reshape(-1, self.mesh.size(dim)).tolist()
        if len(rows) == 1 and sorted(rows[0]) == list(range(_c10d.get_world_size())):
            return _c10d.group.WORLD
        mine = None
        for ranks in rows:
            group = _c10d.new_group(ranks)
            if _c10d.get_rank() in ranks:
                mine = group
        return mine

    def _find(self, rank):
        flat = self.mesh.flatten().tolist()
        if rank not in flat:
            return None
        index, coordinate = flat.index(rank), []
        for size in reversed(self.mesh.shape):
            coordinate.append(index % size)
            index //= size
        return tuple(reversed(coordinate))

    # ---- shape -------------------------------------------------------------------------------
    @property
    def ndim(self):
        return self.mesh.dim()

    @property
    def shape(self):
        return tuple(self.mesh.shape)

    def size(self, mesh_dim=None):
        if mesh_dim is None:
            return self.mesh.numel()
        return self.shape[mesh_dim]

    def _dim(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if not self.mesh_dim_names or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist. Available mesh "
                               f"dimensions are: mesh_dim_names={self.mesh_dim_names}")
            return self.mesh_dim_names.index(mesh_dim)
        return mesh_dim

    # ---- this rank ---------------------------------------------------------------------------
    def get_rank(self):
        return _c10d.get_rank()

    def get_coordinate(self):
        """This rank's position in the mesh, or None when the mesh does not hold it."""
        return self._coordinate

    def get_local_rank(self, mesh_dim=None):
        if mesh_dim is None:
            if self.ndim > 1:
                raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                                   "Optional kwarg `mesh_dim` needs to be specified when "
                                   "device_mesh.ndim > 1.")
            mesh_dim = 0
        return self._coordinate[self._dim(mesh_dim)]

    def get_group(self, mesh_dim=None):
        if mesh_dim is None:
            if self.ndim > 1:
                raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                                   "Optional kwarg `mesh_dim` needs to be specified when "
                                   "device_mesh.ndim > 1.",
                                   "If you want to get the list of all the ProcessGroups in "
                                   "the DeviceMesh,please use `get_all_groups()` instead.")
            mesh_dim = 0
        return self._groups[self._dim(mesh_dim)]

    def get_all_groups(self):
        return list(self._groups)

    # ---- sub-meshes --------------------------------------------------------------------------
    def __getitem__(self, mesh_dim_names):
        """The mesh of the named dimensions through this rank (their groups are this mesh's:
        no process group is created)."""
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if not self.mesh_dim_names or any(n not in self.mesh_dim_names for n in names):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names "
                           f"are {list(self.mesh_dim_names or ())}.")
        if names == self.mesh_dim_names:
            return self
        dims = [self.mesh_dim_names.index(n) for n in names]
        index = tuple(slice(None) if d in dims else self._coordinate[d]
                      for d in range(self.ndim))
        sub = DeviceMesh(self.device_type, self.mesh[index].permute(*_order(dims)),
                         mesh_dim_names=names, _init_backend=False)
        sub._groups = [self._groups[d] for d in dims]
        return sub

    # ---- identity and printing ---------------------------------------------------------------
    def _key(self):
        return (self.device_type, self.shape, tuple(self.mesh.flatten().tolist()),
                self.mesh_dim_names)

    def __eq__(self, other):
        return isinstance(other, DeviceMesh) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        names = self.mesh_dim_names
        sizes = (f"({', '.join(f'{n}={s}' for n, s in zip(names, self.shape))})" if names
                 else f"{self.shape}")
        # PyTorch prints its layout's strides: a dimension of size one has none
        strides = [math.prod(self.shape[d + 1:]) for d in range(self.ndim)]
        stride = tuple(s if size > 1 else () for s, size in zip(strides, self.shape))
        return f"DeviceMesh({sizes}, '{self.device_type}', stride={stride})"


def _order(dims):
    """The permutation that puts the kept dimensions (in mesh order after slicing) in the
    order the caller named them."""
    kept = sorted(dims)
    return [kept.index(d) for d in dims]


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A mesh of `mesh_shape` over ranks 0 .. prod(mesh_shape)-1, in row-major order."""
    mesh_shape = tuple(mesh_shape)
    if mesh_dim_names is not None and len(set(mesh_dim_names)) != len(mesh_dim_names):
        raise RuntimeError("Each mesh_dim_name must be unique.",
                           f"Found repeated mesh_dim_name in mesh_dim_names {mesh_dim_names}")
    if mesh_dim_names is not None and len(mesh_shape) != len(mesh_dim_names):
        raise RuntimeError(f"mesh_shape and mesh_dim_names should have same length! Found "
                           f"len(mesh_dim_names): {len(mesh_dim_names)} and "
                           f"len(mesh_shape):{len(mesh_shape)}.")
    if device_type and not device_type.isalpha():
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. "
                           "If you maintained a 'torch.device' object, it's recommended to "
                           "pass in 'device.type'.")
    from ..ops.ranges import arange
    mesh = arange(math.prod(mesh_shape), dtype=_dt.int32).view(mesh_shape)
    return DeviceMesh(device_type, mesh, mesh_dim_names=mesh_dim_names,
                      backend_override=backend_override)
