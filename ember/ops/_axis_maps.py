"""Axis maps, the one mechanism behind non-constant padding and every separable
interpolation (nearest, linear, bicubic): output position j along a dim reads a few input
positions `idx[k, j]` with weights `w[k, j]`. One graph op applies a list of axis maps (a
gather of a few taps per dim); its adjoint is a matmul with the map's small dense matrix per
dim (a scatter-add without scattering). Each op's backward is the other one, so double
backward comes for free. `spatial.py` (pad) and `_spatial_resample.py` (interpolate) use it.
"""
import numpy as np

from .._tensor import make_tensor, xp_of
from ._graph import Node, record


class AxisMap:
    """Output position j along `axis` (counted from the end) is sum_k w[k, j] * in[idx[k, j]]."""

    def __init__(self, axis, idx, w, n_in):
        self.axis, self.idx, self.w, self.n_in = axis, idx, w, n_in
        self._dense = {}

    def dense(self, xp, dtype):
        """The (out, in) matrix of the map."""
        key = (xp.__name__, np.dtype(dtype).str)
        m = self._dense.get(key)
        if m is None:
            k, n_out = self.idx.shape
            m = np.zeros((n_out, self.n_in), np.float64)
            rows = np.arange(n_out)
            for t in range(k):  # one entry per row per tap: no repeated targets in one pass
                m[rows, self.idx[t]] += 1.0 if self.w is None else self.w[t]
            m = m.astype(dtype)
            m = m if xp is np else xp.asarray(m)
            self._dense[key] = m
        return m


def _apply_maps(xp, a, maps):
    for m in maps:
        ax = a.ndim + m.axis
        idx = m.idx if xp is np else xp.asarray(m.idx)
        if m.w is None and idx.shape[0] == 1:
            a = xp.take(a, idx[0], axis=ax)
            continue
        shape = (-1,) + (1,) * (-m.axis - 1)
        w = m.w.astype(a.dtype) if xp is np else xp.asarray(m.w.astype(a.dtype))
        out = None
        for t in range(idx.shape[0]):
            term = xp.take(a, idx[t], axis=ax)
            term *= w[t].reshape(shape)
            out = term if out is None else out + term
        a = out
    return a


def _apply_maps_t(xp, g, maps):
    for m in maps:
        ax = g.ndim + m.axis
        mat = m.dense(xp, g.dtype)
        g = xp.moveaxis(xp.matmul(xp.moveaxis(g, ax, -1), mat), -1, ax)
    return xp.ascontiguousarray(g)


class _MapNode(Node):
    def backward(self, grad):
        return _map_t(grad, self.maps, self.pair)


class _MapTNode(Node):
    def backward(self, grad):
        return _map(grad, self.maps, self.pair)


def _map(x, maps, pair):
    out = make_tensor(_apply_maps(xp_of(x), x._array, maps), x._device)
    node = record(pair[0], (x,), out)
    if node is not None:
        node.maps, node.pair = maps, pair
    return out


def _map_t(g, maps, pair):
    out = make_tensor(_apply_maps_t(xp_of(g), g._array, maps), g._device)
    node = record(pair[1], (g,), out)
    if node is not None:
        node.maps, node.pair = maps, pair
    return out


_PAIRS = {}


def _pair(name):
    p = _PAIRS.get(name)
    if p is None:
        back = name.replace("Backward0", "BackwardBackward0") if "Backward0" in name \
            else name + "Backward"
        p = _PAIRS[name] = (type(name, (_MapNode,), {}), type(back, (_MapTNode,), {}))
    return p
