"""The op table on 'cuda', under the strict CuPy stand-in (tests/_strict_cupy): every sample runs
on the CPU and on the device, and the device must give the same outputs (values, dtypes,
shapes, on the device), the same gradients, and the same exception types for error samples.
The stand-in is CuPy as far as ember can tell, so this runs the code a GPU runs.

Test ids are the op table's: `pytest tests/ops/test_ops_cuda.py -k "add-0"`.
"""
import contextlib
import warnings
import zlib

import numpy as np
import pytest

import ember
from tests._strict_cupy import REAL_CUDA, strict_cupy
from .test_ops import (CASES, Materialized, _sample_of, _tensor_outputs, _weights,
                       assert_same_values)

# What the device cannot match, and why: {entry base name: reason}. An entry here is marked
# xfail(strict=True), so it must leave the list once it works.
KNOWN = {}

# Entries whose results are about the host itself: PyTorch runs them on CPU tensors only
# (apply_, map_, map2_), reads a host file (from_file), answers differently on a device by
# design (`x.to("cpu") is x`, device memory is always shared, the storage class is
# torch.cuda's, PyTorch's CPU build has no scaled_grouped_mm: its CUDA form is tested in
# test_scaled_mm.py), is about lacking CUDA, or stands a device in already (cuda).
_ONLY_ON_THE_HOST = {"cuda", "apply_", "map_", "map2_", "from_file", "share_memory_",
                     "storage_type", "scaled_grouped_mm"}
_HOST_VARIANTS = {"to.identity", "cpu.identity", "type.cuda_without_gpu"}
# Error samples that PyTorch's CUDA kernels compute instead of refusing: integer division by a
# tensor holding a zero raises ZeroDivisionError on the CPU only (on a device, a look at the
# divisor's data would be a sync).
_CUDA_COMPUTES = {"floor_divide-8", "remainder.int-3", "fmod-11"}


# NaN and infinities converted to an integer type are undefined in C++: x86 gives the most
# negative integer (int32, int64) or 0, a GPU saturates with NaN to 0, and PyTorch's CPU and
# CUDA builds differ alike. ember gives each device's own conversion (CuPy's on cuda), so these
# samples hold the device to the GPU's rule (the stand-in's model of it: gpu_float_to_int),
# not to the CPU's values.
_GPU_CONVERSION = {f"{name}-6" for name in ("int", "long", "short", "char", "byte")}

# On a real GPU only (EMBER_TEST_REAL_CUDA=1): what a real GPU run showed differs, and why.
# The conversion rule above is the stand-in's model, not yet confirmed there for every width
# (probe.py prints the GPU's own answers).
_REAL_GPU_DIFFERS = {case_id: "NaN/inf to an integer is undefined behaviour: the GPU's "
                     "conversion is modelled, not confirmed" for case_id in _GPU_CONVERSION}
# (index_reduce amax/amin's NaN gradient on a real GPU, once listed here, came from CuPy's
# float64 scatter-max keeping float32's precision: the stand-in models that now, and
# `_accumulate.scatter_extreme` scatters floats by exact integer keys)


def _params():
    params = []
    for case in CASES:
        if case.op.name in _ONLY_ON_THE_HOST or case.base in _HOST_VARIANTS:
            continue
        reason = KNOWN.get(case.base) or KNOWN.get(case.id)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        if REAL_CUDA and case.id in _REAL_GPU_DIFFERS:
            marks = [pytest.mark.xfail(strict=False, reason=_REAL_GPU_DIFFERS[case.id])]
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


def _run(case, device):
    """(output, gradients of the grad-requiring leaves or None, exception or None)."""
    sample = case.sample
    mat = Materialized(ember, sample, np.float64, views_inside=True)
    leaves = [t.detach().to(device).requires_grad_(rg)
              for t, (_, rg) in zip(mat.leaves, mat.slots)]
    args, kwargs = mat.arguments(leaves)
    context = ember.device(device) if device != "cpu" else contextlib.nullcontext()
    with warnings.catch_warnings(), context:
        warnings.simplefilter("ignore")
        try:
            out = case.op.call(ember, *args, **kwargs)
        except Exception as e:
            return None, None, e
        grads = None
        wanted = [t for t in leaves if t.requires_grad]
        outs = [o for o in _tensor_outputs(out) if o.requires_grad]
        if wanted and outs and case.op.grad and case.op.parity == "values" and \
                not any(o.dtype.is_complex for o in outs):
            weights = _weights(outs, zlib.crc32(case.id.encode()), np.float64)
            loss = sum((o * ember.from_numpy(w).to(device=o.device, dtype=o.dtype)).sum()
                       for o, w in zip(outs, weights))
            grads = ember.autograd.grad(loss, wanted, allow_unused=True)
    return out, grads, None


