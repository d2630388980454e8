"""Empty views keep the storage offset PyTorch gives them (where the view would start), though
NumPy leaves an empty slice's data pointer at its base; and splits of an empty dim give
PyTorch's pieces. Each case runs in ember and in PyTorch."""
import pytest

import ember
from tests._strict_cupy import strict_cupy

_B = lambda lib: lib.arange(12.0).reshape(3, 4)  # noqa: E731
_A = lambda lib: lib.arange(5.0)  # noqa: E731

OFFSETS = {
    "narrow": lambda lib: _A(lib).narrow(0, 2, 0),
    "slice": lambda lib: _A(lib)[2:2],
    "slice_stop_before_start": lambda lib: _A(lib)[4:2],
    "slice_past_the_end": lambda lib: _A(lib)[7:],
    "slice_of_a_column": lambda lib: _B(lib)[:, 3:3],
    "slice_of_rows": lambda lib: _B(lib)[1:1],
    "slice_of_an_empty_slice": lambda lib: _B(lib)[:, 2:2][1:],
    "select_of_an_empty_row": lambda lib: lib.zeros(3, 0).select(0, 2),
    "select_of_an_empty_slice": lambda lib: _B(lib)[:, 2:2].select(0, 1),
    "unbind": lambda lib: _B(lib)[:, 2:2].unbind(0)[2],
    "split_with_sizes": lambda lib: _A(lib)[:4].split([2, 0, 2])[1],
    "tensor_split": lambda lib: _A(lib)[:4].tensor_split([2, 2, 3])[1],
    "chunk": lambda lib: _B(lib)[:, 1:1].chunk(3)[2],
    "unfold": lambda lib: _B(lib)[1:1].unfold(1, 2, 1),
    "transpose": lambda lib: _B(lib)[2:2].T,
    "view": lambda lib: _A(lib)[3:3].view(0, 2),
    "reshape": lambda lib: _A(lib)[3:3].reshape(0, 2),
    "unsqueeze": lambda lib: _B(lib)[1:1].unsqueeze(0),
    "expand": lambda lib: _B(lib)[:, 1:1].expand(2, 3, 0),
    "contiguous": lambda lib: _B(lib)[1:1].contiguous(),
    "empty_diagonal": lambda lib: _B(lib).diagonal(5),
    "diagonal_of_an_empty_slice": lambda lib: _B(lib)[:, 2:2].diagonal(1),
    "as_strided": lambda lib: _B(lib).as_strided((0,), (1,), 7),
    "as_strided_of_an_empty_slice": lambda lib: _B(lib)[2:2].as_strided((0, 2), (1, 1)),
    "detach": lambda lib: _B(lib)[1:1].detach(),
    "data": lambda lib: _B(lib)[1:1].data,
    "view_as_another_dtype": lambda lib: _B(lib)[2:2].view(lib.int64),
    "as_strided_in_place": lambda lib: _B(lib)[1:1].as_strided_((0,), (1,), 5),
}


@pytest.mark.parametrize("name", sorted(OFFSETS))
def test_storage_offset_of_an_empty_view(torch, name):
    expected = OFFSETS[name](torch)
    got = OFFSETS[name](ember)
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.storage_offset() == expected.storage_offset()


@pytest.mark.parametrize("name", ["narrow", "slice_of_an_empty_slice", "select_of_an_empty_row",
                                  "chunk"])
def test_storage_offset_of_an_empty_view_on_cuda(torch, name):
    expected = OFFSETS[name](torch).storage_offset()
    with strict_cupy():
        with ember.device("cuda"):
            assert OFFSETS[name](ember).storage_offset() == expected


SPLITS = {
    "split": lambda lib: lib.zeros(0, 3).split(2),
    "split_by_zero": lambda lib: lib.zeros(0, 3).split(0),
    "chunk": lambda lib: lib.zeros(0, 3).chunk(3),
    "chunk_of_columns": lambda lib: lib.zeros(3, 0).chunk(2, 1),
    "unsafe_split": lambda lib: lib.zeros(0, 3).unsafe_split(2),
    "unsafe_chunk": lambda lib: lib.zeros(0, 3).unsafe_chunk(3),
}


@pytest.mark.parametrize("name", sorted(SPLITS))
def test_splits_of_an_empty_dim(torch, name):
    expected = SPLITS[name](torch)
    got = SPLITS[name](ember)
    assert [tuple(t.shape) for t in got] == [tuple(t.shape) for t in expected]


def test_negative_split_size(torch):
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="split expects split_size be non-negative"):
            lib.zeros(4, 3).split(-1)


def test_detach_and_data_of_a_view_share_its_storage(torch):
    """Not views themselves, but on the same storage: its offset and its whole extent."""
    def facts(lib):
        b = lib.arange(12.0).reshape(3, 4)
        x, y, z = b[1:].detach(), b[1:].data, lib.zeros(2)
        z.data = b[2:]
        return (x.storage_offset(), x.untyped_storage().nbytes(), y.storage_offset(),
                x.as_strided((2,), (1,)).tolist(), z.storage_offset(), z.tolist())
    assert facts(ember) == facts(torch)
