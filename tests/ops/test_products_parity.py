"""The matrix products beside PyTorch where the op table does not look: the graph each records
(linear folds an N-d batch into one addmm as PyTorch's _flatten_nd_linear does, matmul's
folded products end in an unsafe view, reshape of a non-viewable tensor clones first), the
dtype each answers in (addr promotes) and the words of each dtype error."""
import numpy as np
import pytest

import ember
from tests._grad_fn_tree import grad_fn_tree


def _run(lib, build):
    """(grad_fn chain, shape, dtype name) of build(lib), or (exception type, message)."""
    try:
        out = build(lib)
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return type(e).__name__, str(e)
    return grad_fn_tree(out, 4), tuple(out.shape), str(out.dtype).split(".")[-1]


def _operands(lib):
    rng = np.random.default_rng(0)

    def t(*shape, dtype="float32", grad=False):
        return lib.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=grad)
    return t


def _linear(x_shape, bias_shape=(5,), x_dtype="float32", b_dtype="float32", transpose=False):
    def build(lib):
        t = _operands(lib)
        x = t(*x_shape, dtype=x_dtype)
        if transpose:
            x = x.transpose(0, 1)
        w = t(5, 4, grad=True)
        b = None if bias_shape is None else t(*bias_shape, dtype=b_dtype, grad=True)
        return lib.nn.functional.linear(x, w, b)
    return build


LINEAR = {
    "3d": _linear((2, 3, 4)),
    "4d": _linear((2, 2, 3, 4)),
    "1d": _linear((4,)),
    "2d": _linear((3, 4)),
    "empty batch": _linear((0, 3, 4)),
    "3d bias 2d": _linear((2, 3, 4), (3, 5)),
    "3d bias 0d": _linear((2, 3, 4), ()),
    "3d non-contiguous": _linear((3, 2, 4), transpose=True),
    "3d non-contiguous double bias": _linear((3, 2, 4), b_dtype="float64", transpose=True),
    "3d double bias": _linear((2, 3, 4), b_dtype="float64"),
    "2d double bias": _linear((3, 4), b_dtype="float64"),
    "3d double input": _linear((2, 3, 4), x_dtype="float64"),
    "3d bias too long": _linear((2, 3, 4), (6,)),
    "4d bias too long": _linear((2, 2, 3, 4), (6,)),
    "3d no bias": _linear((2, 3, 4), None),
}


@pytest.mark.parametrize("name", list(LINEAR))
def test_linear_records_and_checks_as_pytorch(torch, name):
    assert _run(ember, LINEAR[name]) == _run(torch, LINEAR[name])


def _pair(shape_a, shape_b, fn, dtype_a="float32", dtype_b="float32", grad=True):
    def build(lib):
        t = _operands(lib)
        return fn(lib, t(*shape_a, dtype=dtype_a, grad=grad), t(*shape_b, dtype=dtype_b,
                                                                 grad=grad))
    return build


def _matmul(lib, a, b):
    return lib.matmul(a, b)


