"""The dtype each common op returns under CPU autocast (bfloat16 and float16) is PyTorch's:
the lower-precision list (products, convolutions, attention) runs low, the float32 list
(losses, prod) runs in float32, the rest keep their inputs' dtype."""
import pytest

import ember


def _ops(lib):
    F = lib.nn.functional
    a, b = lib.randn(4, 4), lib.randn(4, 4)
    img, w = lib.randn(1, 3, 8, 8), lib.randn(4, 3, 3, 3)
    return {
        "mm": lambda: a @ b, "linear": lambda: F.linear(a, b), "conv": lambda: F.conv2d(img, w),
        "bmm": lambda: lib.bmm(a[None], b[None]), "add": lambda: a + b,
        "relu": lambda: F.relu(a @ b), "softmax": lambda: F.softmax(a @ b, -1),
        "layer_norm": lambda: F.layer_norm(a @ b, (4,)),
        "cross_entropy": lambda: F.cross_entropy(a @ b, lib.tensor([0, 1, 2, 3])),
        "mse": lambda: F.mse_loss(a @ b, b), "sum": lambda: (a @ b).sum(),
        "prod": lambda: (a @ b).prod(), "prod_dim": lambda: (a @ b).prod(1),
        "gelu": lambda: F.gelu(a @ b), "max_pool": lambda: F.max_pool2d(F.conv2d(img, w), 2),
        "batch_norm": lambda: F.batch_norm(F.conv2d(img, w), None, None, training=True),
        "addmm": lambda: lib.addmm(a, a, b), "baddbmm": lambda: lib.baddbmm(a[None], a[None], b[None]),
        "sdpa": lambda: F.scaled_dot_product_attention(a[None, None], a[None, None], b[None, None]),
        "bce_logits": lambda: F.binary_cross_entropy_with_logits(a @ b, lib.rand(4, 4)),
        "conv_transpose": lambda: F.conv_transpose2d(img, w.transpose(0, 1)),
        "einsum": lambda: lib.einsum("ij,jk->ik", a, b),
        "interpolate": lambda: F.interpolate(F.conv2d(img, w), scale_factor=2, mode="bilinear"),
    }


def _dtypes(lib, dtype):
    lib.manual_seed(0)
    with lib.autocast("cpu", dtype=getattr(lib, dtype)):
        return {name: str(op().dtype).split(".")[-1] for name, op in _ops(lib).items()}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_autocast_result_dtypes_match_torch(torch, dtype):
    assert _dtypes(ember, dtype) == _dtypes(torch, dtype)
