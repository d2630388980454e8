"""`amp.custom_fwd` / `custom_bwd` on a custom Function, against PyTorch's: the inputs cast and
autocast off inside forward, backward under forward's autocast state; the deprecated cuda
spellings warn."""
import pytest

import ember


def _run(lib, cast_inputs):
    seen = {}

    class Scale(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, x, w):
            seen["fwd"] = (str(x.dtype), lib.is_autocast_enabled("cpu"))
            ctx.save_for_backward(w)
            return x * w

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            (w,) = ctx.saved_tensors
            seen["bwd"] = lib.is_autocast_enabled("cpu")
            return grad * w, None

    x = lib.ones(3, requires_grad=True)
    w = lib.full((3,), 2.0, dtype=lib.float64)
    with lib.autocast("cpu", dtype=lib.bfloat16):
        y = Scale.apply(x, w)
    y.sum().backward()
    return seen, str(y.dtype), x.grad.tolist()


@pytest.mark.parametrize("cast_inputs", [None, "float32"])
def test_custom_fwd_and_bwd_match_torch(torch, cast_inputs):
    ours = _run(ember, cast_inputs and ember.float32)
    theirs = _run(torch, cast_inputs and torch.float32)
    assert ours == theirs


def test_device_type_must_be_a_string_and_cuda_spellings_warn():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        ember.amp.custom_fwd(lambda ctx: None, device_type=0)
    with pytest.warns(FutureWarning, match=r"`torch.cuda.amp.custom_fwd\(args...\)` is "
                                           "deprecated"):
        ember.cuda.amp.custom_fwd(lambda ctx: None)
    with pytest.warns(FutureWarning, match=r"torch.amp.custom_bwd\(args..., "
                                           "device_type='cuda'\\)"):
        ember.cuda.amp.custom_bwd(lambda ctx: None)
