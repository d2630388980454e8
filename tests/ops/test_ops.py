"""The op table's runner: every entry of `tests/ops/opinfo` through gradcheck, gradgradcheck
and parity with PyTorch (values, dtypes, shapes, gradients, errors), and the coverage check
that every public op has an entry.

Test ids read `<name>[.<variant>]-<sample index>`: `pytest tests/ops/test_ops.py -k "add-0"`.
"""
import contextlib
import importlib.util
import re
import warnings
import zlib
from collections import Counter

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.ops import FAMILIES
from .opinfo import IMPORT_ERRORS, all_ops

try:
    import torch
except ImportError:  # parity tests skip; everything else runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


# ---- collection ------------------------------------------------------------------------------
class Case:
    """One sample of one entry; `sample` is None when the entry's `samples` raised."""

    def __init__(self, base, op, index, sample, error=None):
        self.base, self.op, self.index, self.sample, self.error = base, op, index, sample, error

    @property
    def id(self):
        return f"{self.base}-{self.index}"


def _collect():
    cases, seen = [], Counter()
    for op in all_ops():
        base = op.name + (f".{op.variant}" if op.variant else "")
        n = seen[base]
        seen[base] += 1
        if n:
            base = f"{base}#{n}"
        try:
            samples = op.samples(np.random.default_rng(zlib.crc32(base.encode())))
        except Exception as e:  # a broken entry fails its own test, not the collection
            cases.append(Case(base, op, 0, None, e))
            continue
        cases.extend(Case(base, op, i, s) for i, s in enumerate(samples))
    return cases


CASES = _collect()


def _floating_arrays(x):
    if isinstance(x, np.ndarray):
        return [x] if x.dtype.kind == "f" or x.dtype.name == "bfloat16" else []
    if isinstance(x, (list, tuple)):
        return [a for item in x for a in _floating_arrays(item)]
    return []


def _grad_requested(sample):
    """Whether some array of the sample requires grad."""
    if sample.grad is None:
        return bool(_floating_arrays(sample.args) + _floating_arrays(list(sample.kwargs.values())))
    for g in sample.grad:
        src = sample.kwargs.get(g) if isinstance(g, str) else sample.args[g]
        if _floating_arrays(src):
            return True
    return False


def _missing(modules):
    return [m for m in modules if importlib.util.find_spec(m) is None]


def _params(kind, keep):
    params = []
    for case in CASES:
        if case.sample is not None and not keep(case):
            continue
        reason = case.op.xfail.get((kind, case.index), case.op.xfail.get(kind))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        missing = _missing(case.op.needs)
        if missing:
            marks.append(pytest.mark.skip(reason=f"optional {', '.join(missing)} not installed"))
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


def _differentiable(case):
    return case.op.grad and case.sample.raises is None and _grad_requested(case.sample)


GRADCHECK = _params("gradcheck", _differentiable)
GRADGRADCHECK = _params("gradgradcheck", lambda c: c.op.gradgrad and _differentiable(c))
PARITY = _params("parity", lambda c: c.op.parity != "none")
PARITY32 = _params("parity_float32", lambda c: c.op.parity != "none" and c.sample.raises is None
                   and bool(_floating_arrays(c.sample.args)
                            + _floating_arrays(list(c.sample.kwargs.values()))))


def _sample_of(case):
    if case.sample is None:
        raise AssertionError(f"{case.base}: samples() raised {case.error!r}") from case.error
    return case.sample


def _context(case, lib):
    context = getattr(case.op, "context", None)
    return context(lib) if context is not None else contextlib.nullcontext()


# ---- making a sample's tensors -----------------------------------------------------------------
_COMPLEX_OF = {"float64": np.complex128, "float32": np.complex64}


def _cast(arr, float_dtype):
    """float64 (and complex128) arrays take the run's dtype; any other dtype stays as given."""
    if arr.dtype == np.float64:
        return arr.astype(float_dtype)
    if arr.dtype == np.complex128:
        return arr.astype(_COMPLEX_OF[np.dtype(float_dtype).name])
    return arr


