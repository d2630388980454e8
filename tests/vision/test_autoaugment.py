"""ember.vision.transforms' augmentation policies (AutoAugment, RandAugment,
TrivialAugmentWide, AugMix) and the random photometric / warping transforms: op tables,
magnitudes, signatures and reprs against torchvision, each operation's image against
torchvision's, and seeded repeatability."""
import inspect

import numpy as np
import pytest

import ember
import ember.vision.transforms as T
from ember.vision.transforms import autoaugment as AA
from tests._torchvision_oracle import import_torchvision

RNG = np.random.default_rng(5)
U8 = RNG.integers(0, 256, (3, 20, 24), dtype=np.uint8)

CLASSES = ["AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix", "RandomInvert",
           "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness", "RandomAutocontrast",
           "RandomEqualize", "RandomPerspective", "ElasticTransform"]


@pytest.fixture(scope="module")
def TV():
    import_torchvision()
    import torchvision.transforms as TV
    return TV


def _plain(space):
    return {k: (np.asarray(v.tolist()), s) for k, (v, s) in space.items()}


@pytest.mark.parametrize("name", CLASSES)
def test_signatures_and_reprs_match(TV, name):
    ours, ref = getattr(T, name), getattr(TV, name)
    sig_ours, sig_ref = inspect.signature(ours), inspect.signature(ref)
    assert [p.name for p in sig_ours.parameters.values()] == \
        [p.name for p in sig_ref.parameters.values()]
    for p, q in zip(sig_ours.parameters.values(), sig_ref.parameters.values()):
        if not hasattr(q.default, "value"):  # enums compare by value below
            assert p.default == q.default, p.name
        else:
            assert p.default.value == q.default.value
    args = {"RandomPosterize": (3,), "RandomSolarize": (100,),
            "RandomAdjustSharpness": (2.0,)}.get(name, ())
    assert repr(ours(*args)) == repr(ref(*args))


@pytest.mark.parametrize("policy", ["IMAGENET", "CIFAR10", "SVHN"])
def test_autoaugment_policies_match(TV, policy):
    ours = T.AutoAugment(T.AutoAugmentPolicy[policy])
    ref = TV.AutoAugment(TV.AutoAugmentPolicy[policy])
    assert ours.policies == ref.policies
    assert repr(ours) == repr(ref)


def test_augmentation_spaces_match(TV):
    pairs = [(T.AutoAugment(), TV.AutoAugment(), (10, (20, 24))),
             (T.RandAugment(), TV.RandAugment(), (31, (20, 24))),
             (T.TrivialAugmentWide(), TV.TrivialAugmentWide(), (31,)),
             (T.AugMix(), TV.AugMix(), (10, (20, 24))),
             (T.AugMix(all_ops=False), TV.AugMix(all_ops=False), (10, (20, 24)))]
    for ours, ref, args in pairs:
        a, b = _plain(ours._augmentation_space(*args)), _plain(ref._augmentation_space(*args))
        assert list(a) == list(b)
        for k in a:
            assert a[k][1] == b[k][1] and a[k][0].dtype.kind == b[k][0].dtype.kind
            # ember.linspace can differ from torch's in the last float32 bit
            np.testing.assert_allclose(a[k][0], b[k][0], rtol=1e-6)


OPS = [("ShearX", 0.2), ("ShearY", -0.25), ("TranslateX", 5.7), ("TranslateY", -4.0),
       ("Rotate", 17.0), ("Brightness", 0.4), ("Color", -0.5), ("Contrast", 0.3),
       ("Sharpness", 0.6), ("Posterize", 3.0), ("Solarize", 120.0), ("AutoContrast", 0.0),
       ("Equalize", 0.0), ("Invert", 0.0), ("Identity", 0.0)]


@pytest.mark.parametrize("op,magnitude", OPS)
@pytest.mark.parametrize("fill", [None, [10.0, 20.0, 30.0]])
def test_each_operation_matches_torchvision(TV, op, magnitude, fill):
    import torch
    from torchvision.transforms import autoaugment as TAA
    ours = AA._apply_op(ember.tensor(U8), op, magnitude, T.InterpolationMode.NEAREST, fill)
    ref = TAA._apply_op(torch.tensor(U8), op, magnitude, TV.InterpolationMode.NEAREST, fill)
    assert np.array_equal(ours.numpy(), ref.numpy())
    with pytest.raises(ValueError, match="The provided operator Blur is not recognized."):
        AA._apply_op(ember.tensor(U8), "Blur", 1.0, T.InterpolationMode.NEAREST, None)


@pytest.mark.parametrize("make", [lambda: T.AutoAugment(T.AutoAugmentPolicy.SVHN, fill=7),
                                  lambda: T.RandAugment(num_ops=3),
                                  lambda: T.TrivialAugmentWide(),
                                  lambda: T.AugMix(chain_depth=2)])
def test_policies_repeat_under_a_seed_and_keep_shape(make):
    x = ember.tensor(np.stack([U8, U8[::-1]]))
    outs = []
    for _ in range(2):
        ember.manual_seed(11)
        t = make()
        outs.append(np.stack([t(x).numpy() for _ in range(6)]))
    assert np.array_equal(*outs)
    assert outs[0].shape == (6, 2, 3, 20, 24) and outs[0].dtype == np.uint8


