"""`gradcheck` and `gradgradcheck`: analytical gradients against central finite differences.

Inputs should be float64: the differences are taken with `eps` steps on the arrays.
"""
import numpy as np

from .._state import grad as _grad
from .._tensor import Tensor, make_tensor
from . import engine

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _outputs(func, inputs):
    return [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor)]


def _numerical(func, inputs, i, eps):
    """Jacobian columns of every output with respect to input i, by central differences."""
    t = inputs[i]
    arr = t._array  # perturbed in place by index: reshape(-1) would copy a strided array
    prev = _grad.enabled
    _grad.enabled = False
    try:
        base = _outputs(func, inputs)
        jac = [np.zeros((arr.size, o._array.size), dtype=np.complex128 if o.dtype.is_complex
                        else np.float64) for o in base]
        for k, idx in enumerate(np.ndindex(arr.shape)):
            orig = arr[idx].copy()
            arr[idx] = orig + eps
            plus = [o._array.copy() for o in _outputs(func, inputs)]
            arr[idx] = orig - eps
            minus = [o._array.copy() for o in _outputs(func, inputs)]
            arr[idx] = orig
            for j, (p, m) in enumerate(zip(plus, minus)):
                jac[j][k] = ((p - m) / (2 * eps)).reshape(-1)
    finally:
        _grad.enabled = prev
    return jac


def _analytical(func, inputs, diff_idx):
    """Jacobians from vector-Jacobian products, one output element at a time."""
    outs = _outputs(func, inputs)
    jacs = {}
    for j, o in enumerate(outs):
        for i in diff_idx:
            jacs[i, j] = np.zeros((inputs[i]._array.size, o._array.size))
        if not o._requires_grad:
            continue
        for k in range(o._array.size):
            g = np.zeros(o._array.shape, dtype=o._array.dtype)
            g.reshape(-1)[k] = 1
            grads = engine.grad(o, [inputs[i] for i in diff_idx], make_tensor(g, o._device),
                                retain_graph=True, allow_unused=True)
            for i, gi in zip(diff_idx, grads):
                if gi is not None:
                    jacs[i, j][:, k] = gi._array.reshape(-1)
    return outs, jacs


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    outs, analytical = _analytical(func, inputs, diff_idx)
    for i in diff_idx:
        numerical = _numerical(func, inputs, i, eps)
        for j in range(len(outs)):
            a, n = analytical[i, j], numerical[j]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {j} with respect to input "
                                     f"{i},\nnumerical:{make_tensor(n)}\nanalytical:"
                                     f"{make_tensor(a)}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    inputs = _as_tuple(inputs)
    diff = [t for t in inputs if isinstance(t, Tensor) and t._requires_grad]
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(make_tensor(rng.standard_normal(o._array.shape).astype(o._array.dtype),
                                         o._device).requires_grad_(True) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_derivatives(*args):
        ins, gos = args[:n_in], args[n_in:]
        # the finite differences run with grad mode off; these derivatives need it on
        prev = _grad.enabled
        _grad.enabled = True
        try:
            outs = _outputs(func, ins)
            pairs = [(o, g) for o, g in zip(outs, gos) if o._requires_grad]
            grads = engine.grad([o for o, _ in pairs], [t for t in ins if isinstance(t, Tensor)
                                                         and t._requires_grad],
                                [g for _, g in pairs], create_graph=prev, allow_unused=True,
                                materialize_grads=True)
        finally:
            _grad.enabled = prev
        return grads

    return gradcheck(first_derivatives, inputs + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception)