def _tensor(lib, arr):
    if arr.dtype.name == "bfloat16":  # torch.from_numpy knows no bfloat16
        return lib.from_numpy(arr.astype(np.float32)).to(lib.bfloat16)
    t = lib.from_numpy(np.array(arr, copy=True))
    if arr.size == 0:  # torch.from_numpy gives an empty tensor all-zero strides
        t = lib.zeros(arr.shape, dtype=t.dtype)
    return t


def _noncontig(arr):
    """(array in memory order, view) such that view(tensor of the array) is a non-contiguous
    tensor with arr's values. Unused memory holds junk that shows if an op reads it."""
    if arr.ndim >= 2:
        return np.ascontiguousarray(np.swapaxes(arr, -1, -2)), lambda t: t.transpose(-1, -2)
    if arr.ndim == 1:
        src = np.empty((2 * arr.shape[0],), arr.dtype)
        src[::2] = arr
        src[1::2] = True if arr.dtype == np.bool_ else 77
        return src, lambda t: t[::2]
    return arr, None


class Materialized:
    """A sample's arrays as tensors of one library (the `leaves`, in order of appearance),
    and the call's arguments built from them."""

    def __init__(self, lib, sample, float_dtype, views_inside):
        self.slots = []  # (view function or None, requires grad)
        self.leaves = []
        want = sample.grad
        self._args = [self._convert(lib, a, float_dtype, views_inside,
                                    want is None or i in want, i in sample.noncontig)
                      for i, a in enumerate(sample.args)]
        self._kwargs = {k: self._convert(lib, v, float_dtype, views_inside,
                                         want is None or k in want, k in sample.noncontig)
                        for k, v in sample.kwargs.items()}

    def _convert(self, lib, x, float_dtype, views_inside, grad, noncontig):
        if isinstance(x, np.ndarray):
            arr = _cast(x, float_dtype)
            view = None
            if noncontig:
                arr, view = _noncontig(arr)
            t = _tensor(lib, arr)
            if view is not None and not views_inside:
                t, view = view(t).detach(), None
            rg = grad and t.dtype.is_floating_point
            if rg:
                t.requires_grad_(True)
            self.slots.append((view, rg))
            self.leaves.append(t)
            return _Slot(len(self.leaves) - 1)
        if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
            return type(x)(self._convert(lib, item, float_dtype, views_inside, grad, noncontig)
                           for item in x)
        return x

    def arguments(self, leaves=None):
        leaves = self.leaves if leaves is None else leaves

        def fill(x):
            if isinstance(x, _Slot):
                view = self.slots[x.i][0]
                t = leaves[x.i]
                return t if view is None else view(t)
            if isinstance(x, (list, tuple)):
                return type(x)(fill(item) for item in x)
            return x
        return [fill(a) for a in self._args], {k: fill(v) for k, v in self._kwargs.items()}

    def grad_leaves(self):
        return [t for t, (_, rg) in zip(self.leaves, self.slots) if rg]


class _Slot:
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


# ---- gradcheck -----------------------------------------------------------------------------------
def _tensor_outputs(out):
    if isinstance(out, ember.Tensor):
        return (out,)
    if isinstance(out, (list, tuple)):
        return tuple(t for item in out for t in _tensor_outputs(item))
    return ()


def _checked_function(case, mat):
    """The entry as a function of the sample's leaves, giving its floating outputs (the
    only ones with derivatives)."""
    op = case.op

    def f(*leaves):
        args, kwargs = mat.arguments(leaves)
        outs = _tensor_outputs(op.call(ember, *args, **kwargs))
        return tuple(o for o in outs if o.dtype.is_floating_point or o.dtype.is_complex)
    return f


