"""torch.sparse's legacy typed constructors (`torch.sparse.FloatTensor(indices, values,
size)`, as older GNN code calls them) and check_sparse_tensor_invariants, against PyTorch."""
import warnings

import pytest

import ember

torch = pytest.importorskip("torch")


def _built(lib, make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = make(lib)
    return (str(r.layout), str(r.dtype), tuple(r.shape), r.is_coalesced(), r._nnz(),
            r.to_dense().tolist(), r.type())


def _iv(lib):
    return lib.tensor([[0, 1], [1, 0]]), lib.tensor([1.0, 2.0])


CONSTRUCTORS = {
    "indices, values, size": lambda m: m.sparse.FloatTensor(*_iv(m), (2, 2)),
    "indices, values": lambda m: m.sparse.FloatTensor(*_iv(m)),
    "indices, values, Size": lambda m: m.sparse.FloatTensor(*_iv(m), m.Size([2, 2])),
    "sizes": lambda m: m.sparse.FloatTensor(2, 3),
    "a Size": lambda m: m.sparse.DoubleTensor(m.Size([2, 2])),
    "nothing": lambda m: m.sparse.LongTensor(),
    "values keep their dtype": lambda m: m.sparse.FloatTensor(_iv(m)[0], _iv(m)[1].double(),
                                                              (2, 2)),
    "LongTensor of floats": lambda m: m.sparse.LongTensor(*_iv(m), (2, 2)),
    "device keyword": lambda m: m.sparse.DoubleTensor(*_iv(m), (2, 2), device="cpu"),
}


@pytest.mark.parametrize("name", list(CONSTRUCTORS))
def test_legacy_constructor_matches_pytorch(name):
    assert _built(ember, CONSTRUCTORS[name]) == _built(torch, CONSTRUCTORS[name])


def test_legacy_classes_answer_isinstance_and_repr_as_pytorchs():
    def answers(lib):
        indices, values = _iv(lib)
        coo = lib.sparse_coo_tensor(indices, values, (2, 2), check_invariants=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (PyTorch's CSR is in beta)
            kinds = (coo, coo.to_sparse_csr(), values, values.double())
        return ([isinstance(x, t) for x in kinds for t in (lib.FloatTensor,
                                                          lib.sparse.FloatTensor,
                                                          lib.sparse.DoubleTensor)],
                repr(lib.sparse.FloatTensor), sorted(n for n in dir(lib.sparse)
                                                     if n.endswith("Tensor") and "Semi" not in n
                                                     and n != "Tensor"))
    assert answers(ember) == answers(torch)


def test_legacy_constructor_warns_and_does_not_check():
    ember.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t = ember.sparse.FloatTensor(ember.tensor([[0, 5]]), ember.ones(2), (3,))
    finally:
        ember.set_warn_always(False)
    assert [str(w.message).split(" is ")[0] for w in caught] == \
        ["torch.sparse.SparseTensor(indices, values, shape, *, device=)"]
    assert t.shape == (3,)  # unchecked, as PyTorch's (index 5 is past the size)


def _invariant_answers(lib):
    check = lib.sparse.check_sparse_tensor_invariants
    indices, values = lib.tensor([[0, 5]]), lib.tensor([1.0, 2.0])

    def build(**kwargs):
        try:
            return tuple(lib.sparse_coo_tensor(indices, values, (3,), **kwargs).shape)
        except RuntimeError as e:
            return str(e)

    out = [check.is_enabled()]
    with check():
        out += [check.is_enabled(), build(), build(check_invariants=False)]
        with check(enable=False):
            out += [check.is_enabled(), build(check_invariants=True)]
        out.append(check.is_enabled())
    out.append(check.is_enabled())

    @check()
    def decorated():
        return check.is_enabled(), build()
    out += [decorated(), check.is_enabled()]
    check.enable()
    out += [check.is_enabled(), build()]
    check.disable()
    out += [check.is_enabled(), build()]
    guard = check()
    with guard:
        try:
            with guard:
                pass
        except RuntimeError as e:
            out.append(str(e))
    return out


def test_check_sparse_tensor_invariants_matches_pytorch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            assert _invariant_answers(ember) == _invariant_answers(torch)
        finally:
            ember.sparse.check_sparse_tensor_invariants.disable()
            torch.sparse.check_sparse_tensor_invariants.disable()


def test_checked_by_default_no_warning():
    ember._state._warned_once.clear()
    with ember.sparse.check_sparse_tensor_invariants():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ember.sparse_coo_tensor(ember.tensor([[0]]), ember.ones(1), (2,))
    assert caught == []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ember.sparse_coo_tensor(ember.tensor([[0]]), ember.ones(1), (2,))
    assert [str(w.message).split(". ")[0] for w in caught] == \
        ["Sparse invariant checks are implicitly disabled"]
