"""Max pooling on the CPU where the windows tile the input: kernel == stride, no padding, no
dilation, every window whole (LeNet's and most CNNs' 2x2 pool). A window is then a box of
the input reshaped as (P, o1, k1, o2, k2, ...): each kernel offset is a strided view of
output shape, the maxima are k1*k2*... - 1 `maximum` passes, and no indices are kept. The
backward finds each window's winner again from the saved input and the maxima: offsets in
row-major order, the first equal to the maximum takes the gradient (PyTorch's first maximum),
and writes each offset's share straight into the input gradient's view, so no element is
scattered. Measured fwd+bwd at 1 thread (`/work/notes/s18/pool_proto.py`): (32, 16, 28, 28)
2.6 -> 1.5 ms, (32, 32, 14, 14) 1.8 -> 1.0 ms, (8, 64, 112, 112) 57 -> 41 ms.

A window holding a NaN has a NaN maximum that no element equals, and its winner is PyTorch's
last NaN: such a backward, a double backward and `return_indices` take the general path's
flat indices (computed from the saved input when first asked for)."""
import itertools

import numpy as np

from ..._parallel import map_parts, thread_cuts
from ..._state import grad as _grad_state
from ..._tensor import make_tensor
from .._graph import record
from ._common import _MAXPOOL, _set_pair


def applies(xp, a, kernel, stride, padding, dilation, size, osz):
    """Whether max pooling of `a` with this window takes the tiled path."""
    return (xp is np and a.dtype.kind == "f" and tuple(kernel) == tuple(stride) and
            not any(padding) and all(d == 1 for d in dilation) and
            all(o == s // k for o, s, k in zip(osz, size, kernel)) and a.size > 0)


def _boxes(planes, kernel, osz):
    """planes (P, *size) cropped to the windows and viewed as (P, o1, k1, o2, k2, ...)."""
    crop = planes[(slice(None),) + tuple(slice(0, o * k) for o, k in zip(osz, kernel))]
    return crop.reshape((planes.shape[0],) + tuple(itertools.chain(*zip(osz, kernel))))


def _offsets(kernel):
    """Each kernel offset's index into a box view, in PyTorch's row-major scan order."""
    return [(slice(None),) + tuple(itertools.chain(*((slice(None), i) for i in at)))
            for at in itertools.product(*[range(k) for k in kernel])]


# Parts of the planes go to the intra-op threads from this input size, smaller than the
# general path's (`_common.THREADED_MIN_BYTES`): this path's calls are fewer and longer.
# Measured fwd+bwd at 2 threads against one (`/work/notes/s18/pool_thr.py`): (32, 16, 28,
# 28) (1.6 MB) 0.70 of the time, (32, 32, 14, 14) (0.8 MB) 0.85, 512 KB 1.07-1.2, 256 KB 1.46.
THREADED_MIN_BYTES = 768 << 10


def _split_planes(fn, *arrays):
    """fn over parts of the planes (axis 0) of `arrays` (the first the input) on the
    intra-op threads, or whole."""
    cuts = thread_cuts(arrays[0].shape[0], arrays[0].nbytes, THREADED_MIN_BYTES)
    if cuts is None:
        fn(*arrays)
    else:
        map_parts(lambda s: fn(*(a[s] for a in arrays)), cuts)


def maxima(planes, kernel, osz):
    """The windows' maxima (P, *osz) of planes (P, *size)."""
    boxes = _boxes(planes, kernel, osz)
    offsets = _offsets(kernel)
    out = np.empty((planes.shape[0],) + tuple(osz), planes.dtype)

    def part(b, o):
        np.copyto(o, b[offsets[0]])
        for at in offsets[1:]:
            np.maximum(o, b[at], out=o)
    _split_planes(part, boxes, out)
    return out


def maxima_grad(planes, best, grad, kernel):
    """The input gradient (P, *size) of `maxima`: grad (P, *osz) at each window's first
    maximum, 0 elsewhere. `best` holds no NaN."""
    osz = best.shape[1:]
    gx = np.empty(planes.shape, grad.dtype)
    if tuple(o * k for o, k in zip(osz, kernel)) != planes.shape[1:]:
        gx[...] = 0  # the rows and columns past the last window
    offsets = _offsets(kernel)

    def part(x, m, g, out):
        x, out = _boxes(x, kernel, osz), _boxes(out, kernel, osz)
        taken, hit = np.empty(m.shape, bool), np.empty(m.shape, bool)
        np.equal(x[offsets[0]], m, out=taken)
        np.multiply(g, taken, out=out[offsets[0]])
        for at in offsets[1:-1]:
            np.equal(x[at], m, out=hit)
            np.greater(hit, taken, out=hit)  # equal, and no earlier offset won
            np.multiply(g, hit, out=out[at])
            taken |= hit
        if len(offsets) > 1:  # the last offset won wherever none before did
            np.logical_not(taken, out=hit)
            np.multiply(g, hit, out=out[offsets[-1]])
    _split_planes(part, planes, best, grad, gx)
    return gx


def _tiled_node_class(gather):
    """`gather` (MaxPool{n}DWithIndicesBackward0) as the tiled path records it: it saves the
    input and the maxima in place of indices."""

    def backward(self, grad):
        planes = self.saved_tensors[0]._array  # (first: a freed graph raises PyTorch's error)
        best = self._best
        if _grad_state.enabled or np.isnan(best).any():
            return gather.backward(self, grad)
        nd = len(self.kernel)
        planes = planes.reshape((-1,) + planes.shape[planes.ndim - nd:])
        g = grad._array.reshape(best.shape)
        gx = maxima_grad(planes, best, g, self.kernel)
        return make_tensor(gx.reshape(self._meta[0][0]), grad._device)

    def indices(self):
        """The general path's flat indices, for what needs them."""
        if self._indices is None:
            from .max_pool import flat_indices  # max_pool imports this module
            x = self.saved_tensors[0]
            nd = len(self.kernel)
            flat = flat_indices(np, x._array, self.kernel, self.kernel, (0,) * nd, (1,) * nd,
                                self._best.shape[1:])
            self._indices = flat.reshape(x.shape[:x.ndim - nd] + self._best.shape[1:])
        return self._indices

    def release(self):  # the maxima and indices go with the saved input
        gather._release(self)
        self._best = self._indices = None

    return type(gather.__name__, (gather,), {
        "backward": backward, "indices": property(indices, _store_indices), "_indices": None,
        "_release": release, "__doc__": gather.__doc__})


def _store_indices(self, value):
    self._indices = value


_TILED = {nd: _tiled_node_class(_MAXPOOL[nd][1]) for nd in (2, 3)}


def max_pool(input, nd, kernel, osz):
    """max_pool{nd}d of `input` on the tiled path (no indices returned)."""
    a = input._array
    size = a.shape[a.ndim - nd:]
    planes = a.reshape((-1,) + size)
    best = maxima(planes, kernel, osz)
    lead = a.shape[:a.ndim - nd]
    out = make_tensor(best.reshape(lead + tuple(osz)), input._device)
    node = record(_TILED[nd], (input,), out)
    if node is not None:
        node.save_for_backward(input)
        # a copy: the result may be changed in place (a ReLU after the pool), which PyTorch
        # allows since its backward reads the input and the indices, not the result
        node._best, node.kernel, node.window = best.copy(), tuple(kernel), None
        _set_pair(node, None, size, _MAXPOOL[nd], False)
    return out
