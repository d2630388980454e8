"""Learned and random augmentation policies (torchvision.transforms.autoaugment): AutoAugment
with its ImageNet / CIFAR10 / SVHN policies, RandAugment, TrivialAugmentWide and AugMix.

The operation tables, magnitude ranges and the order of random draws are torchvision's, so
the same sampled operation gives the same image; the draws themselves come from ember's
default generator.
"""
import math
from enum import Enum

from ..._tensor import Tensor
from ...nn import Module
from . import functional as F
from .functional import InterpolationMode

__all__ = ["AutoAugmentPolicy", "AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix"]


def _randint(high):
    from ...ops.random_ops import randint
    return int(randint(high, (1,)).item())


def _affine(img, interpolation, fill, translate=(0, 0), shear=(0.0, 0.0), center=None):
    return F.affine(img, angle=0.0, translate=list(translate), scale=1.0, shear=list(shear),
                    interpolation=interpolation, fill=fill, center=center)


def _apply_op(img, op_name, magnitude, interpolation, fill):
    # shears follow torchvision: the angle whose tangent is the magnitude, about the corner
    if op_name == "ShearX":
        return _affine(img, interpolation, fill, shear=[math.degrees(math.atan(magnitude)), 0.0],
                       center=[0, 0])
    if op_name == "ShearY":
        return _affine(img, interpolation, fill, shear=[0.0, math.degrees(math.atan(magnitude))],
                       center=[0, 0])
    if op_name == "TranslateX":
        return _affine(img, interpolation, fill, translate=[int(magnitude), 0])
    if op_name == "TranslateY":
        return _affine(img, interpolation, fill, translate=[0, int(magnitude)])
    if op_name == "Rotate":
        return F.rotate(img, magnitude, interpolation=interpolation, fill=fill)
    enhancers = {"Brightness": F.adjust_brightness, "Color": F.adjust_saturation,
                 "Contrast": F.adjust_contrast, "Sharpness": F.adjust_sharpness}
    if op_name in enhancers:
        return enhancers[op_name](img, 1.0 + magnitude)
    if op_name == "Posterize":
        return F.posterize(img, int(magnitude))
    if op_name == "Solarize":
        return F.solarize(img, magnitude)
    plain = {"AutoContrast": F.autocontrast, "Equalize": F.equalize, "Invert": F.invert}
    if op_name in plain:
        return plain[op_name](img)
    if op_name == "Identity":
        return img
    raise ValueError(f"The provided operator {op_name} is not recognized.")


def _linspace(end, num_bins):
    from ...ops.ranges import linspace
    return linspace(0.0, end, num_bins)


def _posterize_bits(top, num_bins, spread):
    from ...ops.ranges import arange
    return top - (arange(num_bins) / ((num_bins - 1) / spread)).round().int()


def _scalar_zero():
    from ...ops.creation import tensor
    return tensor(0.0)


def _space(num_bins, image_size, shear, translate, rotate, enhance, posterize_top,
           posterize_spread, with_identity, with_invert):
    """op name -> (magnitudes, signed), in torchvision's order."""
    from ...ops.ranges import linspace
    space = {"Identity": (_scalar_zero(), False)} if with_identity else {}
    space.update({
        "ShearX": (_linspace(shear, num_bins), True),
        "ShearY": (_linspace(shear, num_bins), True),
        "TranslateX": (_linspace(translate[1], num_bins), True),
        "TranslateY": (_linspace(translate[0], num_bins), True),
        "Rotate": (_linspace(rotate, num_bins), True)})
    for name in ("Brightness", "Color", "Contrast", "Sharpness"):
        space[name] = (_linspace(enhance, num_bins), True)
    space["Posterize"] = (_posterize_bits(posterize_top, num_bins, posterize_spread), False)
    space["Solarize"] = (linspace(255.0, 0.0, num_bins), False)
    space["AutoContrast"] = (_scalar_zero(), False)
    space["Equalize"] = (_scalar_zero(), False)
    if with_invert:
        space["Invert"] = (_scalar_zero(), False)
    return space


