"""The inference presets that torchvision's weights carry (`Weights.transforms`): the
preprocessing a pretrained model expects, as a Module (torchvision.transforms._presets).

Each accepts a PIL image, a (C, H, W) image tensor or a (B, C, H, W) batch, uint8 or float."""
from ... import Tensor, float32 as _float32, nn
from . import functional as F
from .functional import InterpolationMode

__all__ = ["ObjectDetection", "ImageClassification", "VideoClassification",
           "SemanticSegmentation"]

_IMAGENET_MEAN = (0.485, 0.456, 0.406)
_IMAGENET_STD = (0.229, 0.224, 0.225)


def _as_float_tensor(img):
    if not isinstance(img, Tensor):
        img = F.pil_to_tensor(img)
    return F.convert_image_dtype(img, _float32)


class ObjectDetection(nn.Module):
    """Detection models normalise inside the model, so this only rescales to [0, 1]."""

    def forward(self, img):
        return _as_float_tensor(img)

    def __repr__(self):
        return f"{type(self).__name__}()"

    def describe(self):
        return ("Accepts ``PIL.Image``, batched ``(B, C, H, W)`` and single ``(C, H, W)`` image "
                "``torch.Tensor`` objects. The images are rescaled to ``[0.0, 1.0]``.")


class ImageClassification(nn.Module):
    """Resize the short side to `resize_size`, center-crop `crop_size`, rescale to [0, 1],
    normalise with `mean` / `std`."""

    def __init__(self, *, crop_size, resize_size=256, mean=_IMAGENET_MEAN, std=_IMAGENET_STD,
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img):
        img = F.resize(img, self.resize_size, interpolation=self.interpolation,
                       antialias=self.antialias)
        img = _as_float_tensor(F.center_crop(img, self.crop_size))
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        fields = ("crop_size", "resize_size", "mean", "std", "interpolation")
        return f"{type(self).__name__}(" + "".join(
            f"\n    {name}={getattr(self, name)}" for name in fields) + "\n)"

    def describe(self):
        return ("Accepts ``PIL.Image``, batched ``(B, C, H, W)`` and single ``(C, H, W)`` image "
                f"``torch.Tensor`` objects. The images are resized to ``resize_size="
                f"{self.resize_size}`` using ``interpolation={self.interpolation}``, followed by a "
                f"central crop of ``crop_size={self.crop_size}``. Finally the values are first "
                f"rescaled to ``[0.0, 1.0]`` and then normalized using ``mean={self.mean}`` and "
                f"``std={self.std}``.")


class VideoClassification(nn.Module):
    """Video frames (T, C, H, W), or a batch of them (N, T, C, H, W): every frame resized (short
    side to `resize_size`, or to (h, w)) and center-cropped to `crop_size`, rescaled to [0, 1]
    and normalised with the Kinetics-400 statistics; returned as (..., C, T, H, W)."""

    def __init__(self, *, crop_size, resize_size, mean=(0.43216, 0.394666, 0.37645),
                 std=(0.22803, 0.22145, 0.216989), interpolation=InterpolationMode.BILINEAR):
        super().__init__()
        self.crop_size = list(crop_size)
        self.resize_size = list(resize_size)
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation

    def forward(self, vid):
        single = vid.ndim < 5
        if single:
            vid = vid.unsqueeze(dim=0)
        n, t, c, h, w = vid.shape
        vid = vid.reshape(-1, c, h, w)
        # no antialiasing: the published video weights were trained with torchvision's old
        # default, so their preprocessing keeps it
        vid = F.resize(vid, self.resize_size, interpolation=self.interpolation, antialias=False)
        vid = F.convert_image_dtype(F.center_crop(vid, self.crop_size), _float32)
        vid = F.normalize(vid, mean=self.mean, std=self.std)
        vid = vid.reshape(n, t, c, *self.crop_size).permute(0, 2, 1, 3, 4)
        return vid.squeeze(dim=0) if single else vid

    def __repr__(self):
        fields = ("crop_size", "resize_size", "mean", "std", "interpolation")
        return f"{type(self).__name__}(" + "".join(
            f"\n    {name}={getattr(self, name)}" for name in fields) + "\n)"

    def describe(self):
        return ("Accepts batched ``(B, T, C, H, W)`` and single ``(T, C, H, W)`` video frame "
                f"``torch.Tensor`` objects. The frames are resized to ``resize_size="
                f"{self.resize_size}`` using ``interpolation={self.interpolation}``, followed by a "
                f"central crop of ``crop_size={self.crop_size}``. Finally the values are first "
                "rescaled to ``[0.0, 1.0]`` and then normalized using ``mean="
                f"{self.mean}`` and ``std={self.std}``. Finally the output dimensions are "
                "permuted to ``(..., C, T, H, W)`` tensors.")


class SemanticSegmentation(nn.Module):
    """Resize the short side to `resize_size` (None: keep the size), rescale to [0, 1],
    normalise with `mean` / `std`."""

    def __init__(self, *, resize_size, mean=_IMAGENET_MEAN, std=_IMAGENET_STD,
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.resize_size = [resize_size] if resize_size is not None else None
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img):
        if self.resize_size is not None:
            img = F.resize(img, self.resize_size, interpolation=self.interpolation,
                           antialias=self.antialias)
        return F.normalize(_as_float_tensor(img), mean=self.mean, std=self.std)

    def __repr__(self):
        fields = ("resize_size", "mean", "std", "interpolation")
        return f"{type(self).__name__}(" + "".join(
            f"\n    {name}={getattr(self, name)}" for name in fields) + "\n)"

    def describe(self):
        return ("Accepts ``PIL.Image``, batched ``(B, C, H, W)`` and single ``(C, H, W)`` image "
                f"``torch.Tensor`` objects. The images are resized to ``resize_size="
                f"{self.resize_size}`` using ``interpolation={self.interpolation}``. Finally the "
                "values are first rescaled to ``[0.0, 1.0]`` and then normalized using "
                f"``mean={self.mean}`` and ``std={self.std}``.")
