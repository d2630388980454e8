"""`gradcheck` and `gradgradcheck`: analytical gradients against central finite differences.

Inputs should be float64: the differences are taken with `eps` steps on the arrays (in
place, on the tensors' device); the Jacobians are assembled in host memory.
Also the Jacobian helpers of `torch.autograd.gradcheck` that PyTorch exposes (two of them
deprecated, with its FutureWarning): `get_numerical_jacobian`,
`get_numerical_jacobian_wrt_specific_input` and `get_analytical_jacobian`.
"""
import warnings

import numpy as np

from .._state import grad as _grad
from .._tensor import Tensor, make_tensor
from ..device import backend_of
from . import engine

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian",
           "get_numerical_jacobian_wrt_specific_input", "get_analytical_jacobian"]


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _outputs(func, inputs):
    return [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor)]


def _host(t):
    """A host copy of tensor t's array (the Jacobians are NumPy arrays, whatever the device)."""
    return np.array(t._host())


def _like(arr, t):
    """A tensor on t's device holding the host array `arr` (a gradient or a tangent)."""
    return make_tensor(backend_of(t._device).from_host(arr, t._device.index), t._device)


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
            plus = [_host(o) for o in _outputs(func, inputs)]
            arr[idx] = orig - step * eps
            minus = [_host(o) for o in _outputs(func, inputs)]
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
            grads = engine.grad(o, [inputs[i] for i in diff_idx], _like(g, o),
                                retain_graph=True, allow_unused=True)
            for i, gi in zip(diff_idx, grads):
                if gi is not None:
                    jacs[i, j][:, k] = _host(gi).reshape(-1)
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
            args[i] = forward_ad.make_dual(t.detach(), _like(v, t))
            outs = _outputs(func, args)
            if jac is None:
                jac = [np.zeros((t._array.size, o._array.size), dtype=np.complex128
                                if o.dtype.is_complex else np.float64) for o in outs]
            for j, o in enumerate(outs):
                tangent = forward_ad.unpack_dual(o).tangent
                if tangent is not None:
                    jac[j][k] = _host(tangent).reshape(-1)
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
    # as PyTorch's, only the outputs that require grad are checked; where none does, the
    # function must not depend on its inputs at all
    live = [j for j, o in enumerate(_outputs(func, inputs)) if o._requires_grad]
    if not live:
        return _constant(func, inputs, diff_idx, eps, raise_exception, fast_mode)
    if fast_mode:
        return _fast_check(func, inputs, diff_idx, live, eps, atol, rtol, raise_exception,
                           check_forward_ad, check_backward_ad)
    if check_forward_ad:
        for i in diff_idx:
            along_re = _numerical(func, inputs, i, eps)
            along_im = _numerical(func, inputs, i, eps, 1j) if inputs[i].dtype.is_complex else None
            fw_re = _forward(func, inputs, i)
            fw_im = _forward(func, inputs, i, 1j) if along_im is not None else None
            for j in live:
                checks = [(fw_re[j], along_re[j])]
                if along_im is not None:
                    checks.append((fw_im[j], along_im[j]))
                for a, n in checks:
                    if np.allclose(a, n, rtol=rtol, atol=atol):
                        continue
                    if not raise_exception:
                        return False
                    raise GradcheckError("Jacobian computed with forward mode mismatch for "
                                         f"output {live.index(j)} with respect to input {i},\n"
                                         f"numerical:{make_tensor(n)}\nanalytical:"
                                         f"{make_tensor(a)}\n")
    if not check_backward_ad:
        return True
    outs, analytical = _analytical(func, inputs, diff_idx)
    any_complex_out = any(o.dtype.is_complex for o in outs)
    imaginary = _analytical(func, inputs, diff_idx, 1j)[1] if any_complex_out else None
    for i in diff_idx:
        along_re = _numerical(func, inputs, i, eps)
        along_im = _numerical(func, inputs, i, eps, 1j) if inputs[i].dtype.is_complex else None
        for j in live:
            o = outs[j]
            parts = ((1, analytical), (1j, imaginary)) if o.dtype.is_complex else ((1, analytical),)
            for part, jacs in parts:
                a = jacs[i, j]
                n = _expected(along_re[j], None if along_im is None else along_im[j], part)
                if np.allclose(a, n, rtol=rtol, atol=atol):
                    continue
                if not raise_exception:
                    return False
                what = "" if part == 1 else " (the imaginary part of the output)"
                raise GradcheckError(f"Jacobian mismatch for output {live.index(j)} with "
                                     f"respect to input {i}{what},\nnumerical:"
                                     f"{make_tensor(n)}\nanalytical:{make_tensor(a)}\n")
    return True