PRODUCTS = {
    "3d @ 2d": _pair((2, 3, 4), (4, 5), _matmul),
    "3d @ 1d": _pair((2, 3, 4), (4,), _matmul),
    "1d @ 3d": _pair((4,), (2, 4, 3), _matmul),
    "2d @ 3d": _pair((3, 4), (2, 4, 5), _matmul, grad=False),
    "non-contiguous 3d @ 2d": _pair((3, 2, 4), (4, 5),
                                    lambda lib, a, b: lib.matmul(a.transpose(0, 1), b)),
    "reshape of a transpose": _pair((3, 4), (1,), lambda lib, a, b: a.t().reshape(-1)),
    "mm double float": _pair((3, 4), (4, 5), _matmul, "float64"),
    "mv double float": _pair((3, 4), (4,), lambda lib, a, b: lib.mv(a, b), "float64"),
    "mv float double": _pair((3, 4), (4,), lambda lib, a, b: lib.mv(a, b), "float32", "float64"),
    "3d @ 1d double float": _pair((2, 3, 4), (4,), _matmul, "float64"),
    "3d @ 3d float double": _pair((2, 3, 4), (2, 4, 5), _matmul, "float32", "float64"),
    "2d @ 3d float double": _pair((3, 4), (2, 4, 5), _matmul, "float32", "float64", grad=False),
    "bmm double float": _pair((2, 3, 4), (2, 4, 5), lambda lib, a, b: lib.bmm(a, b), "float64"),
    "addmm bias": _pair((3, 4), (5,),
                        lambda lib, m, bias: lib.addmm(bias.double(), m, m.new_ones(4, 5))),
    "addmm mats": _pair((3, 4), (4, 5), lambda lib, a, b: lib.addmm(b[0], a.double(), b)),
    "addmm int bias": _pair((3, 4), (4, 5), lambda lib, a, b: lib.addmm(b[0].long(), a, b)),
    "baddbmm": _pair((2, 3, 4), (2, 4, 5), lambda lib, a, b: lib.baddbmm(b[0, 0], a.double(), b)),
    "baddbmm bias": _pair((2, 3, 4), (2, 4, 5),
                          lambda lib, a, b: lib.baddbmm(b[0, 0].long(), a, b)),
    "addbmm": _pair((2, 3, 4), (2, 4, 5), lambda lib, a, b: lib.addbmm(b[0, 0], a.double(), b)),
    "addbmm bias": _pair((2, 3, 4), (2, 4, 5),
                         lambda lib, a, b: lib.addbmm(b[0, 0].double(), a, b)),
    "addmv": _pair((3, 4), (4,), lambda lib, a, v: lib.addmv(a[:, 0], a.double(), v)),
    "addmv bias": _pair((3, 4), (4,), lambda lib, a, v: lib.addmv(a[:, 0].half(), a, v)),
    "addr double vector": _pair((3, 4), (3,), lambda lib, a, v: lib.addr(a, v.double(), a[0])),
    "addr int input": _pair((3, 4), (3,), lambda lib, a, v: lib.addr(a.long(), v, a[0])),
}


@pytest.mark.parametrize("name", list(PRODUCTS))
def test_products_record_and_check_as_pytorch(torch, name):
    assert _run(ember, PRODUCTS[name]) == _run(torch, PRODUCTS[name])


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_addr_promotes_as_pytorch(torch, dtype):
    rng = np.random.default_rng(1)
    x, v1, v2 = rng.integers(0, 3, (3, 4)), rng.integers(0, 3, 3), rng.integers(0, 3, 4)
    for beta, alpha in ((1, 1), (2, 3)) if dtype != "bool" else ((1, 1),):
        mine = ember.addr(ember.tensor(x).to(getattr(ember, dtype)), ember.tensor(v1).float(),
                          ember.tensor(v2).float(), beta=beta, alpha=alpha)
        theirs = torch.addr(torch.tensor(x).to(getattr(torch, dtype)), torch.tensor(v1).float(),
                            torch.tensor(v2).float(), beta=beta, alpha=alpha)
        assert str(mine.dtype) == str(theirs.dtype)
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_linear_folded_batch_gradients_match_the_unfolded_product():
    """The folded N-d linear (one addmm) gives the gradients of matmul + bias."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4, 6))
    w, b, g = rng.standard_normal((5, 6)), rng.standard_normal(5), rng.standard_normal((2, 3, 4, 5))
    grads = []
    for fold in (True, False):
        xs, ws, bs = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
        out = ember.nn.functional.linear(xs, ws, bs) if fold else ember.matmul(xs, ws.t()) + bs
        out.backward(ember.tensor(g))
        grads.append([out.detach().numpy()] + [t.grad.numpy() for t in (xs, ws, bs)])
    for a, b_ in zip(*grads):
        np.testing.assert_allclose(a, b_, rtol=1e-12, atol=1e-12)
