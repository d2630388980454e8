"""In-place writes PyTorch forbids or allows on special views, against PyTorch: outputs of
multi-output view ops (unbind, split, chunk), views made in no_grad / inference mode, and
expanded tensors whose elements share memory."""
import warnings

import pytest

import ember


def _outcome(T, scenario):
    """What `scenario(T)` does: its error (type, message) or the written tensor's values."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            r = scenario(T)
        except Exception as exc:  # noqa: BLE001
            return type(exc).__name__, str(exc)
    expanded = sorted({str(w.message).split(" (Triggered")[0] for w in seen
                       if "expanded tensors" in str(w.message)})
    return "ok", None if r is None else r.tolist(), expanded


def _same(torch, scenario):
    assert _outcome(ember, scenario) == _outcome(torch, scenario)


_MULTI = {"unbind": lambda y: y.unbind(1)[2], "split": lambda y: y.split(2, 1)[1],
          "split_sizes": lambda y: y.split([1, 3], 1)[1], "chunk": lambda y: y.chunk(2, 1)[1],
          "tensor_split": lambda y: y.tensor_split(2, 1)[1], "hsplit": lambda y: y.hsplit(2)[1]}
_WRITES = {"mul_": lambda v, T: v.mul_(2), "add_ tensor": lambda v, T: v.add_(T.ones(1)),
           "setitem": lambda v, T: v.__setitem__(0, 1.0), "zero_": lambda v, T: v.zero_(),
           "copy_": lambda v, T: v.copy_(T.ones(1)), "view of it": lambda v, T: v[0:1].mul_(2)}


@pytest.mark.parametrize("write", list(_WRITES))
@pytest.mark.parametrize("op", list(_MULTI))
def test_multi_output_view_inplace(torch, op, write):
    def scenario(T):
        v = _MULTI[op](T.ones(3, 4, requires_grad=True).clone())
        _WRITES[write](v, T)
        return v.detach()
    _same(torch, scenario)


@pytest.mark.parametrize("op", list(_MULTI))
def test_multi_output_view_inplace_untracked(torch, op):
    def no_grad(T):
        y = T.ones(3, 4, requires_grad=True).clone()
        with T.no_grad():
            return _MULTI[op](y).mul_(2)

    def plain(T):
        return _MULTI[op](T.ones(3, 4)).mul_(2)

    def plain_then_tracked(T):  # a grad-requiring operand makes the write tracked
        return _MULTI[op](T.ones(3, 4)).add_(T.ones(1, requires_grad=True)).detach()

    def made_in_no_grad(T):
        y = T.ones(3, 4, requires_grad=True).clone()
        with T.no_grad():
            v = _MULTI[op](y)
        return v.mul_(2)
    for scenario in (no_grad, plain, plain_then_tracked, made_in_no_grad):
        _same(torch, scenario)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_view_made_without_grad_mode(torch, mode):
    def leaf_base(T):
        y = T.ones(3, 4, requires_grad=True)
        with getattr(T, mode)():
            v = y[0]
        return v.mul_(2)

    def plain_base(T):
        y = T.ones(3, 4)
        with getattr(T, mode)():
            v = y[0]
        return v.mul_(T.ones(1, requires_grad=True))

    def untracked(T):
        y = T.ones(3, 4)
        with getattr(T, mode)():
            v = y[0]
        return v.mul_(2)
    for scenario in (leaf_base, plain_base, untracked):
        _same(torch, scenario)


def _col(T):
    return T.arange(3.0).reshape(3, 1).expand(3, 4)


def _row(T):
    return T.arange(4.0).expand(3, 4)


_EXPANDED_WRITES = {
    "mul_": lambda x, T: x.mul_(2), "add_": lambda x, T: x.add_(T.ones(4)),
    "iadd": lambda x, T: x.__iadd__(1), "div_": lambda x, T: x.div_(2),
    "exp_": lambda x, T: x.exp_(), "neg_": lambda x, T: x.neg_(), "clamp_": lambda x, T: x.clamp_(0, 1),
    "copy_": lambda x, T: x.copy_(T.ones(1)), "copy_ self": lambda x, T: x.copy_(x),
    "fill_": lambda x, T: x.fill_(2), "fill_ tensor": lambda x, T: x.fill_(T.tensor(3.0)),
    "zero_": lambda x, T: x.zero_(), "uniform_": lambda x, T: x.uniform_() and None,
    "setitem all": lambda x, T: x.__setitem__(Ellipsis, 5.0),
    "setitem row": lambda x, T: x.__setitem__(0, 5.0),
    "setitem column": lambda x, T: x.__setitem__((slice(None), 0), 5.0),
    "setitem index": lambda x, T: x.__setitem__(T.tensor([0]), 5.0),
    "index_put_": lambda x, T: x.index_put_((T.tensor([0]),), T.tensor(5.0)),
    "masked_fill_": lambda x, T: x.masked_fill_(x > 0, 5.0),
    "scatter_": lambda x, T: x.scatter_(0, T.zeros(1, 1, dtype=T.long), 5.0),
    "out=": lambda x, T: T.add(T.ones(3, 4), 1, out=x),
    "tracked mul_": lambda x, T: T.ones(3, 1, requires_grad=True).clone().expand(3, 4).mul_(2),
}


@pytest.mark.parametrize("write", list(_EXPANDED_WRITES))
@pytest.mark.parametrize("make", [_col, _row], ids=["column", "row"])
def test_write_into_expanded(torch, make, write):
    # PyTorch refuses most writes where elements share memory; fill_/zero_ and indexing
    # writes go through (the latter with a deprecation warning)
    def scenario(T):
        x = make(T)
        r = _EXPANDED_WRITES[write](x, T)
        return None if r is None else x.detach()
    _same(torch, scenario)


def _residual(T, second_use):
    """A ResNet block's `out += identity` (tracked add_ and sub_, which copy nothing aside:
    their nodes save no operand), then `second_use`; the leaves' gradients."""
    g = T.Generator().manual_seed(0)
    a = T.randn(2, 3, generator=g).requires_grad_()
    b = T.randn(2, 3, generator=g).requires_grad_()
    out, identity = a * 2, b * 3
    saved = out * out  # saves `out` before the write: its backward must then refuse
    out += identity
    out -= a
    loss = second_use(out, saved)
    loss.backward()
    return T.cat([a.grad.flatten(), b.grad.flatten(), T.tensor([float(out._version)])])


@pytest.mark.parametrize("use", ["after", "saved_before"])
def test_tracked_add_and_sub_in_place_as_pytorchs(torch, use):
    second = {"after": lambda out, saved: (out * out).sum(),
              "saved_before": lambda out, saved: saved.sum() + out.sum()}[use]
    _same(torch, lambda T: _residual(T, second))
