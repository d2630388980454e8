"""The grad_fn a printed matmul result shows (`tensor(..., grad_fn=<UnsafeViewBackward0>)`):
PyTorch ends every batched product with an unsafe view to the output shape, found by running
the attention code of LLMs-from-scratch ch03 (queries @ keys.transpose(1, 2))."""
import pytest

import ember

SHAPES = [((2, 6, 3), (2, 3, 2)), ((2, 3, 2, 3), (2, 3, 3, 4)), ((2, 1, 2, 3), (4, 3, 2)),
          ((3,), (2, 3, 2)), ((2, 6, 3), (3,)), ((2, 6, 3), (3, 2)), ((6, 3), (3, 2))]


@pytest.mark.parametrize("a,b", SHAPES)
def test_matmul_top_grad_fn_matches_pytorch(torch, a, b):
    names = []
    for lib in (ember, torch):
        x = lib.randn(*a, requires_grad=True)
        y = lib.randn(*b, requires_grad=True)
        out = x @ y
        names.append((type(out.grad_fn).__name__, tuple(out.shape)))
        out.sum().backward()
        names.append((tuple(x.grad.shape), tuple(y.grad.shape)))
    assert names[:2] == names[2:]


def test_batched_matmul_with_vector_and_no_grad_keeps_shape(torch):
    # a non-contiguous batch without grad takes the batched path with a 1-D operand
    x = ember.arange(24.).reshape(2, 3, 4).transpose(0, 1)
    v = ember.arange(4.)
    ref = torch.arange(24.).reshape(2, 3, 4).transpose(0, 1) @ torch.arange(4.)
    assert (x @ v).tolist() == ref.tolist()
    assert (v @ x.mT).tolist() == (torch.arange(4.) @ torch.arange(24.).reshape(2, 3, 4)
                                   .transpose(0, 1).mT).tolist()
