"""`ember.autograd.functional`: Jacobians, Hessians and vector products of whole functions
(`vjp`, `jvp`, `jacobian`, `hessian`, `vhp`, `hvp`), as torch.autograd.functional.

Everything is built on `autograd.grad`. Forward-mode products (`jvp`, `hvp`) use the
double-backward trick: the vector-Jacobian product is linear in its vector `u`, so
differentiating `u -> J^T u` with respect to `u` in the direction `v` gives `J v`.
`vectorize=True` is accepted and gives the same values; the rows are computed one by one.
"""
from .._tensor import Tensor
from .engine import grad as _grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(value, arg_name, fn_name):
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = (f"value at index {i}" if is_tuple else f"given {arg_name}")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where} has type {type(el)}.")
    return is_tuple, items


def _unpack(res, is_tuple):
    return res if is_tuple else res[0]


def _unpack2(res, outer_tuple, inner_tuple):
    if not inner_tuple:
        res = tuple(el[0] for el in res)
    return res if outer_tuple else res[0]


def _prepare(tensors, create_graph, need_graph):
    """Fresh Tensor objects for the inputs, so that the function's own captures of the same
    tensors are told apart from the inputs; differentiable back to the caller's tensors only
    when a graph is asked for."""
    out = []
    for t in tensors:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(tensors, create_graph):
    if isinstance(tensors[0], Tensor):
        return tensors if create_graph else tuple(t.detach() for t in tensors)
    return tuple(_finish(t, create_graph) for t in tensors)


def _validate_v(v, other, is_other_tuple):
    if len(v) != len(other):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.size() != b.size():
            where = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.size()} but got "
                               f"{a.size()}.")


_NOT_DIFFERENTIABLE = {
    "hessian": lambda i: (f"The hessian of the user-provided function with respect to input {i} "
                          "is independent of the input. This is not allowed in strict mode. You "
                          "should ensure that your function is thrice differentiable and that "
                          "the hessian depends on the inputs."),
    "jacobian": lambda i: ("While computing the hessian, found that the jacobian of the "
                           f"user-provided function with respect to input {i} is independent of "
                           "the input. This is not allowed in strict mode. You should ensure "
                           "that your function is twice differentiable and that the jacobian "
                           "depends on the inputs (this would be violated by a linear function "
                           "for example)."),
    "grad_inputs": lambda i: (f"The gradient with respect to input {i} is independent of the "
                              "inputs of the user-provided function. This is not allowed in "
                              "strict mode."),
    "outputs": lambda i: (f"Output {i} of the user-provided function does not require "
                          "gradients. The outputs must be computed in a differentiable manner "
                          "from the input when running in strict mode."),
}


def _check_requires_grad(tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_NOT_DIFFERENTIABLE[kind](i))


