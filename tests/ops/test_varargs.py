"""Int-list arguments (`zeros(2, 3)`, `x.view((2, 3))`, `x.permute(1, 0)` ...) refuse a
non-int as PyTorch's argument parser does, type and message alike: it matches a signature on
the first element alone, so a float there ("found element of type float at pos 0", or view's
"invalid combination") reads differently from a float further on ("failed to unpack the
object at pos 2"). Python 3's `/` makes such sizes (`nn.Conv2d(c, c / 4, 1)`), so users meet
these messages."""
import pytest

import ember

CALLS = {
    "empty_tuple_first": lambda m: m.empty((2.0, 3)),
    "empty_tuple_later": lambda m: m.empty((3, 2.0)),
    "empty_varargs_first": lambda m: m.empty(2.0, 3),
    "empty_varargs_later": lambda m: m.empty(3, 2.0),
    "empty_one_float": lambda m: m.empty(2.0),
    "zeros_list_first": lambda m: m.zeros([2.0, 3]),
    "ones_bool_first": lambda m: m.ones((True, 2)),
    "ones_none_later": lambda m: m.ones((2, None)),
    "full_first": lambda m: m.full((2.0, 3), 1.0),
    "full_later": lambda m: m.full((3, 2.0), 1.0),
    "rand_tuple_first": lambda m: m.rand((2.0, 3)),
    "rand_varargs_first": lambda m: m.rand(2.0, 3),
    "randn_varargs_later": lambda m: m.randn(3, 2.0),
    "randint_first": lambda m: m.randint(3, (2.0, 3)),
    "new_zeros_first": lambda m: m.zeros(6).new_zeros((2.0, 3)),
    "new_ones_varargs_first": lambda m: m.zeros(6).new_ones(2.0, 3),
    "new_full_later": lambda m: m.zeros(6).new_full((3, 2.0), 1.0),
    "view_tuple_first": lambda m: m.zeros(6).view((2.0, 3)),
    "view_list_first": lambda m: m.zeros(6).view([2.0, 3]),
    "view_varargs_first": lambda m: m.zeros(6).view(2.0, 3),
    "view_one_float": lambda m: m.zeros(6).view(2.0),
    "view_none": lambda m: m.zeros(6).view(None),
    "view_later": lambda m: m.zeros(6).view(3, 2.0),
    "reshape_first": lambda m: m.zeros(6).reshape((2.0, 3)),
    "reshape_varargs_first": lambda m: m.zeros(6).reshape(2.0, 3),
    "expand_first": lambda m: m.zeros(1).expand((2.0, 3)),
    "permute_varargs_first": lambda m: m.zeros(2, 3).permute(1.0, 0),
    "permute_later": lambda m: m.zeros(2, 3).permute((1, 0.0)),
    "resize_varargs_first": lambda m: m.zeros(6).resize_(2.0, 3),
    "as_strided_stride_first": lambda m: m.zeros(6).as_strided((2, 3), (3.0, 1)),
}


def _error(call, lib):
    with pytest.raises(Exception) as info:
        call(lib)
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_int_list_error_is_pytorchs(torch, name):
    assert _error(CALLS[name], ember) == _error(CALLS[name], torch)


def test_later_bool_is_an_int_as_in_pytorch(torch):
    assert tuple(ember.ones((2, True)).shape) == tuple(torch.ones((2, True)).shape) == (2, 1)


def test_dtype_view_still_reinterprets():
    assert ember.zeros(2).view(ember.int16).shape == (4,)
