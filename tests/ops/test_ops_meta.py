"""The op table on the meta device, held against PyTorch's meta tensors: every sample's leaves
go to 'meta' in both libraries (creation ops run inside `with device("meta")`), and ember must
give what PyTorch gives: tensors of the same shapes, dtypes and strides, on meta, the same
gradients' shapes and dtypes after a backward, and the same exception types (PyTorch refuses
ops whose result's shape depends on the values: nonzero, unique, a boolean mask ...). Strides
that differ from PyTorch's must be those ember gives on the CPU (its model of them there). A
bad sample (an error case of the table) may also be refused as ember refuses it on the CPU:
PyTorch's meta kernels leave out some of their CPU kernels' checks.

Test ids are the op table's: `pytest tests/ops/test_ops_meta.py -k "add-0"`.
"""
import warnings

import numpy as np
import pytest

import ember
from .test_ops import CASES, Materialized, _sample_of
from .test_ops_cuda import _HOST_VARIANTS, _ONLY_ON_THE_HOST

torch = pytest.importorskip("torch")

# What ember's meta device gives otherwise than PyTorch's, and why: {entry id or base: reason}.
# Marked xfail(strict=True): an entry leaves the list once it matches.
KNOWN = {}


def _params():
    params = []
    for case in CASES:
        if case.op.name in _ONLY_ON_THE_HOST or case.base in _HOST_VARIANTS or \
                case.op.parity == "none":
            continue
        reason = KNOWN.get(case.id) or KNOWN.get(case.base)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


def _outputs(lib, out):
    if isinstance(out, lib.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for item in out for t in _outputs(lib, item)]
    return []


def _run(lib, case):
    """(the op's output, the shapes and dtypes of its leaves' gradients or None, the
    exception it raised or None), every tensor on meta."""
    mat = Materialized(lib, case.sample, np.float64, views_inside=True)
    leaves = [t.detach().to("meta").requires_grad_(rg) for t, (_, rg) in
              zip(mat.leaves, mat.slots)]
    args, kwargs = mat.arguments(leaves)
    with warnings.catch_warnings(), lib.device("meta"):
        warnings.simplefilter("ignore")
        try:
            out = case.op.call(lib, *args, **kwargs)
        except Exception as e:
            return None, None, e
        wanted = [t for t in leaves if t.requires_grad]
        outs = [o for o in _outputs(lib, out) if o.requires_grad and o.dtype.is_floating_point]
        if not (wanted and outs and case.op.grad and case.op.parity == "values"):
            return out, None, None
        try:
            grads = lib.autograd.grad(sum(o.sum() for o in outs), wanted, allow_unused=True)
        except Exception as e:
            return out, None, e
    # (a gradient's strides are the engine's business, as on the CPU: not compared)
    return out, [None if g is None else _described(g)[:3] for g in grads], None


def _cpu_strides(case, where):
    """The strides of the output at `where` ("output[1]") from ember's run on the CPU."""
    mat = Materialized(ember, case.sample, np.float64, views_inside=True)
    args, kwargs = mat.arguments()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = case.op.call(ember, *args, **kwargs)
    for k in where[len("output"):].strip("[]").split("]["):
        out = out[int(k)] if k else out
    return tuple(out.stride())


def _described(t):
    return (tuple(t.shape), str(t.dtype).split(".")[-1], t.device.type, tuple(t.stride()))


def _compare(theirs, ours, where, case):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, ember.Tensor), f"{where}: torch gives a Tensor, ember " \
            f"{type(ours).__name__}"
        if theirs.layout is not torch.strided:
            return
        described = _described(theirs)
        if theirs.is_conj() or theirs.is_neg():  # lazily conjugated views: strides as stored
            described = described[:3]
            assert _described(ours)[:3] == described, f"{where}: {_described(ours)} != {described}"
            return
        assert _described(ours)[:3] == described[:3], f"{where}: ember {_described(ours)}, " \
            f"torch {described} (shape, dtype, device, stride)"
        if _described(ours) != described:  # strides where ember models them: as on the CPU
            assert _described(ours)[3] == _cpu_strides(case, where), \
                f"{where}: strides {_described(ours)[3]}, torch's {described[3]}, and ember's " \
                f"on the CPU {_cpu_strides(case, where)}"
    elif isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs), \
            f"{where}: torch gives {type(theirs).__name__} of {len(theirs)}, ember {ours!r:.80}"
        for k, (t, o) in enumerate(zip(theirs, ours)):
            _compare(t, o, f"{where}[{k}]", case)


@pytest.mark.parametrize("case", _params())
def test_meta_matches_torch_meta(case):
    _sample_of(case)
    theirs, their_grads, their_err = _run(torch, case)
    ours, our_grads, our_err = _run(ember, case)
    expected = case.sample.raises
    if our_err is not None and expected is not None and isinstance(our_err, expected):
        return  # a bad sample refused as on the CPU (PyTorch's meta kernels skip some checks)
    if their_err is not None:
        assert our_err is not None, f"torch raises {their_err!r}; ember gives {ours!r:.200}"
        assert type(our_err) is type(their_err), \
            f"torch raises {their_err!r:.300}; ember raises {our_err!r:.300}"
        return
    if our_err is not None:
        raise our_err
    _compare(theirs, ours, "output", case)
    if their_grads is not None:
        assert our_grads == their_grads, f"gradients: ember {our_grads}, torch {their_grads}"
