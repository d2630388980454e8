"""`gradcheck` and `gradgradcheck`: analytical gradients against central finite differences.

Inputs should be float64: the differences are taken with `eps` steps on the arrays.
Also the Jacobian helpers of `torch.autograd.gradcheck` that PyTorch exposes (two of them
deprecated, with its FutureWarning): `get_numerical_jacobian`,
`get_numerical_jacobian_wrt_specific_input` and `get_analytical_jacobian`.
"""
import warnings

import numpy as np

from .._state import grad as _grad
from .._tensor import Tensor, make_tensor
from . import engine

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian",
           "get_numerical_jacobian_wrt_specific_input", "get_analytical_jacobian"]


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _outputs(func, inputs):
    return [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor)]


def _numerical(func, inputs, i, eps, step=1.0):
    """Jacobian columns of every output with respect to input i, by central differences of
    `step * eps` (`step` 1j: along a complex input's imaginary part)."""
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
            arr[idx] = orig + step * eps
            plus = [o._array.copy() for o in _outputs(func, inputs)]
            arr[idx] = orig - step * eps
            minus = [o._array.copy() for o in _outputs(func, inputs)]
            arr[idx] = orig
            for j, (p, m) in enumerate(zip(plus, minus)):
                jac[j][k] = ((p - m) / (2 * eps)).reshape(-1)
    finally:
        _grad.enabled = prev
    return jac


def _analytical(func, inputs, diff_idx, part=1.0):
    """Jacobians from vector-Jacobian products, one output element at a time, with the
    gradient `part` (1, or 1j for a complex output's imaginary part) at that element. As
    PyTorch's, a complex input's gradient is d/dRe + i d/dIm of the output part."""
    outs = _outputs(func, inputs)
    jacs = {}
    for j, o in enumerate(outs):
        for i in diff_idx:
            jacs[i, j] = np.zeros((inputs[i]._array.size, o._array.size),
                                  np.complex128 if inputs[i].dtype.is_complex else np.float64)
        if not o._requires_grad or (part != 1 and not o.dtype.is_complex):
            continue
        for k in range(o._array.size):
            g = np.zeros(o._array.shape, dtype=o._array.dtype)
            g.reshape(-1)[k] = part
            grads = engine.grad(o, [inputs[i] for i in diff_idx], make_tensor(g, o._device),
                                retain_graph=True, allow_unused=True)
            for i, gi in zip(diff_idx, grads):
                if gi is not None:
                    jacs[i, j][:, k] = gi._array.reshape(-1)
    return outs, jacs


def _forward(func, inputs, i, part=1.0):
    """Jacobians of every output with respect to input i from forward mode: the outputs'
    tangents for a tangent `part` (1, or 1j along a complex input's imaginary part) at one
    input element at a time."""
    from . import forward_ad
    t = inputs[i]
    jac = None
    with forward_ad.dual_level():
        for k in range(t._array.size):
            v = np.zeros(t._array.shape, dtype=t._array.dtype)
            v.reshape(-1)[k] = part
            args = list(inputs)
            args[i] = forward_ad.make_dual(t.detach(), make_tensor(v, t._device))
            outs = _outputs(func, args)
            if jac is None:
                jac = [np.zeros((t._array.size, o._array.size), dtype=np.complex128
                                if o.dtype.is_complex else np.float64) for o in outs]
            for j, o in enumerate(outs):
                tangent = forward_ad.unpack_dual(o).tangent
                if tangent is not None:
                    jac[j][k] = tangent._array.reshape(-1)
    return jac


