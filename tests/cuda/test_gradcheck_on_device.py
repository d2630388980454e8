"""gradcheck and gradgradcheck on 'cuda' tensors (the strict CuPy stand-in), slow and fast mode:
the finite differences perturb the device arrays in place, the Jacobians are assembled on the
host, gradients and tangents go to the device. A wrong backward fails there as on the CPU."""
import pytest

import ember
from tests._strict_cupy import strict_cupy


class _WrongScale(ember.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 3

    @staticmethod
    def backward(ctx, g):
        return g * 2


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradchecks_run_on_the_device(fast_mode):
    with strict_cupy():
        gen = ember.Generator().manual_seed(0)
        x = ember.randn(3, 4, dtype=ember.float64, generator=gen).cuda().requires_grad_()
        w = ember.randn(4, 2, dtype=ember.float64, generator=gen).cuda().requires_grad_()
        z = ember.randn(3, dtype=ember.complex128, generator=gen).cuda().requires_grad_()
        gc, ggc = ember.autograd.gradcheck, ember.autograd.gradgradcheck

        def mm_tanh(a, b):
            return (a @ b).tanh()
        assert gc(mm_tanh, (x, w), fast_mode=fast_mode, check_forward_ad=True)
        assert ggc(mm_tanh, (x, w), fast_mode=fast_mode)
        assert gc(lambda a: a * a.conj() + a.exp(), (z,), fast_mode=fast_mode,
                  check_forward_ad=True)
        assert not gc(_WrongScale.apply, (x,), fast_mode=fast_mode, raise_exception=False)
        assert x.device.type == "cuda" and x.grad is None