# An op's own warnings are compared with PyTorch's by the parity tests; gradcheck repeats
# the op many times, so they are silenced there.
@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", GRADCHECK)
def test_gradcheck(case):
    sample = _sample_of(case)
    # Non-contiguous layouts are made inside the function (gradcheck perturbs its inputs'
    # memory, so its leaves are contiguous); the op still sees the strided tensors.
    with _context(case, ember):
        mat = Materialized(ember, sample, case.op.grad_dtype, views_inside=True)
        assert gradcheck(_checked_function(case, mat), tuple(mat.leaves))


# gradgradcheck's slow mode differentiates the backward along every element of the inputs and
# the output gradients, one at a time: over SLOW_GRADGRAD_MAX elements it checks PyTorch's fast
# mode's random projection v^T J u instead (test_gradcheck.py holds fast mode's verdicts to
# PyTorch's). 455 of 3,383 samples are over it; they took 355 of the 458 s the gradgradchecks
# took, in slow mode. Their first derivatives still take the slow gradcheck above.
SLOW_GRADGRAD_MAX = 60


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", GRADGRADCHECK)
def test_gradgradcheck(case):
    sample = _sample_of(case)
    with _context(case, ember):
        mat = Materialized(ember, sample, case.op.grad_dtype, views_inside=True)
        leaves, fn = tuple(mat.leaves), _checked_function(case, mat)
        elements = sum(t.numel() for t in leaves if t.requires_grad) + \
            sum(o.numel() for o in fn(*leaves))
        assert gradgradcheck(fn, leaves, fast_mode=elements > SLOW_GRADGRAD_MAX)


# ---- parity with PyTorch -------------------------------------------------------------------------
def _run(lib, case, float_dtype):
    """(materialized sample, output or None, exception or None, warnings raised)."""
    mat = Materialized(lib, case.sample, float_dtype, views_inside=False)
    args, kwargs = mat.arguments()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out, err = case.op.call(lib, *args, **kwargs), None
        except Exception as e:
            out, err = None, e
    return mat, out, err, sorted(_warning_text(w) for w in caught
                                 if not str(w.message).startswith(_TORCH_ONCE_PER_PROCESS))


# PyTorch's C++ TORCH_WARN_ONCE messages come only the first time in a process, whatever the
# Python filters say, so whether a parity test sees one depends on which tests ran before it
# in that worker: they cannot be compared.
_TORCH_ONCE_PER_PROCESS = ("LSTM with projections is not supported with oneDNN",
                           "Sparse CSR tensor support is in beta state",
                           "Sparse CSC tensor support is in beta state",
                           "Sparse BSR tensor support is in beta state",
                           "Sparse BSC tensor support is in beta state")


def _warning_text(w):
    # PyTorch's C++ warnings end with where they were raised: not part of the message
    message = re.sub(r" \(Triggered internally at [^)]*\.\)$", "", str(w.message))
    return f"{w.category.__name__}: {message}"


def _host(t):
    t = t.detach().cpu()
    if torch is not None and isinstance(t, torch.Tensor):
        if t._is_zerotensor():  # PyTorch's symbolic zero gradients
            t = torch.zeros(t.shape, dtype=t.dtype)
        t = t.resolve_conj().resolve_neg()
    if _dtype_name(t.dtype) == "bfloat16":  # NumPy holds no torch bfloat16
        t = t.float()
    return np.asarray(t.numpy())


def _dtype_name(d):
    return str(d).split(".")[-1]


def assert_same_values(got, want, op, message):
    """Arrays equal: floating ones within the entry's tolerances (NaN where NaN), others exactly."""
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, atol=op.atol, rtol=op.rtol, equal_nan=True,
                                   err_msg=message)
    else:
        np.testing.assert_array_equal(got, want, err_msg=message)


