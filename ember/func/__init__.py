"""`ember.func`: function transforms, as torch.func (`grad`, `grad_and_value`, `vjp`, `jvp`,
`jacrev`, `jacfwd`, `hessian`, `vmap`, `functional_call`).

The differentiating transforms run the function on fresh inputs and call `autograd.grad`;
when the caller's own graph reaches through the function (an input that requires grad, or a
captured tensor that does), the result keeps a graph, so transforms nest (`grad(grad(f))`)
and compose with `backward()`. `jacfwd` and `jvp` give forward-mode results, computed in
reverse mode (the double-backward trick for `jvp`).

`vmap` is a loop: it calls the function once per index of the mapped dimension and stacks
the results. It gives vmap's values, shapes and errors, not its speed.
"""
from .._state import grad as _grad_state
from .._tensor import Tensor
from ..autograd.engine import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from ..ops._graph import AccumulateGrad
from ..utils._pytree import describe, flatten, unflatten
from .functional_call import functional_call
from .linearize import debug_unwrap, functionalize, linearize
from .module_state import replace_all_batch_norm_modules_, stack_module_state
from .rearrange import rearrange
from .vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "functionalize", "linearize", "stack_module_state",
           "replace_all_batch_norm_modules_", "debug_unwrap", "rearrange"]


def _check_argnums(argnums, nargs):
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and all(isinstance(a, int) for a in argnums):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        nums = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    out = []
    for a in nums:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
        out.append(a % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"argnums must be unique, got {argnums}")
    return out


def _leaves_of(tree):
    leaves, spec = flatten(tree)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
    return leaves, spec


def _track(leaf):
    """The input the function sees: connected to the caller's graph when it has one."""
    if _grad_state.enabled and leaf.requires_grad:
        return leaf.view_as(leaf), False
    if not (leaf.dtype.is_floating_point or leaf.dtype.is_complex):
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    return leaf.detach().requires_grad_(True), True


class _Inputs:
    """The positional arguments with the differentiated ones replaced by tracked tensors."""

    def __init__(self, args, argnums):
        self.args = list(args)
        self.argnums = argnums
        self.leaves = []      # per differentiated argument: its tracked leaves
        self.specs = []
        self.fresh = set()    # ids of the tracked tensors made here (not the caller's)
        self.outer = False    # whether any differentiated input is in the caller's graph
        for n in argnums:
            leaves, spec = _leaves_of(args[n])
            tracked = []
            for leaf in leaves:
                t, fresh = _track(leaf)
                if fresh:
                    self.fresh.add(id(t))
                else:
                    self.outer = True
                tracked.append(t)
            self.leaves.append(tracked)
            self.specs.append(spec)
            self.args[n] = unflatten(tracked, spec)

    def flat(self):
        return [t for group in self.leaves for t in group]

    def keeps_graph(self, outputs):
        """Whether results must stay differentiable for the caller: its grad mode is on and
        its graph reaches the outputs (through an input or a captured tensor)."""
        if not _grad_state.enabled:
            return False
        return self.outer or _reaches_outside(outputs, self.fresh)

    def regroup(self, flat_grads, single):
        grads, i = [], 0
        for group, spec in zip(self.leaves, self.specs):
            grads.append(unflatten(flat_grads[i:i + len(group)], spec))
            i += len(group)
        return grads[0] if single else tuple(grads)


def _reaches_outside(outputs, fresh):
    seen = set()
    stack = [o.grad_fn for o in outputs if isinstance(o, Tensor) and o.grad_fn is not None]
    stack += [o for o in outputs if isinstance(o, Tensor) and o.requires_grad
              and o.grad_fn is None and id(o) not in fresh]
    if any(isinstance(s, Tensor) for s in stack):
        return True
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if type(node) is AccumulateGrad:
            if id(node.variable) not in fresh:
                return True
            continue
        stack.extend(child for child, _ in node._next if child is not None)
    return False


def _grads(outputs, inputs, grad_outputs, keep, retain=True):
    from ..ops.creation import zeros_like
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return [zeros_like(t) for t in inputs]
    got = _autograd_grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs),
                         retain_graph=retain, create_graph=keep, allow_unused=True)
    return [zeros_like(t) if g is None else g for g, t in zip(got, inputs)]


def _detached(tree, keep):
    if keep:
        return tree
    leaves, spec = flatten(tree)
    return unflatten([t.detach() if isinstance(t, Tensor) else t for t in leaves], spec)


