"""torch.autograd.gradcheck's modes against PyTorch: forward-mode checks (check_forward_ad)
with or without the backward ones, and the argument errors."""
import pytest

import ember


def _modes(lib):
    class ExpJvpOnly(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.result = lib.exp(x)
            return ctx.result

        @staticmethod
        def jvp(ctx, t):
            return t * ctx.result

    class WrongJvp(ExpJvpOnly):
        @staticmethod
        def jvp(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g * ctx.result

    gc = lib.autograd.gradcheck
    x = lib.tensor([0.3, -0.7, 1.1], dtype=lib.float64, requires_grad=True)
    z = lib.tensor([0.3 + 0.2j, -0.5j], dtype=lib.complex128, requires_grad=True)
    got = [gc(ExpJvpOnly.apply, (x,), check_forward_ad=True, check_backward_ad=False,
              check_undefined_grad=False, check_batched_grad=False),
           gc(WrongJvp.apply, (x,), check_forward_ad=True, raise_exception=False),
           gc(WrongJvp.apply, (x,)),  # the backward alone is right
           gc(lambda a: a * a.conj() + a.exp(), (z,), check_forward_ad=True)]
    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch for "
                                           "output 0 with respect to input 0"):
        gc(WrongJvp.apply, (x,), check_forward_ad=True)
    with pytest.raises(AssertionError, match="Expected at least one of check_forward_ad or "
                                             "check_backward_ad to be True"):
        gc(lib.sin, (x,), check_backward_ad=False)
    with pytest.raises(AssertionError, match="Setting check_batched_grad=True requires "
                                             "check_backward_ad to be True"):
        gc(lib.sin, (x,), check_forward_ad=True, check_backward_ad=False, check_batched_grad=True)
    return got


def test_forward_mode_checks_match_torch(torch):
    assert _modes(ember) == _modes(torch) == [True, False, True, True]