def _constant(func, inputs, diff_idx, eps, raise_exception, fast_mode):
    """No output requires grad: the finite differences must be zero (PyTorch's check; fast
    mode takes them along one random direction per input)."""
    rng = np.random.default_rng(0)
    for i in diff_idx:
        t = inputs[i]
        if fast_mode:
            diffs = _along(func, inputs, i, _unit_vector(rng, t._array.size), eps)
        else:
            diffs = _numerical(func, inputs, i, eps)
            if t.dtype.is_complex:
                diffs += _numerical(func, inputs, i, eps, 1j)
        if all(np.allclose(d, 0, rtol=1e-5, atol=1e-8) for d in diffs):
            continue
        if not raise_exception:
            return False
        raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    inputs = _as_tuple(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_like(rng.standard_normal(o._array.shape).astype(o._array.dtype),
                                   o).requires_grad_(True) for o in outs)
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
                     rtol=rtol, raise_exception=raise_exception, fast_mode=fast_mode)


# ---- fast mode -----------------------------------------------------------------------------------
# PyTorch's fast mode checks one number per (input, output) pair instead of whole Jacobians:
# v^T J u for random unit vectors u (over the input) and v (over the output). Finite differences
# give J u from two evaluations along u, the backward gives v^T J from one pass with gradient v,
# so the cost no longer grows with the inputs' size. The absolute tolerance grows as PyTorch's
# does, by sum(u) sum(v): each element of the difference may be off by atol.
def _unit_vector(rng, size):
    u = rng.random(size)
    norm = np.sqrt(np.dot(u, u))
    return u / norm if norm > 0 else u


def _along(func, inputs, i, direction, eps, step=1.0):
    """J u of every output with respect to input i (flattened; central differences of
    `step * eps` along `direction`, `step` 1j: along a complex input's imaginary part)."""
    t = inputs[i]
    arr = t._array
    delta = _like((step * eps * direction).reshape(arr.shape).astype(arr.dtype), t)._array
    orig = arr.copy()
    prev = _grad.enabled
    _grad.enabled = False
    try:
        arr[...] = orig + delta
        plus = [_host(o).astype(np.complex128 if o.dtype.is_complex else np.float64)
                for o in _outputs(func, inputs)]
        arr[...] = orig - delta
        minus = [_host(o) for o in _outputs(func, inputs)]
    finally:
        arr[...] = orig
        _grad.enabled = prev
    return [((p - m) / (2 * eps)).reshape(-1) for p, m in zip(plus, minus)]


def _fast_check(func, inputs, diff_idx, live, eps, atol, rtol, raise_exception, forward,
                backward):
    rng = np.random.default_rng(0)  # its own stream: the user's generators stay as they were
    outs = _outputs(func, inputs)
    vs = [_unit_vector(rng, o._array.size) for o in outs]
    for i in diff_idx:
        t = inputs[i]
        ur = _unit_vector(rng, t._array.size)
        ui = _unit_vector(rng, t._array.size) if t.dtype.is_complex else None
        along_re = _along(func, inputs, i, ur, eps)
        along_im = _along(func, inputs, i, ui, eps, 1j) if ui is not None else None
        u_sum = ur.sum() + (0.0 if ui is None else ui.sum())
        if forward:
            tangents = _fast_forward(func, inputs, i, ur, ui)
            for j in live:
                tangent = tangents[j]
                n = along_re[j] if ui is None else along_re[j] + along_im[j]
                if not np.allclose(tangent, n, rtol=rtol, atol=atol * u_sum):
                    if not raise_exception:
                        return False
                    _fast_failure(func, inputs, i, j, live, n, tangent, eps, atol, rtol,
                                  "forward")
        if not backward:
            continue
        for j in live:
            o = outs[j]
            for part in ((1, 1j) if o.dtype.is_complex else (1,)):
                take = np.real if part == 1 else np.imag
                g = _fast_vjp(o, t, vs[j] * part)
                n = np.dot(vs[j], take(along_re[j]))
                a = np.dot(g.real, ur)
                if ui is not None:
                    n = n + 1j * np.dot(vs[j], take(along_im[j]))
                    a = a + 1j * np.dot(g.imag, ui)
                if np.allclose(a, n, rtol=rtol, atol=atol * u_sum * vs[j].sum()):
                    continue
                if not raise_exception:
                    return False
                _fast_failure(func, inputs, i, j, live, n, a, eps, atol, rtol,
                              "" if part == 1 else " (the imaginary part of the output)")
    return True


