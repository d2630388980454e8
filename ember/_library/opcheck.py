"""`opcheck`: a custom operator held against what PyTorch's checks require of it."""
from .. import autograd
from .._tensor import Tensor
from .custom_ops import _lookup, _tensors_in

__all__ = ["opcheck", "OpCheckError"]


class OpCheckError(Exception):
    pass


def _copied(values):
    """The arguments again, tensors cloned (keeping requires_grad) so a check cannot disturb
    the caller's."""
    def copy(v):
        if isinstance(v, Tensor):
            out = v.detach().clone()
            return out.requires_grad_(v.requires_grad) if v.is_leaf else out
        if isinstance(v, (list, tuple)):
            return type(v)(copy(x) for x in v)
        return v
    return [copy(v) for v in values]


def _flat_outputs(output):
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    return [o for o in outputs if isinstance(o, Tensor)]


def _check_schema(op, values, atol=None, rtol=None):
    before = [v.detach().clone() if isinstance(v, Tensor) else None for v in values]
    op._run(values)
    for name, value, old in zip(op._arg_names, values, before):
        if old is not None and name not in op._mutated and not bool(
                (value.detach() == old).all() | (value.detach().isnan() & old.isnan()).all()):
            raise OpCheckError(f"{op._qualname}: the operator mutated its argument '{name}', "
                               "which is not in mutates_args")


def _check_autograd_registration(op, values, atol=None, rtol=None):
    wants_grad = any(t.requires_grad for t in _tensors_in(values))
    if wants_grad and op._backward_fn is None and any(
            o.dtype.is_floating_point for o in _flat_outputs(op._run(values))):
        raise OpCheckError(f"{op._qualname}: an input requires grad but the operator has no "
                           "autograd formula. Please use register_autograd to add one.")


def _check_fake(op, values, atol=None, rtol=None):
    real = _flat_outputs(op._run(values))
    if not real:
        return
    if op._abstract_fn is None:
        raise OpCheckError(f"{op._qualname}: no fake (meta) implementation. Please use "
                           "register_fake to add one.")
    fake = _flat_outputs(op._call_kernel(op._abstract_fn, _copied(values)))
    for i, (r, f) in enumerate(zip(real, fake, strict=True)):
        if (tuple(r.shape), r.dtype, r.device) != (tuple(f.shape), f.dtype, f.device):
            raise OpCheckError(f"{op._qualname}: output {i} of the fake implementation is "
                               f"{tuple(f.shape)} {f.dtype} on {f.device}, the operator's is "
                               f"{tuple(r.shape)} {r.dtype} on {r.device}")


def _check_rerun(op, values, atol, rtol):
    """What PyTorch's AOT check compares (a traced copy against the eager op) is here one
    run against another on fresh copies: outputs and gradients must agree."""
    from ..testing import assert_close
    runs = []
    for _ in range(2):
        copies = _copied(values)
        outputs = _flat_outputs(op._run(copies))
        grads = []
        differentiable = [o for o in outputs if o.requires_grad]
        leaves = [t for t in _tensors_in(copies) if t.requires_grad]
        if differentiable and leaves:
            total = sum(o.sum() for o in differentiable)
            grads = autograd.grad(total, leaves, allow_unused=True)
        runs.append((outputs, [g for g in grads if g is not None]))
    for first, second in zip(runs[0], runs[1]):
        for a, b in zip(first, second, strict=True):
            assert_close(a, b, atol=atol, rtol=rtol)


_CHECKS = {"test_schema": _check_schema,
           "test_autograd_registration": _check_autograd_registration,
           "test_faketensor": _check_fake,
           "test_aot_dispatch_dynamic": _check_rerun}


def opcheck(op, args, kwargs=None, *, test_utils=tuple(_CHECKS), raise_exception=True,
            atol=None, rtol=None):
    """Checks a custom operator on sample `args`: it mutates only what it declares, has an
    autograd formula when inputs need one, its fake implementation agrees with it on shapes,
    dtypes and devices, and it gives the same outputs and gradients on a second run. Returns
    {test: "SUCCESS" or the error}; raises OpCheckError at the first failure by default."""
    target = _lookup(op)
    names = [test_utils] if isinstance(test_utils, str) else list(test_utils)
    for name in names:
        if name not in _CHECKS:
            raise ValueError(f"test_utils must be a subset of {tuple(_CHECKS)}, got {name!r}")
    results = {}
    for name in names:
        values = _copied(target._bind(args, dict(kwargs or {})))
        try:
            _CHECKS[name](target, values, atol, rtol)
            results[name] = "SUCCESS"
        except Exception as error:
            if raise_exception:
                if isinstance(error, OpCheckError):
                    raise
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {error}") from error
            results[name] = error
    return results