def test_augmix_mixes_with_the_sampled_weights(TV):
    """With the Dirichlet draws fixed, one mixture of depth 1 is m0 * x + m1 * op(x)."""
    class Fixed(T.AugMix):
        def _sample_dirichlet(self, params):
            return ember.full(tuple(params.shape), 1.0 / params.shape[-1])
    x = ember.tensor(U8)
    t = Fixed(mixture_width=1, chain_depth=1, all_ops=False)
    ops = list(t._augmentation_space(10, (20, 24)))
    for seed in range(4):
        ember.manual_seed(seed)
        out = t(x)
        ember.manual_seed(seed)
        op = ops[int(ember.randint(len(ops), (1,)).item())]
        magnitudes, signed = t._augmentation_space(10, (20, 24))[op]
        magnitude = float(magnitudes[int(ember.randint(3, (1,)).item())]) \
            if magnitudes.ndim else 0.0
        if signed and int(ember.randint(2, (1,)).item()):
            magnitude = -magnitude
        aug = AA._apply_op(x[None], op, magnitude, t.interpolation, None)
        expected = (0.5 * x[None] + 0.5 * aug).to(ember.uint8)[0]
        assert np.array_equal(out.numpy(), expected.numpy()), op
    with pytest.raises(ValueError, match=r"The severity must be between \[1, 10\]. Got 11"):
        T.AugMix(severity=11)


def test_random_transforms_apply_with_probability():
    F = T.functional
    x = ember.tensor(U8)
    cases = [(T.RandomInvert, (), F.invert, ()), (T.RandomPosterize, (2,), F.posterize, (2,)),
             (T.RandomSolarize, (99,), F.solarize, (99,)),
             (T.RandomAdjustSharpness, (3.0,), F.adjust_sharpness, (3.0,)),
             (T.RandomAutocontrast, (), F.autocontrast, ()),
             (T.RandomEqualize, (), F.equalize, ())]
    for cls, args, fn, fargs in cases:
        assert np.array_equal(cls(*args, p=1.0)(x).numpy(), fn(x, *fargs).numpy())
        assert cls(*args, p=0.0)(x) is x


def test_random_perspective_and_elastic():
    x = ember.tensor(U8)
    ember.manual_seed(4)
    start, end = T.RandomPerspective.get_params(24, 20, 0.5)
    assert start == [[0, 0], [23, 0], [23, 19], [0, 19]]
    for (ex, ey), lo_x, lo_y in zip(end, [0, 17, 17, 0], [0, 0, 14, 14]):
        assert lo_x <= ex <= lo_x + 6 and lo_y <= ey <= lo_y + 5
    ember.manual_seed(4)
    out = T.RandomPerspective(p=1.0, fill=3)(x)
    ember.manual_seed(4)
    ember.rand(1)  # the probability draw comes first
    s, e = T.RandomPerspective.get_params(24, 20, 0.5)
    assert np.array_equal(out.numpy(), T.functional.perspective(x, s, e, fill=[3.0] * 3).numpy())
    disp = T.ElasticTransform.get_params([50.0, 30.0], [5.0, 5.0], [20, 24])
    assert tuple(disp.shape) == (1, 20, 24, 2)
    assert T.ElasticTransform(alpha=0.0)(x.float()).allclose(x.float(), atol=1e-4)
    with pytest.raises(TypeError, match="alpha should be float or a sequence of floats"):
        T.ElasticTransform(alpha=1)
    with pytest.raises(TypeError, match="Fill should be either a sequence or a number."):
        T.RandomPerspective(fill=object())


V2_CLASSES = ["AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix", "RandomInvert",
              "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness",
              "RandomAutocontrast", "RandomEqualize"]


@pytest.mark.parametrize("name", V2_CLASSES)
def test_v2_signatures_and_reprs_match(TV, name):
    import torchvision.transforms.v2 as TV2
    import ember.vision.transforms.v2 as T2
    ours, ref = getattr(T2, name), getattr(TV2, name)
    assert list(inspect.signature(ours).parameters) == list(inspect.signature(ref).parameters)
    args = {"RandomPosterize": (3,), "RandomSolarize": (100,),
            "RandomAdjustSharpness": (2.0,)}.get(name, ())
    assert repr(ours(*args)) == repr(ref(*args))


def test_v2_policies_transform_the_image_and_refuse_boxes():
    import ember.vision.transforms.v2 as T2
    from ember.vision import tv_tensors
    img = tv_tensors.Image(ember.tensor(U8))
    boxes = tv_tensors.BoundingBoxes([[1, 1, 4, 4]], format="XYXY", canvas_size=(20, 24))
    for t in (T2.AutoAugment(), T2.RandAugment(), T2.TrivialAugmentWide(), T2.AugMix()):
        out = t({"image": img, "label": 3})
        assert isinstance(out["image"], tv_tensors.Image) and out["label"] == 3
        with pytest.raises(TypeError, match="Inputs of type BoundingBoxes are not supported"):
            t(img, boxes)
    inverted, same_boxes = T2.RandomInvert(p=1.0)(img, boxes)
    assert isinstance(inverted, tv_tensors.Image) and same_boxes is boxes
    assert np.array_equal(inverted.numpy(), 255 - U8)
    assert np.array_equal(T2.functional.posterize(img, 1).numpy(), U8 & 128)
