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


def _fast_mode(lib):
    """Fast mode's verdicts on right and wrong derivatives: real and complex inputs and
    outputs, backward and forward mode, gradgradcheck."""
    class WrongCorner(lib.autograd.Function):  # one Jacobian entry off by 0.1
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            r = (2 * a * g).clone()
            r[0, 0] += 0.1
            return r

    class ConjugatedGrad(lib.autograd.Function):  # right for a real input, wrong for complex
        @staticmethod
        def forward(ctx, a):
            return a * (2 + 1j)

        @staticmethod
        def backward(ctx, g):
            return g * (2 + 1j)

    gc, ggc = lib.autograd.gradcheck, lib.autograd.gradgradcheck
    gen = lib.Generator().manual_seed(3)
    x = lib.randn(4, 5, dtype=lib.float64, generator=gen).requires_grad_()
    w = lib.randn(5, 3, dtype=lib.float64, generator=gen).requires_grad_()
    z = lib.randn(4, dtype=lib.complex128, generator=gen).requires_grad_()

    def mm_tanh(a, b):
        return (a @ b).tanh()
    return [gc(mm_tanh, (x, w), fast_mode=True),
            gc(mm_tanh, (x, w), fast_mode=True, check_forward_ad=True),
            ggc(mm_tanh, (x, w), fast_mode=True),
            gc(lambda a: a * a.conj() + a.exp(), (z,), fast_mode=True, check_forward_ad=True),
            gc(lambda a: a.abs(), (z,), fast_mode=True),
            gc(lambda a: lib.fft.fft(a), (x,), fast_mode=True),
            ggc(lambda a: a * a.exp(), (z,), fast_mode=True),
            gc(WrongCorner.apply, (x,), fast_mode=True, raise_exception=False),
            gc(ConjugatedGrad.apply, (z,), fast_mode=True, raise_exception=False)]


def test_fast_mode_verdicts_match_torch(torch):
    assert _fast_mode(ember) == _fast_mode(torch) == [True] * 7 + [False, False]


def test_fast_mode_failure_names_the_pair_and_shows_the_slow_jacobians(torch):
    def wrong(lib):
        class Wrong(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, g):
                return g, g  # b's gradient is wrong
        a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            lib.autograd.gradcheck(Wrong.apply, (a, b), fast_mode=True)
        return str(info.value)
    mine, theirs = wrong(ember), wrong(torch)
    head = "Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"
    assert mine.startswith(head) and theirs.startswith(head)
    assert "(slow mode) is: 3.0" in mine and "(slow mode) is: 3.0" in theirs
    assert "Numerical:\n tensor([[3.0000, 0.0000],\n        [0.0000, 4.0000]], dtype=torch.float64)" \
        in mine


def test_fast_mode_leaves_the_global_generator_alone():
    ember.manual_seed(5)
    expected = ember.rand(3)
    ember.manual_seed(5)
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    ember.manual_seed(5)
    assert ember.autograd.gradcheck(ember.sin, (x,), fast_mode=True)
    assert ember.equal(ember.rand(3), expected)


def _outputs_without_grad(lib):
    """Outputs that do not require grad are not checked; where none does, the function must
    not depend on its inputs (PyTorch's "Numerical gradient for function expected to be
    zero"), in slow and fast mode."""
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    z = lib.tensor([0.5 + 1j, -2j], dtype=lib.complex128, requires_grad=True)
    got = []
    for fast in (False, True):
        for f, inp in ((lambda a: a.detach() * 2, x), (lambda a: (a.detach() * 2, a * 2), x),
                       (lambda a: a.detach() * 0 + 1, x), (lambda a: a.detach().abs(), z)):
            try:
                got.append(lib.autograd.gradcheck(f, (inp,), fast_mode=fast))
            except RuntimeError as e:
                got.append(str(e))
    return got


def test_outputs_without_grad_are_judged_as_torch(torch):
    zero = "Numerical gradient for function expected to be zero"
    assert _outputs_without_grad(ember) == _outputs_without_grad(torch) == \
        [zero, True, True, zero] * 2