def _grad_of(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """`autograd.grad` over the outputs that take part in the graph (None for the others'
    gradients; no error for inputs the outputs do not use)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs),
                 allow_unused=True, create_graph=create_graph, retain_graph=retain_graph)


_MISSING = {
    "back": lambda i: (f"The output of the user-provided function is independent of input {i}. "
                       "This is not allowed in strict mode."),
    "back_trick": lambda i: (f"The gradient with respect to the input is independent of entry "
                             f"{i} in the grad_outputs when using the double backward trick to "
                             "compute forward mode gradients. This is not allowed in strict "
                             "mode."),
    "double_back": lambda i: (f"The jacobian of the user-provided function is independent of "
                              f"input {i}. This is not allowed in strict mode."),
    "double_back_trick": lambda i: (f"The hessian of the user-provided function is independent "
                                    f"of entry {i} in the grad_jacobian. This is not allowed in "
                                    "strict mode as it prevents from using the double backward "
                                    "trick to replace forward mode AD."),
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    from ..ops.creation import zeros_like
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING[stage](i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        out.append(g)
    return tuple(out)


def _single_element_v(tensors, message):
    if len(tensors) != 1 or tensors[0].nelement() != 1:
        raise RuntimeError(message)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                       "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            v = _prepare(_as_tuple(v, "v", "vjp")[1], create_graph, False)
            _validate_v(v, outputs, out_tuple)
        else:
            _single_element_v(outputs, "The vector v can only be None if the user-provided "
                                       "function returns a single Tensor with a single element.")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        res = _fill_in_zeros(_grad_of(outputs, inputs, v, create_graph), inputs, strict,
                             create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), out_tuple),
            _unpack(_finish(res, create_graph), in_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick."""
    from ..ops.creation import zeros_like
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, True)
        if v is not None:
            v = _prepare(_as_tuple(v, "v", "jvp")[1], create_graph, False)
            _validate_v(v, inputs, in_tuple)
        else:
            _single_element_v(inputs, "The vector v can only be None if the input to the "
                                      "user-provided function is a single Tensor with a single "
                                      "element.")
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                       "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # J^T u is linear in u: its value at u = 0 does not matter, only its graph
        u = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad_of(outputs, inputs, u, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True) if create_graph else _Nothing():
        res = _fill_in_zeros(_grad_of(grad_inputs, u, v, create_graph), outputs, strict,
                             create_graph, "back_trick")
    return (_unpack(_finish(outputs, create_graph), out_tuple),
            _unpack(_finish(res, create_graph), out_tuple))


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of `func` at `inputs`: for each output and input, a tensor of shape
    output.shape + input.shape (nested tuples as the arguments were tuples)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`strict=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-"
                                      "reverse Hessian isonly implemented for `vectorize=True`.")
    from ..ops.creation import zeros_like
    from ..ops.shape import stack
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                       "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either set "
                               "`strict=False` or `vectorize=False`.")
        result = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _grad_of((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (g, inp) in enumerate(zip(vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {k}. This is not allowed "
                                               "in strict mode.")
                        g = zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError("The jacobian of the user-provided function is "
                                           f"independent of input {i}. This is not allowed in "
                                           "strict mode when create_graph=True.")
                    rows[k].append(g)
            result.append(tuple(
                (stack(r, 0) if r else zeros_like(inp).reshape(0, *inp.shape))
                .view(out.shape + inp.shape) for r, inp in zip(rows, inputs)))
        result = _finish(tuple(result), create_graph)
    return _unpack2(result, out_tuple, in_tuple)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar `func` at `inputs` (for tuple inputs, a tuple of tuples: the
    block for each pair of inputs)."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar(*inp):
        out = func(*inp)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack2(res, in_tuple, in_tuple)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function."""
    with enable_grad():
        in_tuple, inputs, outputs, v, jac = _first_order(func, inputs, v, create_graph, strict,
                                                         "vhp")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        res = _fill_in_zeros(_grad_of(jac, inputs, v, create_graph), inputs, strict,
                             create_graph, "double_back")
    return _finish(outputs, create_graph)[0], _unpack(_finish(res, create_graph), in_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar function, by the double-backward trick."""
    from ..ops.creation import zeros_like
    with enable_grad():
        in_tuple, inputs, outputs, v, jac = _first_order(func, inputs, v, create_graph, strict,
                                                         "hvp")
        u = tuple(zeros_like(t, requires_grad=True) for t in inputs)
        double_back = _grad_of(jac, inputs, u, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        res = _fill_in_zeros(_grad_of(double_back, u, v, create_graph), inputs, strict,
                             create_graph, "double_back_trick")
    return _finish(outputs, create_graph)[0], _unpack(_finish(res, create_graph), in_tuple)


def _first_order(func, inputs, v, create_graph, strict, name):
    """The shared start of vhp and hvp: checked inputs, v, the scalar output and its
    gradient (with a graph)."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _prepare(inputs, create_graph, True)
    if v is not None:
        v = _prepare(_as_tuple(v, "v", name)[1], create_graph, False)
        _validate_v(v, inputs, in_tuple)
    else:
        _single_element_v(inputs, "The vector v can only be None if the input to the "
                                  "user-provided function is a single Tensor with a single "
                                  "element.")
    out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", name)
    _check_requires_grad(outputs, "outputs", strict)
    if out_tuple:
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain "
                           "a single element")
    jac = _grad_of(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return in_tuple, inputs, outputs, v, jac