def _fast_vjp(output, target, v):
    """v^T J of `output` with respect to `target`, flattened (zeros where nothing flows)."""
    if not output._requires_grad:
        return np.zeros(target._array.size, target._array.dtype)
    v = v.reshape(output._array.shape).astype(output._array.dtype)
    (g,) = engine.grad(output, [target], _like(v, output), retain_graph=True,
                       allow_unused=True)
    return np.zeros(target._array.size, target._array.dtype) if g is None else \
        _host(g).reshape(-1)


def _fast_forward(func, inputs, i, ur, ui):
    """J u of every output from forward mode, u = ur (+ i ui for a complex input)."""
    from . import forward_ad
    t = inputs[i]
    u = ur if ui is None else ur + 1j * ui
    with forward_ad.dual_level():
        args = list(inputs)
        args[i] = forward_ad.make_dual(
            t.detach(), _like(u.reshape(t._array.shape).astype(t._array.dtype), t))
        tangents = [(o, forward_ad.unpack_dual(o).tangent) for o in _outputs(func, args)]
        return [np.zeros(o._array.size) if tangent is None else _host(tangent).reshape(-1)
                for o, tangent in tangents]


def _fast_failure(func, inputs, i, j, live, numerical, analytical, eps, atol, rtol, what):
    """Raise fast mode's mismatch, with both Jacobians recomputed in full (slow mode) below
    the projected numbers, as PyTorch's message has them (output j counted among `live`,
    the outputs that require grad)."""
    forward = what == "forward"
    mode = "computed with forward mode " if forward else ""
    head = (f"Jacobian {mode}mismatch for output {live.index(j)} with respect to input {i}"
            f"{'' if forward else what},\nnumerical:{make_tensor(np.asarray(numerical))}\n"
            f"analytical:{make_tensor(np.asarray(analytical))}\n")
    diff_idx = [k for k, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]
    slow_n = _numerical(func, inputs, i, eps)[j]
    slow_a = (_forward(func, inputs, i)[j] if forward
              else _analytical(func, inputs, diff_idx)[1][i, j])
    agree = np.allclose(slow_a, slow_n, rtol=rtol, atol=atol)
    detail = (
        "\nThe numbers above are v^T J u for random unit vectors u and v (fast mode: "
        "https://github.com/pytorch/pytorch/issues/53876). The whole Jacobians, recomputed "
        f"element by element (slow mode):\n\nNumerical:\n {make_tensor(slow_n)}\nAnalytical:\n"
        f"{make_tensor(slow_a)}\n\nThe max per-element difference (slow mode) is: "
        f"{make_tensor(np.abs(slow_n - slow_a).max(initial=0.0))}.\n")
    if agree:
        detail += ("\nFast mode failed but slow mode's element-wise differences are within the "
                   "tolerances: the check may pass with fast_mode=False.")
    raise GradcheckError(head + detail)


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
            plus = [_host(o) for o in _as_tuple(call()) if isinstance(o, Tensor)]
            arr[idx] = orig - eps
            minus = [_host(o) for o in _as_tuple(call()) if isinstance(o, Tensor)]
            arr[idx] = orig
            for j, (p, m) in enumerate(zip(plus, minus)):
                jac[j][k] = ((p - m) / (2 * eps)).reshape(-1)
    finally:
        _grad.enabled = prev
    return [_like(j, target) for j in jac]


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
        grads = engine.grad(output, inputs, _like(g, output), retain_graph=True,
                            allow_unused=True)
        for i, gi in enumerate(grads):
            if gi is None:
                continue
            types_ok &= gi.dtype is inputs[i].dtype
            sizes_ok &= tuple(gi.shape) == tuple(inputs[i].shape)
            jac[i][:, k] = _host(gi).reshape(-1)
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
    return (tuple(_like(j, output) for j in first), bool(reentrant),
            bool(sizes_ok), bool(types_ok))