def _expected(along_re, along_im, part):
    """What the backward with gradient `part` should give, from the finite differences along
    the input's real part and (complex input) its imaginary part: d(part of w)/dRe + i d(part
    of w)/dIm, the output's real part for part 1, its imaginary part for 1j."""
    take = np.real if part == 1 else np.imag
    if along_im is None:
        return take(along_re)
    return take(along_re) + 1j * take(along_im)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be "
                             "True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires "
                             "check_forward_ad to be True")
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    if check_forward_ad:
        for i in diff_idx:
            along_re = _numerical(func, inputs, i, eps)
            along_im = _numerical(func, inputs, i, eps, 1j) if inputs[i].dtype.is_complex else None
            fw_re = _forward(func, inputs, i)
            fw_im = _forward(func, inputs, i, 1j) if along_im is not None else None
            for j in range(len(along_re)):
                checks = [(fw_re[j], along_re[j])]
                if along_im is not None:
                    checks.append((fw_im[j], along_im[j]))
                for a, n in checks:
                    if np.allclose(a, n, rtol=rtol, atol=atol):
                        continue
                    if not raise_exception:
                        return False
                    raise GradcheckError("Jacobian computed with forward mode mismatch for "
                                         f"output {j} with respect to input {i},\nnumerical:"
                                         f"{make_tensor(n)}\nanalytical:{make_tensor(a)}\n")
    if not check_backward_ad:
        return True
    outs, analytical = _analytical(func, inputs, diff_idx)
    any_complex_out = any(o.dtype.is_complex for o in outs)
    imaginary = _analytical(func, inputs, diff_idx, 1j)[1] if any_complex_out else None
    for i in diff_idx:
        along_re = _numerical(func, inputs, i, eps)
        along_im = _numerical(func, inputs, i, eps, 1j) if inputs[i].dtype.is_complex else None
        for j, o in enumerate(outs):
            parts = ((1, analytical), (1j, imaginary)) if o.dtype.is_complex else ((1, analytical),)
            for part, jacs in parts:
                a = jacs[i, j]
                n = _expected(along_re[j], None if along_im is None else along_im[j], part)
                if np.allclose(a, n, rtol=rtol, atol=atol):
                    continue
                if not raise_exception:
                    return False
                what = "" if part == 1 else " (the imaginary part of the output)"
                raise GradcheckError(f"Jacobian mismatch for output {j} with respect to input "
                                     f"{i}{what},\nnumerical:{make_tensor(n)}\nanalytical:"
                                     f"{make_tensor(a)}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    inputs = _as_tuple(inputs)
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


# ---- the exposed Jacobian helpers ---------------------------------------------------------------
def _deprecated(name):
    warnings.warn(f"`{name}` was part of PyTorch's private API and not meant to be exposed. We "
                  "are deprecating it and it will be removed in a future version of PyTorch. If "
                  "you have a specific use for this or feature request for this to be a stable "
                  "API, please file us an issue at https://github.com/pytorch/pytorch/issues/new",
                  FutureWarning, stacklevel=3)


def _differentiable(tensors):
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    return [t for t in tensors if isinstance(t, Tensor) and t._requires_grad]


def _columns(call, target, eps):
    """Central-difference Jacobians (target.numel(), output.numel()) of every tensor output of
    `call()` with respect to `target`, whose array is perturbed in place one element at a
    time; each in its output's dtype."""
    arr = target._array
    prev = _grad.enabled
    _grad.enabled = False
    try:
        base = [o for o in _as_tuple(call()) if isinstance(o, Tensor)]
        jac = [np.zeros((arr.size, o._array.size), dtype=o._array.dtype) for o in base]
        for k, idx in enumerate(np.ndindex(arr.shape)):
            orig = arr[idx].copy()
            arr[idx] = orig + eps
            plus = [o._array.copy() for o in _as_tuple(call()) if isinstance(o, Tensor)]
            arr[idx] = orig - eps
            minus = [o._array.copy() for o in _as_tuple(call()) if isinstance(o, Tensor)]
            arr[idx] = orig
            for j, (p, m) in enumerate(zip(plus, minus)):
                jac[j][k] = ((p - m) / (2 * eps)).reshape(-1)
    finally:
        _grad.enabled = prev
    return [make_tensor(j, target._device) for j in jac]


def get_numerical_jacobian_wrt_specific_input(fn, input_idx, inputs, outputs, eps, input=None,
                                              is_forward_ad=False):
    """The finite-difference Jacobian of each output of `fn(*inputs)` with respect to
    `inputs[input_idx]` (or `input`), one (input numel, output numel) tensor per output."""
    input = inputs[input_idx] if input is None else input
    if not input.requires_grad:
        raise AssertionError("Expected input to have requires_grad=True")
    return tuple(_columns(lambda: fn(*inputs), input, eps))


def get_numerical_jacobian(fn, inputs, target=None, eps=1e-3, grad_out=1.0):
    """Deprecated in PyTorch: the finite-difference Jacobians of fn(inputs) (its first output)
    with respect to each tensor of `target` (default: `inputs`) that requires grad."""
    _deprecated("get_numerical_jacobian")
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer supports "
                         "values of grad_out != 1.0.")
    targets = _differentiable(inputs if target is None else target)
    return tuple(_columns(lambda: fn(inputs), t, eps)[0] for t in targets)


def _analytical_rows(output, inputs):
    jac = [np.zeros((t._array.size, output._array.size), dtype=t._array.dtype) for t in inputs]
    sizes_ok = types_ok = True
    for k in range(output._array.size):
        g = np.zeros(output._array.shape, dtype=output._array.dtype)
        g.reshape(-1)[k] = 1
        grads = engine.grad(output, inputs, make_tensor(g, output._device), retain_graph=True,
                            allow_unused=True)
        for i, gi in enumerate(grads):
            if gi is None:
                continue
            types_ok &= gi.dtype is inputs[i].dtype
            sizes_ok &= tuple(gi.shape) == tuple(inputs[i].shape)
            jac[i][:, k] = gi._array.reshape(-1)
    return jac, sizes_ok, types_ok


def get_analytical_jacobian(inputs, output, nondet_tol=0.0, grad_out=1.0):
    """Deprecated in PyTorch: (Jacobians of `output` from backward, one per input that requires
    grad; whether two evaluations agree within `nondet_tol`; whether the gradients' sizes and
    dtypes were the inputs')."""
    _deprecated("get_analytical_jacobian")
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    if output.dtype.is_complex:
        raise ValueError("Expected output to be non-complex. get_analytical_jacobian no longer "
                         "supports functions that return complex outputs.")
    diff = _differentiable(inputs)
    first, sizes_ok, types_ok = _analytical_rows(output, diff)
    second, _, _ = _analytical_rows(output, diff)
    reentrant = all(np.abs(a - b).max(initial=0.0) <= nondet_tol for a, b in zip(first, second))
    return (tuple(make_tensor(j, output._device) for j in first), bool(reentrant),
            bool(sizes_ok), bool(types_ok))