def _autoaugment_space(num_bins, image_size, with_identity, with_invert):
    translate = [150.0 / 331.0 * image_size[0], 150.0 / 331.0 * image_size[1]]
    return _space(num_bins, image_size, 0.3, translate, 30.0, 0.9, 8, 4, with_identity,
                  with_invert)


def _tensor_fill(fill, img):
    if isinstance(img, Tensor):
        channels = F.get_dimensions(img)[0]
        if isinstance(fill, (int, float)):
            return [float(fill)] * channels
        if fill is not None:
            return [float(f) for f in fill]
    return fill


class AutoAugmentPolicy(Enum):
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


# (op, probability, magnitude bin) pairs, from the AutoAugment paper's learned policies
_POLICIES = {
    AutoAugmentPolicy.IMAGENET: """
        Posterize .4 8 Rotate .6 9 | Solarize .6 5 AutoContrast .6 - | Equalize .8 - Equalize .6 -
        Posterize .6 7 Posterize .6 6 | Equalize .4 - Solarize .2 4 | Equalize .4 - Rotate .8 8
        Solarize .6 3 Equalize .6 - | Posterize .8 5 Equalize 1 - | Rotate .2 3 Solarize .6 8
        Equalize .6 - Posterize .4 6 | Rotate .8 8 Color .4 0 | Rotate .4 9 Equalize .6 -
        Equalize 0 - Equalize .8 - | Invert .6 - Equalize 1 - | Color .6 4 Contrast 1 8
        Rotate .8 8 Color 1 2 | Color .8 8 Solarize .8 7 | Sharpness .4 7 Invert .6 -
        ShearX .6 5 Equalize 1 - | Color .4 0 Equalize .6 - | Equalize .4 - Solarize .2 4
        Solarize .6 5 AutoContrast .6 - | Invert .6 - Equalize 1 - | Color .6 4 Contrast 1 8
        Equalize .8 - Equalize .6 -""",
    AutoAugmentPolicy.CIFAR10: """
        Invert .1 - Contrast .2 6 | Rotate .7 2 TranslateX .3 9 | Sharpness .8 1 Sharpness .9 3
        ShearY .5 8 TranslateY .7 9 | AutoContrast .5 - Equalize .9 - | ShearY .2 7 Posterize .3 7
        Color .4 3 Brightness .6 7 | Sharpness .3 9 Brightness .7 9 | Equalize .6 - Equalize .5 -
        Contrast .6 7 Sharpness .6 5 | Color .7 7 TranslateX .5 8 | Equalize .3 - AutoContrast .4 -
        TranslateY .4 3 Sharpness .2 6 | Brightness .9 6 Color .2 8 | Solarize .5 2 Invert 0 -
        Equalize .2 - AutoContrast .6 - | Equalize .2 - Equalize .6 - | Color .9 9 Equalize .6 -
        AutoContrast .8 - Solarize .2 8 | Brightness .1 3 Color .7 0 | Solarize .4 5 AutoContrast .9 -
        TranslateY .9 9 TranslateY .7 9 | AutoContrast .9 - Solarize .8 3 | Equalize .8 - Invert .1 -
        TranslateY .7 9 AutoContrast .9 -""",
    AutoAugmentPolicy.SVHN: """
        ShearX .9 4 Invert .2 - | ShearY .9 8 Invert .7 - | Equalize .6 - Solarize .6 6
        Invert .9 - Equalize .6 - | Equalize .6 - Rotate .9 3 | ShearX .9 4 AutoContrast .8 -
        ShearY .9 8 Invert .4 - | ShearY .9 5 Solarize .2 6 | Invert .9 - AutoContrast .8 -
        Equalize .6 - Rotate .9 3 | ShearX .9 4 Solarize .3 3 | ShearY .8 8 Invert .7 -
        Equalize .9 - TranslateY .6 6 | Invert .9 - Equalize .6 - | Contrast .3 3 Rotate .8 4
        Invert .8 - TranslateY 0 2 | ShearY .7 6 Solarize .4 8 | Invert .6 - Rotate .8 4
        ShearY .3 7 TranslateX .9 3 | ShearX .1 6 Invert .6 - | Solarize .7 2 TranslateY .6 7
        ShearY .8 4 Invert .8 - | ShearX .7 9 TranslateY .8 3 | ShearY .8 5 AutoContrast .7 -
        ShearX .7 2 Invert .1 -""",
}


