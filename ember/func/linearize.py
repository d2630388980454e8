"""`torch.func.linearize`, `functionalize` and `debug_unwrap`.

`linearize(func, *primals)` gives func's value at the primals and a function that maps
tangents to the Jacobian-vector product there; ember evaluates each product with `jvp` at the
saved primals (PyTorch traces a graph once instead: same values).

`functionalize(func)` runs func so that none of its mutations or aliasing reach the caller's
tensors except as PyTorch's functionalization does: func works on copies of the tensor inputs,
an input func mutated gets the new value copied back, and no output shares memory with an
input (with remove="mutations_and_views", no output is a view of anything either).

ember's transforms hand functions plain tensors (vmap is a loop, grad runs autograd), so
there is no wrapper for `debug_unwrap` to take off: it returns the tensor itself.
"""
from .._tensor import Tensor
from ..utils._pytree import flatten, unflatten

__all__ = ["linearize", "functionalize", "debug_unwrap"]

_REMOVE_HELP = (
    "     remove='mutations': all inplace and out= operators will be removed from the program, "
    "and replaced with their out-of-place equivalents.\n"
    "     remove='mutations_and_views': In addition to the above, all aliasing operators {view} "
    "will be replaced with their non-aliasing counterparts, {view}_copy.\n")


def _spec_text(spec):
    from . import _spec_text as text
    return text(spec)


def linearize(func, *primals):
    """(func(*primals), jvp_fn) where jvp_fn(*tangents) is the Jacobian of func at `primals`
    applied to `tangents` (one per primal, the same shapes, dtypes and devices)."""
    from . import jvp
    output = func(*primals)
    flat_primals, primals_spec = flatten(primals)
    meta = [(p.shape, p.device, p.dtype) for p in flat_primals]
    saved = tuple(unflatten([p.detach() for p in flat_primals], primals_spec))

    def jvp_fn(*tangents):
        flat_tangents, tangents_spec = flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {_spec_text(tangents_spec)} to have the "
                               f"same argspec as the primals {_spec_text(primals_spec)}")
        for idx, (t, (shape, device, dtype)) in enumerate(zip(flat_tangents, meta)):
            for what, have, want in (("shape", t.shape, shape), ("device", t.device, device),
                                     ("dtype", t.dtype, dtype)):
                if have != want:
                    raise RuntimeError(f"tangent:{idx} with {what} {have} in flattened pytree "
                                       f"doesn't match the {what} {want} of the corresponding "
                                       "primal.")
        return jvp(func, saved, tuple(tangents))[1]
    return output, jvp_fn


def functionalize(func, *, remove="mutations"):
    """func, run on copies of its tensor inputs: mutations of an input are copied back into
    it afterwards, and outputs never alias the inputs."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for "
                           f"remove={remove}. Valid options are:\n{_REMOVE_HELP}")

    def wrapper(*args, **kwargs):
        leaves, spec = flatten((args, kwargs))
        originals = [x for x in leaves if isinstance(x, Tensor)]
        copies = {id(x): x.clone() for x in originals}
        versions = {id(x): copies[id(x)]._version for x in originals}
        args_in, kwargs_in = unflatten([copies[id(x)] if isinstance(x, Tensor) else x
                                        for x in leaves], spec)
        out = func(*args_in, **kwargs_in)
        for x in originals:
            c = copies[id(x)]
            if c._version != versions[id(x)]:
                x.copy_(c)
        out_leaves, out_spec = flatten(out)
        fresh = []
        for o in out_leaves:
            if isinstance(o, Tensor) and (remove == "mutations_and_views" and o._base is not None
                                          or any(o is x for x in originals)):
                o = o.clone()
            fresh.append(o)
        return unflatten(fresh, out_spec)
    wrapper.__name__ = getattr(func, "__name__", "func")
    wrapper.__doc__ = getattr(func, "__doc__", None)
    return wrapper


def debug_unwrap(tensor, *, recurse=True):
    """The tensor under a transform's wrapper: ember's transforms use no wrappers, so the
    tensor itself."""
    return tensor