def _compare(e, t, op, where, meta):
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{where}: torch gives a Tensor, ember a {type(e).__name__}"
        assert tuple(e.shape) == tuple(t.shape), f"{where}: shape {tuple(e.shape)} != torch's {tuple(t.shape)}"
        assert _dtype_name(e.dtype) == _dtype_name(t.dtype), \
            f"{where}: dtype {_dtype_name(e.dtype)} != torch's {_dtype_name(t.dtype)}"
        if meta:
            return
        assert_same_values(_host(e), _host(t), op, f"{where}: values differ from torch's")
    elif isinstance(t, (list, tuple)):
        assert isinstance(e, (list, tuple)), f"{where}: torch gives a {type(t).__name__}, ember a {type(e).__name__}"
        assert len(e) == len(t), f"{where}: {len(e)} items, torch gives {len(t)}"
        if type(t).__module__ == "torch.return_types":
            assert type(e).__name__ == type(t).__name__, \
                f"{where}: result type {type(e).__name__}, torch's is {type(t).__name__}"
        for k, (ei, ti) in enumerate(zip(e, t)):
            _compare(ei, ti, op, f"{where}[{k}]", meta)
    elif isinstance(t, torch.dtype):
        assert _dtype_name(e) == _dtype_name(t), f"{where}: {e} != torch's {t}"
    elif isinstance(t, (bool, int, float, complex)):
        assert type(e) is type(t), f"{where}: ember gives {type(e).__name__}, torch {type(t).__name__}"
        if not meta:
            if isinstance(t, float):
                np.testing.assert_allclose(e, t, atol=op.atol, rtol=op.rtol, err_msg=where)
            else:
                assert e == t, f"{where}: {e!r} != torch's {t!r}"
    else:
        assert e == t, f"{where}: {e!r} != torch's {t!r}"


def _weights(outs, seed, dtype):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(o.shape)).astype(dtype) for o in outs]


def _grads(lib, mat, outs, weights):
    leaves = mat.grad_leaves()
    loss = None
    for o, w in zip(outs, weights):
        term = (o * lib.from_numpy(w).to(o.dtype)).sum()
        loss = term if loss is None else loss + term
    return lib.autograd.grad(loss, leaves, allow_unused=True)


def _check_parity(case, float_dtype):
    sample, op = _sample_of(case), case.op
    tmat, tout, terr, twarn = _run(torch, case, float_dtype)
    emat, eout, eerr, ewarn = _run(ember, case, float_dtype)
    # warnings both libraries give once a process (ember's `warn_once`, checked against
    # PyTorch's in tests/test_warn_once.py) depend on which tests ran before in this worker
    twarn, ewarn = ([w for w in ws if w.split(": ", 1)[1] not in ember._state._warned_once]
                    for ws in (twarn, ewarn))
    assert ewarn == twarn, f"warnings differ:\n ember: {ewarn}\n torch: {twarn}"
    if sample.raises is not None:
        assert isinstance(terr, sample.raises), \
            f"the entry expects {sample.raises.__name__}; torch gives {terr!r} (fix the entry)"
        assert eerr is not None, f"torch raises {terr!r}; ember returns {eout!r}"
        assert isinstance(eerr, type(terr)), \
            f"torch raises {terr!r}; ember raises {eerr!r}"
        assert str(eerr) == str(terr), f"message differs:\n ember: {eerr}\n torch: {terr}"
        return
    if terr is not None:
        raise AssertionError(f"torch raises {terr!r} on this sample (fix the entry)") from terr
    if eerr is not None:
        raise eerr
    meta = op.parity == "meta"
    _compare(eout, tout, op, "output", meta)
    # An out-of-place op must leave its inputs alone (in-place entries work on clones).
    for k, (el, tl) in enumerate(zip(emat.leaves, tmat.leaves)):
        _compare(el, tl, op, f"input {k} after the call", meta)

    touts, eouts = _torch_outputs(tout), _tensor_outputs(eout)
    for k, (eo, to) in enumerate(zip(eouts, touts)):
        assert eo.requires_grad == to.requires_grad, \
            f"output {k}: requires_grad {eo.requires_grad}, torch's is {to.requires_grad}"
    if meta or not op.grad_parity or not tmat.grad_leaves():
        return
    pairs = [(eo, to) for eo, to in zip(eouts, touts) if to.requires_grad]
    if not pairs or any(to.dtype.is_complex for _, to in pairs) or \
            any(t.dtype.is_complex for t in tmat.grad_leaves()):
        return
    weights = _weights([to for _, to in pairs], zlib.crc32(case.id.encode()), np.float64)
    tgrads = _grads(torch, tmat, [to for _, to in pairs], weights)
    egrads = _grads(ember, emat, [eo for eo, _ in pairs], weights)
    for k, (eg, tg) in enumerate(zip(egrads, tgrads)):
        if tg is None and eg is None:
            continue
        if tg is None:
            tg = torch.zeros_like(tmat.grad_leaves()[k])
        assert eg is not None, f"grad of input {k}: ember gives None, torch {tg}"
        _compare(eg, tg, op, f"grad of grad-input {k}", False)


