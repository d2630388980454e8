"""GeneralizedRCNNTransform (torchvision.models.detection.transform): the detectors' input
side (normalise each image, resize it so its short side is min_size without the long side
passing max_size, scale the target boxes alike, pad the batch to a multiple of
size_divisible) and output side (boxes scaled back to the original image sizes)."""
import math

from .... import as_tensor, float32, nn, stack, tensor, uint8
from ....nn import functional as F
from .image_list import ImageList
from .roi_heads import paste_masks_in_image

__all__ = ["GeneralizedRCNNTransform", "resize_boxes", "resize_keypoints"]


def _resize_image_and_masks(image, self_min_size, self_max_size, target=None, fixed_size=None):
    size = scale_factor = recompute_scale_factor = None
    if fixed_size is not None:
        size = [fixed_size[1], fixed_size[0]]
    else:
        h, w = image.shape[-2:]
        scale_factor = min(self_min_size / min(h, w), self_max_size / max(h, w))
        recompute_scale_factor = True
    image = F.interpolate(image[None], size=size, scale_factor=scale_factor, mode="bilinear",
                          recompute_scale_factor=recompute_scale_factor, align_corners=False)[0]
    if target is None:
        return image, target
    if "masks" in target:
        mask = F.interpolate(target["masks"][:, None].float(), size=size,
                             scale_factor=scale_factor,
                             recompute_scale_factor=recompute_scale_factor)[:, 0]
        target["masks"] = mask.to(uint8)
    return image, target


def _ratios(original_size, new_size, device):
    return [tensor(s, dtype=float32, device=device) / tensor(s_orig, dtype=float32, device=device)
            for s, s_orig in zip(new_size, original_size)]


def resize_boxes(boxes, original_size, new_size):
    ratio_h, ratio_w = _ratios(original_size, new_size, boxes.device)
    xmin, ymin, xmax, ymax = boxes.unbind(1)
    return stack((xmin * ratio_w, ymin * ratio_h, xmax * ratio_w, ymax * ratio_h), dim=1)


def resize_keypoints(keypoints, original_size, new_size):
    ratio_h, ratio_w = _ratios(original_size, new_size, keypoints.device)
    resized = keypoints.clone()
    resized[..., 0] *= ratio_w
    resized[..., 1] *= ratio_h
    return resized


class GeneralizedRCNNTransform(nn.Module):
    """In training, min_size may be a sequence: each image's short side is drawn from it at
    random (multi-scale training); in eval the last entry is used."""

    def __init__(self, min_size, max_size, image_mean, image_std, size_divisible=32,
                 fixed_size=None, **kwargs):
        super().__init__()
        if not isinstance(min_size, (list, tuple)):
            min_size = (min_size,)
        self.min_size = min_size
        self.max_size = max_size
        self.image_mean = image_mean
        self.image_std = image_std
        self.size_divisible = size_divisible
        self.fixed_size = fixed_size
        self._skip_resize = kwargs.pop("_skip_resize", False)

    def forward(self, images, targets=None):
        images = list(images)
        if targets is not None:
            targets = [dict(t) for t in targets]  # resizing rewrites the boxes: not the caller's
        for i, image in enumerate(images):
            if image.dim() != 3:
                raise ValueError("images is expected to be a list of 3d tensors of shape "
                                 f"[C, H, W], got {image.shape}")
            target = targets[i] if targets is not None else None
            image, target = self.resize(self.normalize(image), target)
            images[i] = image
            if targets is not None and target is not None:
                targets[i] = target
        image_sizes = [tuple(int(s) for s in img.shape[-2:]) for img in images]
        batched = self.batch_images(images, size_divisible=self.size_divisible)
        return ImageList(batched, image_sizes), targets

    def normalize(self, image):
        if not image.is_floating_point():
            raise TypeError("Expected input images to be of floating type (in range [0, 1]), "
                            f"but found type {image.dtype} instead")
        mean = as_tensor(self.image_mean, dtype=image.dtype, device=image.device)
        std = as_tensor(self.image_std, dtype=image.dtype, device=image.device)
        return (image - mean[:, None, None]) / std[:, None, None]

    def torch_choice(self, k):
        from .... import empty
        index = int(empty(1).uniform_(0.0, float(len(k))).item())
        return k[index]

    def resize(self, image, target=None):
        h, w = image.shape[-2:]
        if self.training:
            if self._skip_resize:
                return image, target
            size = self.torch_choice(self.min_size)
        else:
            size = self.min_size[-1]
        image, target = _resize_image_and_masks(image, size, self.max_size, target,
                                                self.fixed_size)
        if target is None:
            return image, target
        target["boxes"] = resize_boxes(target["boxes"], (h, w), image.shape[-2:])
        if "keypoints" in target:
            target["keypoints"] = resize_keypoints(target["keypoints"], (h, w),
                                                   image.shape[-2:])
        return image, target

    def max_by_axis(self, the_list):
        maxes = list(the_list[0])
        for sublist in the_list[1:]:
            for index, item in enumerate(sublist):
                maxes[index] = max(maxes[index], item)
        return maxes

    def batch_images(self, images, size_divisible=32):
        max_size = self.max_by_axis([list(img.shape) for img in images])
        stride = float(size_divisible)
        max_size[1] = int(math.ceil(float(max_size[1]) / stride) * stride)
        max_size[2] = int(math.ceil(float(max_size[2]) / stride) * stride)
        batched = images[0].new_full([len(images)] + max_size, 0)
        for i, img in enumerate(images):
            batched[i, :img.shape[0], :img.shape[1], :img.shape[2]].copy_(img)
        return batched

    def postprocess(self, result, image_shapes, original_image_sizes):
        if self.training:
            return result
        for i, (pred, im_s, o_im_s) in enumerate(zip(result, image_shapes, original_image_sizes)):
            result[i]["boxes"] = resize_boxes(pred["boxes"], im_s, o_im_s)
            if "masks" in pred:
                result[i]["masks"] = paste_masks_in_image(pred["masks"], result[i]["boxes"],
                                                          o_im_s)
            if "keypoints" in pred:
                result[i]["keypoints"] = resize_keypoints(pred["keypoints"], im_s, o_im_s)
        return result

    def __repr__(self):
        indent = "\n    "
        return (f"{self.__class__.__name__}("
                f"{indent}Normalize(mean={self.image_mean}, std={self.image_std})"
                f"{indent}Resize(min_size={self.min_size}, max_size={self.max_size}, "
                "mode='bilinear')\n)")
