"""`ember.vision.tv_tensors` (torchvision.tv_tensors): Tensor subclasses that tell the v2
transforms what a tensor is. `Image` is a (..., C, H, W) image; `BoundingBoxes` are (N, 4)
axis-aligned boxes that know their format and the size of the image they belong to; `Mask`
is a (..., H, W) segmentation or instance mask, moved with the image but never rescaled.

As in torchvision, ops on them give plain tensors (an `Image + 1` is a Tensor), except
clone, to, detach and requires_grad_, which keep the type and metadata.
"""
import enum

from .._tensor import Tensor, _make
from .._printing import tensor_repr

__all__ = ["TVTensor", "Image", "BoundingBoxes", "BoundingBoxFormat", "Mask", "Video", "wrap"]


def _as_tensor(data, dtype=None, device=None, requires_grad=None):
    from .. import as_tensor
    if requires_grad is None:
        requires_grad = data.requires_grad if isinstance(data, Tensor) else False
    t = as_tensor(data, dtype=dtype, device=device)
    if requires_grad and not t.requires_grad:
        t = t.requires_grad_(True)
    return t


def _rewrap(cls, tensor, **meta):
    """`tensor` seen as `cls`: the same storage, version counter and autograd history (a
    leaf that requires grad is aliased, so gradients still reach it, as torch's as_subclass
    does)."""
    if tensor._requires_grad and tensor._grad_fn is None:
        from ..ops._graph import record
        from ..ops.shape import AliasBackward0, make_view_of
        alias = make_view_of(tensor, tensor._array.view(), lambda b: b)
        record(AliasBackward0, (tensor,), alias)
        tensor = alias
    out = _make(cls, tensor._array, tensor._device, base=tensor._base, version=tensor._vc)
    out._requires_grad = tensor._requires_grad
    out._grad_fn = tensor._grad_fn
    out._output_nr = tensor._output_nr
    out._view_fn = tensor._view_fn
    for k, v in meta.items():
        setattr(out, k, v)
    return out


class TVTensor(Tensor):
    def _meta(self):
        return {}

    def as_subclass(self, cls):
        return _rewrap(cls, self) if cls is not Tensor else _rewrap(Tensor, self)

    def clone(self, *args, **kwargs):
        return _rewrap(type(self), super().clone(*args, **kwargs), **self._meta())

    def to(self, *args, **kwargs):
        return _rewrap(type(self), super().to(*args, **kwargs), **self._meta())

    def detach(self):
        return _rewrap(type(self), super().detach(), **self._meta())

    def _make_repr(self, **kwargs):
        base = tensor_repr(self, prefix=f"{type(self).__name__}(")
        extra = ", ".join(f"{k}={v}" for k, v in kwargs.items())
        return f"{base[:-1]}, {extra})"

    def __repr__(self, *, tensor_contents=None):
        return self._make_repr()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        return self.clone()

    def __reduce_ex__(self, proto):
        return (_rebuild, (type(self), Tensor.detach(self).clone(), self._meta()))


def _rebuild(cls, tensor, meta):
    return _rewrap(cls, tensor, **meta)


class Image(TVTensor):
    """A (..., C, H, W) image; a 2-D input gets a channel dimension, PIL images are read."""

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        try:
            from PIL import Image as _PIL
        except ImportError:
            _PIL = None
        if _PIL is not None and isinstance(data, _PIL.Image):
            from .transforms import functional as F
            data = F.pil_to_tensor(data)
        tensor = _as_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        if tensor.ndim < 2:
            raise ValueError(f"Tensor must be 2D or higher, got {tensor.ndim}D tensor.")
        if tensor.ndim == 2:
            tensor = tensor.unsqueeze(0)
        return _rewrap(cls, tensor)

    def __init__(self, *args, **kwargs):
        pass


class Mask(TVTensor):
    """A segmentation mask, (..., H, W); PIL images are read as (C, H, W)."""

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        try:
            from PIL import Image as _PIL
        except ImportError:
            _PIL = None
        if _PIL is not None and isinstance(data, _PIL.Image):
            from .transforms import functional as F
            data = F.pil_to_tensor(data)
        return _rewrap(cls, _as_tensor(data, dtype=dtype, device=device,
                                       requires_grad=requires_grad))

    def __init__(self, *args, **kwargs):
        pass


class Video(TVTensor):
    """A (..., T, C, H, W) video."""

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        tensor = _as_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        if tensor.ndim < 4:
            raise ValueError  # torchvision raises it bare
        return _rewrap(cls, tensor)

    def __init__(self, *args, **kwargs):
        pass


class BoundingBoxFormat(enum.Enum):
    """Axis-aligned box formats: corners, corner + size, centre + size."""
    XYXY = "XYXY"
    XYWH = "XYWH"
    CXCYWH = "CXCYWH"


class BoundingBoxes(TVTensor):
    """(N, 4) boxes in `format` on an image of `canvas_size` (height, width)."""

    def __new__(cls, data, *, format, canvas_size, clamping_mode="soft", dtype=None,
                device=None, requires_grad=None):
        tensor = _as_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        if tensor.ndim == 1:
            tensor = tensor.unsqueeze(0)
        elif tensor.ndim != 2:
            raise ValueError(f"Expected a 1D or 2D tensor, got {tensor.ndim}D")
        if isinstance(format, str):
            format = BoundingBoxFormat[format.upper()]
        if clamping_mode is not None and clamping_mode not in ("soft", "hard"):
            raise ValueError(f"clamping_mode must be None, soft or hard, got {clamping_mode}.")
        return _rewrap(cls, tensor, format=format, canvas_size=tuple(canvas_size),
                       clamping_mode=clamping_mode)

    def __init__(self, *args, **kwargs):
        pass

    def _meta(self):
        return {"format": self.format, "canvas_size": self.canvas_size,
                "clamping_mode": self.clamping_mode}

    def __repr__(self, *, tensor_contents=None):
        return self._make_repr(format=self.format, canvas_size=self.canvas_size,
                               clamping_mode=self.clamping_mode)

    __str__ = __repr__


def wrap(wrappee, *, like, **kwargs):
    """`wrappee` as the same TVTensor type as `like`, with its metadata (kwargs override)."""
    meta = like._meta()
    meta.update(kwargs)
    return _rewrap(type(like), wrappee, **meta)
