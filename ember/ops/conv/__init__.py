"""Convolutions: conv1d/2d/3d and their transposes, unfold/fold, with derivatives.

Everything rests on three array routines over any number of spatial dims (`_routines.py`):
`conv_forward` (im2col by one strided-window copy, then one batched BLAS matmul),
`conv_transpose_forward` (the adjoint in the input: a stride-1 one is a convolution with
the flipped kernel; a strided one is a matmul then col2im, accumulated per kernel offset)
and `conv_weight_grad` (im2col, then a matmul with the output gradient); on the CPU, 3x3
stride-1 ones take Winograd F(2x2, 3x3) where it pays (`_winograd.py`, `_layout.py`), and
`conv_backward` gives both gradients of such a convolution from one Winograd pass; stride-1
ones with few channels on large planes take kh products over shifted copies of the input
(`_shifted.py`).

Those three are bilinear, and each one's derivatives are the other two, so three graph ops
(`_conv`, `_conv_transpose`, `_conv_weight`, in `_graph_ops.py`) close under
differentiation: double backward is convolutions again. Nothing loops over pixels or batch
elements; col2im loops over kernel offsets only. Large temporaries (padded inputs, im2col
buffers) are thread-local scratch reused between calls (`_im2col.py`), which spares the page
faults of fresh large allocations.

The files, by job: `_im2col.py` (padding, windows, im2col/col2im, scratch), `_channels_last.py`
(the (N*L, K*C) column layout), `_winograd.py` and `_shifted.py` (the two CPU algorithms
above), `_layout.py` (which layout a call takes), `_routines.py` (the
three array routines), `_graph_ops.py` (graph nodes), `functional.py` (the public convolutions
and their argument checks), `fold.py` (unfold/fold).
"""
from ._graph_ops import _conv, _conv_transpose, _conv_weight
from ._im2col import pad_array
from .fold import fold, unfold
from .functional import (_int_tuple, conv1d, conv2d, conv3d, conv_transpose1d,
                         conv_transpose2d, conv_transpose3d, convolution)

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "convolution"]
METHODS = []
FUNCTIONAL = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "unfold", "fold"]