def _host(t):
    t = t.detach().cpu()
    if t.dtype is ember.bfloat16:
        t = t.float()
    return t.resolve_conj().resolve_neg().numpy()


def _compare(c, d, op, where, meta):
    if isinstance(c, ember.Tensor):
        assert isinstance(d, ember.Tensor), f"{where}: the CPU gives a Tensor, cuda a {type(d).__name__}"
        assert d.device.type == c.device.type or d.device.type == "cuda", \
            f"{where}: on {d.device}, the CPU result is on {c.device}"
        assert tuple(d.shape) == tuple(c.shape), f"{where}: shape {tuple(d.shape)} != {tuple(c.shape)}"
        assert d.dtype is c.dtype, f"{where}: dtype {d.dtype} != the CPU's {c.dtype}"
        if meta or c.layout is not ember.strided:
            return
        assert_same_values(_host(d), _host(c), op, f"{where}: cuda values differ from the CPU's")
    elif isinstance(c, (list, tuple)):
        assert isinstance(d, (list, tuple)) and len(d) == len(c), \
            f"{where}: the CPU gives {type(c).__name__} of {len(c)}, cuda {d!r:.80}"
        for k, (ci, di) in enumerate(zip(c, d)):
            _compare(ci, di, op, f"{where}[{k}]", meta)
    elif isinstance(c, float) and not meta:
        np.testing.assert_allclose(d, c, atol=op.atol, rtol=op.rtol, err_msg=where)
    elif isinstance(c, (str, type)):  # a type name or repr names the device it is about
        assert _on_the_host(d) == _on_the_host(c), f"{where}: {d!r} != the CPU's {c!r}"
    elif not meta:
        assert type(d) is type(c) and (d == c or d != d), f"{where}: {d!r} != the CPU's {c!r}"


def _as_a_gpu_converts(floats, cpu_out):
    """The CPU's integer result as the GPU's conversion gives it from the same floats (uint8
    through int64, as PyTorch converts floats to uint8 on every device)."""
    from tests._strict_cupy.array import gpu_float_to_int
    target = cpu_out._array.dtype
    wide = np.dtype(np.int64) if target == np.uint8 else target
    return ember.from_numpy(gpu_float_to_int(np.asarray(floats), wide).astype(target))


def _on_the_host(name):
    """A string or class as the CPU's twin would name it (torch.cuda.FloatTensor and
    device=cuda:0 read torch.FloatTensor and device=cpu)."""
    text = name if isinstance(name, str) else f"{name.__module__}.{name.__qualname__}"
    return text.replace("cuda:0", "cpu").replace(".cuda.", ".")


@pytest.mark.parametrize("case", _params())
def test_cuda_matches_cpu(case):
    _sample_of(case)
    cpu_out, cpu_grads, cpu_err = _run(case, "cpu")
    with strict_cupy():
        cuda_out, cuda_grads, cuda_err = _run(case, "cuda")
        if cpu_err is not None and case.id in _CUDA_COMPUTES:
            assert cuda_err is None, f"cuda raises {cuda_err!r}"
            ember.cuda.synchronize()
            return
        if cpu_err is not None:
            if cuda_err is None:  # bad data: as PyTorch's CUDA kernels, a device-side assert
                with pytest.raises(RuntimeError, match="device-side assert triggered"):
                    ember.cuda.synchronize()
                return
            assert type(cuda_err) is type(cpu_err), \
                f"the CPU raises {cpu_err!r}; cuda raises {cuda_err!r}"
            return
        if cuda_err is not None:
            raise cuda_err
        meta = case.op.parity != "values"
        if case.id in _GPU_CONVERSION:
            cpu_out = _as_a_gpu_converts(case.sample.args[0], cpu_out)
        _compare(cpu_out, cuda_out, case.op, "output", meta)
        if cpu_grads is not None:
            assert cuda_grads is not None, "the CPU has gradients; cuda has none"
            for k, (c, d) in enumerate(zip(cpu_grads, cuda_grads)):
                if c is None or d is None:
                    assert c is None and d is None, f"grad {k}: CPU {c}, cuda {d}"
                    continue
                _compare(c, d, case.op, f"grad of input {k}", False)
