"""`torch.sym_*` and `torch.cond` on concrete values, against PyTorch: the values, their
Python types, and the errors."""
import pytest

import ember

CASES = [
    ("sym_int", (2.7,)), ("sym_int", (-2.7,)), ("sym_int", (True,)), ("sym_int", ("a",)),
    ("sym_float", (3,)), ("sym_float", ("1.5",)), ("sym_max", (2, 3.5)), ("sym_max", (2, 3)),
    ("sym_max", (2.0, 1)), ("sym_max", (1, "a")), ("sym_min", (2, 3.5)), ("sym_min", (4, 3)),
    ("sym_not", (True,)), ("sym_not", (0,)), ("sym_ite", (True, 1, 2)),
    ("sym_ite", (False, 1, 2)), ("sym_ite", (1, 1, 2)), ("sym_sqrt", (4,)),
    ("sym_sqrt", (-1,)), ("sym_sum", ([1, 2, 3],)), ("sym_sum", ([1.5, 2],)), ("sym_sum", ([],)),
    ("sym_sum", (1, 2)), ("sym_sum", ((4, 5),)),
]


def _call(lib, name, args):
    try:
        result = getattr(lib, name)(*args)
    except Exception as error:
        return type(error).__name__, str(error).replace("torch.", "").replace("ember.", "")
    return result, type(result)


@pytest.mark.parametrize("name,args", CASES)
def test_sym_on_numbers(torch, name, args):
    assert _call(ember, name, args) == _call(torch, name, args)


@pytest.mark.parametrize("name", ["sym_int", "sym_float", "sym_not", "sym_sqrt"])
def test_sym_on_one_element_tensors(torch, name):
    for value in (2.5, 0.0):
        assert _call(ember, name, (ember.tensor(value),)) == \
            _call(torch, name, (torch.tensor(value),))


def test_sym_sum_of_tensors(torch):
    mine = ember.sym_sum([ember.tensor(2.5), ember.tensor(3)])
    theirs = torch.sym_sum([torch.tensor(2.5), torch.tensor(3)])
    assert mine.item() == theirs.item() and str(mine.dtype) == str(theirs.dtype)


@pytest.mark.parametrize("pred", [True, False, 0, 2.5, "tensor-true", "tensor-false"])
def test_cond_calls_one_branch(torch, pred):
    def run(lib):
        p = lib.tensor(pred == "tensor-true") if isinstance(pred, str) else pred
        return lib.cond(p, lambda x, y: x + y, lambda x, y: x - y,
                        (lib.ones(2), lib.full((2,), 3.0))).tolist()
    assert run(ember) == run(torch)


def test_cond_gradient_flows_through_the_taken_branch():
    x = ember.ones(3, requires_grad=True)
    ember.cond(ember.tensor(False), lambda t: t * 2, lambda t: t * 5, (x,)).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0, 5.0]


@pytest.mark.parametrize("args", [
    ("ones2", lambda: 1, lambda: 2), ("a", lambda: 1, lambda: 2), (True, 1, lambda: 2)])
def test_cond_errors(torch, args):
    def run(lib):
        pred = lib.ones(2) if args[0] == "ones2" else args[0]
        return lib.cond(pred, *args[1:])
    with pytest.raises(Exception) as theirs:
        run(torch)
    with pytest.raises(theirs.type) as ours:
        run(ember)
    assert str(ours.value) == str(theirs.value)


_RANGES = [((5,), {}), ((5,), dict(min=6)), ((5,), dict(max=4)), ((-1,), {}), ((0,), {}),
           ((5.0,), {}), ((3,), dict(max=2)), ((3,), dict(min=1, max=3))]


@pytest.mark.parametrize("name", ["sym_constrain_range", "sym_constrain_range_for_size"])
@pytest.mark.parametrize("args, kwargs", _RANGES)
def test_sym_constrain_range_checks_like_pytorch(torch, name, args, kwargs):
    def outcome(lib, tensor_input):
        value = lib.tensor(args[0]) if tensor_input and isinstance(args[0], int) else args[0]
        try:
            return getattr(lib, name)(value, **kwargs)
        except Exception as e:
            return type(e).__name__, str(e)
    for tensor_input in (False, True):
        assert outcome(ember, tensor_input) == outcome(torch, tensor_input)


def test_sym_fresh_size_is_the_plain_value(torch):
    for value in (3, 3.5, 7):
        assert ember.sym_fresh_size(value) == torch.sym_fresh_size(value) == value
    assert ember.sym_fresh_size(ember.tensor(7)) == 7
    assert type(ember.sym_fresh_size(ember.tensor(7))) is int


def test_symbolic_types_exist_and_plain_numbers_are_not_them(torch):
    for name in ("SymInt", "SymFloat", "SymBool"):
        assert isinstance(getattr(ember, name), type)
        assert getattr(ember, name).__module__ == getattr(torch, name).__module__ == "torch"
    assert not isinstance(3, ember.SymInt) and not isinstance(3.0, ember.SymFloat)
    size = ember.SymInt(4)
    assert int(size) == 4 and size == 4 and [0, 1, 2, 3, 4][size] == 4
    assert float(ember.SymFloat(0.5)) == 0.5 and not ember.SymBool(False)