def _parse_policy(text):
    policy = []
    for sub in text.replace("\n", "|").split("|"):
        words = sub.split()
        if not words:
            continue
        policy.append(tuple((words[i], float(words[i + 1]),
                             None if words[i + 2] == "-" else int(words[i + 2]))
                            for i in (0, 3)))
    return policy


class AutoAugment(Module):
    def __init__(self, policy=AutoAugmentPolicy.IMAGENET,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.policy = policy
        self.interpolation = interpolation
        self.fill = fill
        self.policies = self._get_policies(policy)

    def _get_policies(self, policy):
        if policy not in _POLICIES:
            raise ValueError(f"The provided policy {policy} is not recognized.")
        return _parse_policy(_POLICIES[policy])

    def _augmentation_space(self, num_bins, image_size):
        return _autoaugment_space(num_bins, image_size, with_identity=False, with_invert=True)

    @staticmethod
    def get_params(transform_num):
        """(policy index, two application probabilities, two signs)."""
        from ...ops.random_ops import rand, randint
        policy_id = _randint(transform_num)
        return policy_id, rand((2,)), randint(2, (2,))

    def forward(self, img):
        fill = _tensor_fill(self.fill, img)
        _, height, width = F.get_dimensions(img)
        transform_id, probs, signs = self.get_params(len(self.policies))
        op_meta = self._augmentation_space(10, (height, width))
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[transform_id]):
            if float(probs[i]) <= p:
                magnitudes, signed = op_meta[op_name]
                magnitude = float(magnitudes[magnitude_id].item()) \
                    if magnitude_id is not None else 0.0
                if signed and int(signs[i]) == 0:
                    magnitude *= -1.0
                img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(policy={self.policy}, fill={self.fill})"


class RandAugment(Module):
    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins, image_size):
        return _autoaugment_space(num_bins, image_size, with_identity=True, with_invert=False)

    def forward(self, img):
        fill = _tensor_fill(self.fill, img)
        _, height, width = F.get_dimensions(img)
        op_meta = self._augmentation_space(self.num_magnitude_bins, (height, width))
        for _ in range(self.num_ops):
            op_name = list(op_meta)[_randint(len(op_meta))]
            magnitudes, signed = op_meta[op_name]
            magnitude = float(magnitudes[self.magnitude].item()) if magnitudes.ndim > 0 else 0.0
            if signed and _randint(2):
                magnitude *= -1.0
            img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self):
        return (f"{type(self).__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}, "
                f"num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")


class TrivialAugmentWide(Module):
    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins):
        # absolute translations in pixels, and wider ranges than AutoAugment's
        return _space(num_bins, None, 0.99, [32.0, 32.0], 135.0, 0.99, 8, 6,
                      with_identity=True, with_invert=False)

    def forward(self, img):
        fill = _tensor_fill(self.fill, img)
        op_meta = self._augmentation_space(self.num_magnitude_bins)
        op_name = list(op_meta)[_randint(len(op_meta))]
        magnitudes, signed = op_meta[op_name]
        magnitude = float(magnitudes[_randint(len(magnitudes))].item()) \
            if magnitudes.ndim > 0 else 0.0
        if signed and _randint(2):
            magnitude *= -1.0
        return _apply_op(img, op_name, magnitude, self.interpolation, fill)

    def __repr__(self):
        return (f"{type(self).__name__}(num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")


