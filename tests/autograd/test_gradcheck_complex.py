"""gradcheck with complex inputs and outputs, as PyTorch defines the gradient there: for a
complex input, d/dRe + i d/dIm of the real part of the output (gradient 1) and of its
imaginary part (gradient 1j). Holomorphic and non-holomorphic functions pass, a wrong backward
fails; complex sgn's gradient matches PyTorch's; a real input's gradient from a complex one is
its real part."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import GradcheckError, gradcheck


def _z():
    return ember.tensor([1 + 1j, 2 - 1j, -0.5 + 0.3j], dtype=ember.complex128,
                        requires_grad=True)


FUNCTIONS = {
    "square (holomorphic)": lambda t: t * t,
    "exp (holomorphic)": lambda t: t.exp(),
    "abs (real output)": lambda t: t.abs(),
    "conj times self": lambda t: t.conj() * t,
    "sgn": lambda t: t.sgn(),
    "real part": lambda t: t.real,
    "angle": lambda t: t.angle(),
    "sum of squares": lambda t: (t * t).sum(),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_gradcheck_passes_complex_functions(name):
    assert gradcheck(FUNCTIONS[name], (_z(),))


def test_gradcheck_real_input_complex_output():
    r = ember.tensor([0.3, -1.2], dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda t: t * (1 + 2j), (r,))
    assert gradcheck(lambda t: ember.polar(t.abs() + 1, t), (r,))


class _WrongSquare(ember.autograd.Function):
    """x * x with the real-valued derivative's backward: right for real inputs only (the
    gradient of a holomorphic function is g * conj(f'))."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x


def test_gradcheck_fails_a_wrong_complex_backward():
    assert gradcheck(_WrongSquare.apply, (_z(),), raise_exception=False) is False
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(_WrongSquare.apply, (_z(),))
    x = ember.tensor([0.5, -2.0], dtype=ember.float64, requires_grad=True)
    assert gradcheck(_WrongSquare.apply, (x,))  # right for real inputs


def test_complex_sgn_gradient_matches_pytorch(torch):
    values = [1 + 1j, 2 - 1j, 0j, -3 + 0.5j]
    grads = []
    for lib in (ember, torch):
        z = lib.tensor(values, requires_grad=True)
        w = z.sgn()
        (w.real * lib.tensor([1.0, 2.0, 3.0, 4.0]) + w.imag).sum().backward()
        grads.append(z.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-7)


def test_real_input_takes_the_real_part_of_a_complex_gradient(torch):
    grads = []
    for lib in (ember, torch):
        r = lib.tensor([0.3, -1.2], dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no ComplexWarning from the cast
            (r * (1 + 2j)).abs().sum().backward()
        grads.append(r.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_broadcast_to_method_takes_sizes_as_arguments():
    t = ember.randn(3)
    assert t.broadcast_to(2, 3).shape == (2, 3)
    assert t.broadcast_to((2, 3)).shape == (2, 3)
    assert ember.broadcast_to(t, (2, 3)).shape == (2, 3)
