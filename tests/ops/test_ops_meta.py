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

# What ember's meta device gives otherwise than PyTorch's, and why: {reason: entry ids}.
# Marked xfail(strict=True): an entry leaves the list once it matches.
_DIFFERS = {
    "PyTorch has no meta kernel for it (NotImplementedError); ember computes the shape": (
        "__setitem__.advanced-5", "__setitem__.advanced-6", "batch_norm_update_stats-0",
        "batch_norm_update_stats-1", "binomial-0", "binomial-1", "combinations-0",
        "combinations.replacement-0", "corrcoef-0", "corrcoef-1", "corrcoef-2", "corrcoef-3",
        "corrcoef-4", "corrcoef.method-0", "fake_quantize_per_channel_affine-0",
        "fake_quantize_per_channel_affine-1", "fake_quantize_per_channel_affine-2",
        "fake_quantize_per_channel_affine-6",
        "fake_quantize_per_tensor_affine-0", "fake_quantize_per_tensor_affine-1",
        "fake_quantize_per_tensor_affine-2", "cov-0", "cov-1", "cov-10", "cov-11", "cov-2", "cov-3",
        "cov-4", "cov-5", "cov-6", "cov-7", "cov-8", "cov-9", "cov.method-0", "geqrf-0", "geqrf-1",
        "geqrf-2", "geqrf-3", "histogramdd-17", "index_fill-1", "index_fill_-1", "index_put-4",
        "index_put-5", "index_put.method-4", "index_put.method-5", "index_put_-4", "index_put_-5",
        "istft-0", "istft-1", "istft-2", "istft-3", "linalg.lstsq-0", "linalg.lstsq-1",
        "linalg.lstsq-2", "linalg.lstsq-3", "linalg.lstsq-4", "multi_margin_loss-0",
        "multi_margin_loss-1", "multi_margin_loss-2", "multilabel_margin_loss-0",
        "multilabel_margin_loss-1", "sparse_coo_tensor-3", "storage.errors-2", "storage.errors-3",
        "untyped_storage-0", "untyped_storage-1",
    ),
    "ember's kernel reads values here (the sample's data), which a meta tensor lacks": (
        "embedding-3", "embedding-4", "embedding_renorm_-0", "embedding_renorm_-1",
        "fill_diagonal_-0", "fill_diagonal_-1", "fill_diagonal_-2", "fill_diagonal_-3",
        "fill_diagonal_-4", "fractional_max_pool2d-0", "fractional_max_pool2d-1",
        "fractional_max_pool2d-2", "fractional_max_pool2d-3", "fractional_max_pool2d-4",
        "fractional_max_pool2d.indices-0", "fractional_max_pool2d.indices-1",
        "fractional_max_pool2d.indices-2", "fractional_max_pool2d.indices-3",
        "fractional_max_pool2d.indices-4", "fractional_max_pool3d.indices-0",
        "fractional_max_pool3d.indices-1", "fractional_max_pool3d.indices-2",
        "fractional_max_pool3d.indices-3", "fractional_max_pool3d.indices-4", "linalg.ldl_solve-1",
        "linalg.ldl_solve-2", "linalg.ldl_solve-3", "linalg.ldl_solve-6", "linalg.matrix_exp-0",
        "linalg.matrix_exp-1", "linalg.matrix_exp-2", "linalg.matrix_exp-3", "linalg.matrix_exp-4",
        "masked_scatter-0", "masked_scatter-1", "masked_scatter_-0", "masked_scatter_-1",
        "matrix_exp-0", "matrix_exp-1", "matrix_exp.method-0", "searchsorted-7", "tensor.of_0dim-0",
        "tensor.of_0dim-1", "tensor.of_0dim-2", "tensor.of_tensor-0", "tensor.of_tensor-1",
        "tensor.of_tensor-2",
    ),
    "ember's error check runs on the host stand-ins of a meta matrix, which PyTorch's meta kernel does not make": (
        "cholesky.errors-0", "inverse-3", "linalg.cholesky.errors-0", "linalg.cholesky.errors-1",
        "linalg.cholesky.errors-2", "linalg.eig-2", "linalg.inv-3", "linalg.inv-4",
        "linalg.lu_factor-4", "linalg.lu_factor.errors-3", "linalg.lu_factor.errors-4",
        "linalg.lu_factor_ex.singular-3", "linalg.matrix_power-7", "linalg.solve_ex-5",
        "linalg.tensorinv-4", "lu_unpack-4",
    ),
    "PyTorch's meta behaviour differs from its CPU one here (device, check or shape); ember follows its CPU": (
        "_scaled_mm-0", "_scaled_mm-1", "_scaled_mm-10", "_scaled_mm-11", "_scaled_mm-12",
        "_scaled_mm-2", "_scaled_mm-3", "_scaled_mm-4", "_scaled_mm-5", "_scaled_mm-6",
        "_scaled_mm-7", "_scaled_mm-8", "_scaled_mm-9", "embedding_bag-0", "embedding_bag-1",
        "embedding_bag-3", "embedding_bag-4", "embedding_bag-5", "embedding_bag-6", "grouped_mm-0",
        "grouped_mm-1", "grouped_mm-2", "grouped_mm.row_major-0", "grouped_mm.row_major-1",
        "native_batch_norm-1", "new.keywords-0", "norm-8", "normal-5", "normal-6", "normal-7",
        "range-0", "range-1", "range-2", "range-3", "scaled_mm-0", "scaled_mm-1", "scaled_mm-10",
        "scaled_mm-11", "scaled_mm-12", "scaled_mm-13", "scaled_mm-14", "scaled_mm-15",
        "scaled_mm-16", "scaled_mm-17", "scaled_mm-18", "scaled_mm-19", "scaled_mm-2",
        "scaled_mm-20", "scaled_mm-21", "scaled_mm-22", "scaled_mm-23", "scaled_mm-24",
        "scaled_mm-25", "scaled_mm-26", "scaled_mm-27", "scaled_mm-28", "scaled_mm-3",
        "scaled_mm-4", "scaled_mm-5", "scaled_mm-6", "scaled_mm-7", "scaled_mm-8", "scaled_mm-9",
        "scatter_reduce-13", "scatter_reduce_-13", "vander-0", "vander-1", "vander-2", "vander-9",
        "vander.keywords-0", "view_as_real-2",
    ),
    "PyTorch's meta kernel lays the result out otherwise than both CPU builds": (
        "einsum#1-2", "einsum#1-4", "einsum-1", "einsum-2",
       
    ),
    "sparse compressed tensors on meta: PyTorch wants nnz 0, ember reads the indices": (
        "ccol_indices-0", "crow_indices-0", "crow_indices-1", "sparse_bsc_tensor-0",
        "sparse_bsr_tensor-0", "sparse_compressed_tensor-0", "sparse_csc_tensor-0",
        "sparse_csr_tensor-0", "sparse_csr_tensor-1",
    ),
}
KNOWN = {case_id: reason for reason, ids in _DIFFERS.items() for case_id in ids}


def _params():
    params = []
    for case in CASES:
        if case.op.name in _ONLY_ON_THE_HOST or case.base in _HOST_VARIANTS or \
                case.op.parity == "none":
            continue
        reason = KNOWN.get(case.id)
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