class AugMix(Module):
    def __init__(self, severity=3, mixture_width=3, chain_depth=-1, alpha=1.0, all_ops=True,
                 interpolation=InterpolationMode.BILINEAR, fill=None):
        super().__init__()
        self._PARAMETER_MAX = 10
        if not 1 <= severity <= self._PARAMETER_MAX:
            raise ValueError(f"The severity must be between [1, {self._PARAMETER_MAX}]. Got "
                             f"{severity} instead.")
        self.severity = severity
        self.mixture_width = mixture_width
        self.chain_depth = chain_depth
        self.alpha = alpha
        self.all_ops = all_ops
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins, image_size):
        space = _space(num_bins, image_size, 0.3, [image_size[0] / 3.0, image_size[1] / 3.0],
                       30.0, 0.9, 4, 4, with_identity=False, with_invert=False)
        if not self.all_ops:  # the colour enhancements overlap ImageNet-C's corruptions
            for name in ("Brightness", "Color", "Contrast", "Sharpness"):
                del space[name]
        else:  # torchvision lists them last
            for name in ("Brightness", "Color", "Contrast", "Sharpness"):
                space[name] = space.pop(name)
        return space

    def _pil_to_tensor(self, img):
        return F.pil_to_tensor(img)

    def _tensor_to_pil(self, img):
        return F.to_pil_image(img)

    def _sample_dirichlet(self, params):
        """One Dirichlet draw per row of `params`."""
        from ...distributions import Dirichlet
        return Dirichlet(params).sample()

    def forward(self, orig_img):
        from ...ops.creation import tensor
        fill = self.fill
        _, height, width = F.get_dimensions(orig_img)
        if isinstance(orig_img, Tensor):
            img = orig_img
            fill = _tensor_fill(fill, img)
        else:
            img = self._pil_to_tensor(orig_img)
        op_meta = self._augmentation_space(self._PARAMETER_MAX, (height, width))
        orig_dims = list(img.shape)
        batch = img.view([1] * max(4 - img.ndim, 0) + orig_dims)
        batch_dims = [batch.size(0)] + [1] * (batch.ndim - 1)
        # Beta(alpha, alpha) as a 2-way Dirichlet: the weight of the original vs the mixture
        m = self._sample_dirichlet(
            tensor([self.alpha, self.alpha], device=batch.device).expand(batch_dims[0], -1))
        combined_weights = self._sample_dirichlet(
            tensor([self.alpha] * self.mixture_width, device=batch.device).expand(
                batch_dims[0], -1)) * m[:, 1].view([batch_dims[0], -1])
        mix = m[:, 0].view(batch_dims) * batch
        for i in range(self.mixture_width):
            aug = batch
            depth = self.chain_depth if self.chain_depth > 0 else 1 + _randint(3)
            for _ in range(depth):
                op_name = list(op_meta)[_randint(len(op_meta))]
                magnitudes, signed = op_meta[op_name]
                magnitude = float(magnitudes[_randint(self.severity)].item()) \
                    if magnitudes.ndim > 0 else 0.0
                if signed and _randint(2):
                    magnitude *= -1.0
                aug = _apply_op(aug, op_name, magnitude, self.interpolation, fill)
            mix.add_(combined_weights[:, i].view(batch_dims) * aug)
        mix = mix.view(orig_dims).to(dtype=img.dtype)
        if not isinstance(orig_img, Tensor):
            return self._tensor_to_pil(mix)
        return mix

    def __repr__(self):
        return (f"{type(self).__name__}(severity={self.severity}, "
                f"mixture_width={self.mixture_width}, chain_depth={self.chain_depth}, "
                f"alpha={self.alpha}, all_ops={self.all_ops}, "
                f"interpolation={self.interpolation}, fill={self.fill})")