def _split_aux(out, has_aux, api):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return out


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient of `func` with respect to `argnums`, `func`'s value);
    with `has_aux`, (gradient, (value, aux))."""
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        inputs = _Inputs(args, nums)
        with enable_grad():
            out = func(*inputs.args, **kwargs)
        out, aux = _split_aux(out, has_aux, "grad_and_value(f)(*args)")
        if not isinstance(out, Tensor):
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                               f"got {type(out)}")
        if out.dim() != 0:
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                               f"Tensor, got tensor with {out.dim()} dims. Maybe you wanted to "
                               "use the vjp or jacrev APIs instead?")
        keep = inputs.keeps_graph([out])
        flat = _grads([out], inputs.flat(), [None], keep, retain=keep)
        grads = inputs.regroup(flat, isinstance(argnums, int))
        value = out if keep else out.detach()
        if has_aux:
            return grads, (value, _detached(aux, keep))
        return grads, value
    return _named(wrapper, func)


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of the scalar `func` with respect to the arguments
    `argnums` (with `has_aux`, (gradient, aux))."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return _named(wrapper, func)


def _named(wrapper, func):
    wrapper.__name__ = getattr(func, "__name__", "func")
    wrapper.__doc__ = getattr(func, "__doc__", None)
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]); `vjp_fn(cotangents)` gives the vector-Jacobian product
    for every primal, as a tuple."""
    inputs = _Inputs(primals, list(range(len(primals))))
    with enable_grad():
        out = func(*inputs.args)
    out, aux = _split_aux(out, has_aux, "vjp(f, *primals)")
    out_leaves, out_spec = flatten(out)
    for leaf in out_leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError("vjp(f, *primals): expected f(*primals) to return only tensors, "
                               f"got unsupported type {type(leaf)}")
    keep = inputs.keeps_graph(out_leaves)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        leaves, spec = flatten(cotangents)
        if spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               "structure of outputs to the function. cotangents: "
                               f"{_spec_text(spec)}, primal output: {_spec_text(out_spec)}")
        for i, (c, o) in enumerate(zip(leaves, out_leaves)):
            if c.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{c.shape} and output[{i}] has a shape of {o.shape}.")
        graph = (keep or any(c.requires_grad for c in leaves)) and _grad_state.enabled
        if create_graph is not None:
            graph = create_graph
        flat = _grads(out_leaves, inputs.flat(), leaves, graph)
        return tuple(inputs.regroup(flat, False))

    result = (_detached(out, keep), vjp_fn)
    return result + (_detached(aux, keep),) if has_aux else result


def _spec_text(spec):
    if spec is None:
        return "*"
    if spec[0] == "tuple":
        inner = ", ".join(_spec_text(s) for s in spec[1])
        return f"({inner},)" if len(spec[1]) == 1 else f"({inner})"
    return describe(spec)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J tangents): the Jacobian-vector product, by the double-backward
    trick."""
    from ..ops.creation import zeros_like
    if not isinstance(primals, (tuple, list)):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    if not isinstance(tangents, (tuple, list)) or len(tangents) != len(primals):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           "the same python structure. For example, if primals is a tuple of "
                           "3 tensors, tangents also must be. Got primals with structure "
                           f"{_spec_text(flatten(tuple(primals))[1])} and tangents with "
                           f"structure {_spec_text(flatten(tuple(tangents))[1])}")
    inputs = _Inputs(tuple(primals), list(range(len(primals))))
    tangent_leaves, _ = _leaves_of(tuple(tangents))
    with enable_grad():
        out = func(*inputs.args)
        out, aux = _split_aux(out, has_aux, "jvp(f, primals, tangents)")
        out_leaves, out_spec = flatten(out)
        for leaf in out_leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError("jvp(f, primals, tangents): expected f(*primals) to return "
                                   f"only tensors, got unsupported type {type(leaf)}")
        keep = inputs.keeps_graph(out_leaves)
        u = [zeros_like(o, requires_grad=True) for o in out_leaves]
        back = _grads(out_leaves, inputs.flat(), u, True)
    with enable_grad() if keep else _no_graph():
        jv = _grads(back, u, tangent_leaves, keep)
    result = (_detached(out, keep), _detached(unflatten(jv, out_spec), keep))
    return result + (_detached(aux, keep),) if has_aux else result


class _no_graph:
    def __enter__(self):
        self.prev = _grad_state.enabled
        _grad_state.enabled = False

    def __exit__(self, *exc):
        _grad_state.enabled = self.prev
        return False


def _jacobian(func, argnums, has_aux):
    from ..ops.creation import zeros_like
    from ..ops.shape import stack

    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        inputs = _Inputs(args, nums)
        with enable_grad():
            out = func(*inputs.args, **kwargs)
        out, aux = _split_aux(out, has_aux, "vjp(f, *primals)")
        out_leaves, out_spec = flatten(out)
        for leaf in out_leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError("vjp(f, *primals): expected f(*primals) to return only "
                                   f"tensors, got unsupported type {type(leaf)}")
            if not (leaf.dtype.is_floating_point or leaf.dtype.is_complex):
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or "
                                   f"complex Tensors, got Tensor with dtype {leaf.dtype}")
        keep = inputs.keeps_graph(out_leaves)
        flat_in = inputs.flat()
        jacs = []
        for o in out_leaves:
            rows = [[] for _ in flat_in]
            flat_o = o.reshape(-1)
            for j in range(o.numel()):
                for k, g in enumerate(_grads([flat_o[j]], flat_in, [None], keep)):
                    rows[k].append(g)
            per_input = [(stack(r, 0) if r else zeros_like(t).reshape(0, *t.shape))
                         .view(o.shape + t.shape) for r, t in zip(rows, flat_in)]
            jacs.append(inputs.regroup(per_input, isinstance(argnums, int)))
        result = unflatten(jacs, out_spec)
        if not keep:
            result = _detached(result, False)
        return (result, _detached(aux, keep)) if has_aux else result
    return _named(wrapper, func)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """A function returning the Jacobian of `func` with respect to `argnums`: for each output,
    shape output.shape + input.shape (rows computed one by one in reverse mode)."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian(func, argnums, has_aux)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """As jacrev: the same Jacobian (computed here in reverse mode)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    return _jacobian(func, argnums, has_aux)


def hessian(func, argnums=0):
    """The Hessian of `func` with respect to `argnums` (the Jacobian of its Jacobian)."""
    return jacfwd(jacrev(func, argnums), argnums)