def _torch_outputs(out):
    if isinstance(out, torch.Tensor):
        return (out,)
    if isinstance(out, (list, tuple)):
        return tuple(t for item in out for t in _torch_outputs(item))
    return ()


@needs_torch
@pytest.mark.parametrize("case", PARITY)
def test_parity(case):
    with _context(case, torch), _context(case, ember):
        _check_parity(case, np.float64)


@needs_torch
@pytest.mark.parametrize("case", PARITY32)
def test_parity_float32(case):
    with _context(case, torch), _context(case, ember):
        _check_parity(case, np.float32)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", _params("raises", lambda c: c.sample.raises is not None))
def test_error_cases_raise(case):
    """An error sample raises its exception in ember (parity also compares the message with
    PyTorch's; this runs without PyTorch too)."""
    sample = _sample_of(case)
    with _context(case, ember):
        mat = Materialized(ember, sample, np.float64, views_inside=False)
        args, kwargs = mat.arguments()
        with pytest.raises(sample.raises):
            case.op.call(ember, *args, **kwargs)


# ---- the table itself ----------------------------------------------------------------------------
def test_opinfo_modules_import():
    assert not IMPORT_ERRORS, "op-table modules that fail to import:\n" + "\n".join(
        f"--- tests/ops/opinfo/{name}.py\n{tb}" for name, tb in IMPORT_ERRORS.items())


def _covered():
    names = set()
    for op in all_ops():
        names.add(op.name)
        names.update(op.covers)
    return names


def test_every_public_op_has_an_entry():
    covered = _covered()
    missing = {}
    for family in FAMILIES:
        short = family.__name__.rsplit(".", 1)[-1]
        names = sorted(set(family.__all__) | set(family.METHODS))
        gaps = [n for n in names if n not in covered]
        if gaps:
            missing[short] = gaps
    assert not missing, "public ops without an op-table entry (name or covers):\n" + "\n".join(
        f"  {family}: {', '.join(names)}" for family, names in missing.items())


def test_every_functional_op_has_an_entry():
    covered = _covered()
    missing = {}
    for family in FAMILIES:
        gaps = sorted(n for n in getattr(family, "FUNCTIONAL", ()) if n not in covered)
        if gaps:
            missing[family.__name__.rsplit(".", 1)[-1]] = gaps
    assert not missing, "ember.nn.functional ops without an op-table entry:\n" + "\n".join(
        f"  {family}: {', '.join(names)}" for family, names in missing.items())


@pytest.mark.parametrize("namespace", ["fft", "special"])
def test_every_namespace_op_has_an_entry(namespace):
    """`ember.fft.*` and `ember.special.*` have entries named "fft.rfft", "special.i0" ..."""
    module = getattr(ember, namespace, None)
    if module is None:
        pytest.skip(f"ember.{namespace} is not there")
    covered = _covered()
    gaps = sorted(n for n in module.__all__ if f"{namespace}.{n}" not in covered)
    assert not gaps, f"ember.{namespace} ops without an op-table entry: {', '.join(gaps)}"
