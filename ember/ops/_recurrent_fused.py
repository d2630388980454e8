"""One layer and direction of an LSTM, GRU or Elman RNN over a padded sequence as a single
autograd node (as PyTorch's fused CPU/cuDNN kernels are one node per layer).

The forward projects the inputs of every time step with one GEMM, then runs the time loop on
backend arrays, writing the gates in place (ufuncs with `out=`); it keeps the activated gates
and the states of every step. The backward runs the reverse time loop on arrays for all gates
at once and then forms each weight's gradient with one GEMM over all steps (the stacked gate
gradients against the stacked inputs or previous states); bias gradients are sums.

The node's backward is not itself differentiable (as cuDNN's): a backward with
`create_graph=True` through it raises. `recurrent.run_direction` takes this path only where it
gives the composite path's results: padded input, no autocast, no forward-mode AD, no saved
tensor hooks or selective checkpointing (the node keeps arrays, not tensors), float32/float64.
Packed sequences keep the composite path.
"""
import numpy as np

from .._state import (autocast as _autocast, forward_ad as _fw,
                      saved_tensor_hooks as _saved_hooks,
                      saved_tensor_hooks_anywhere as _saved_hooks_anywhere,
                      selective_checkpoint_anywhere as _sac_anywhere,
                      grad as _grad_state)
from .._tensor import make_tensor, xp_of
from ._graph import Node, record

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def usable(x, h, c, weights):
    """Whether the fused layer gives what the composite path gives for these operands."""
    if _autocast.active or _fw.level is not None or _sac_anywhere.count:
        return False
    if _saved_hooks_anywhere.count and _saved_hooks.stack:
        return False
    if x.dim() != 3 or x.shape[0] == 0:
        return False
    dtype = x._array.dtype
    if dtype not in _FLOATS:
        return False
    for t in (h, c, *weights):
        if t is not None and (t._array.dtype != dtype or t._device != x._device):
            return False
    return True


def _sigmoid_(a, xp):
    """a <- 1 / (1 + exp(-a)), in place (exp overflows to inf for very negative a: 1/inf = 0)."""
    xp.negative(a, out=a)
    xp.exp(a, out=a)
    a += 1
    xp.reciprocal(a, out=a)


def _order(T, reverse):
    """Time steps in processing order, and where the state before / after step t lives in a
    (T + 1)-long state buffer (forward: before t at t, after at t + 1; reverse: the mirror)."""
    if reverse:
        return range(T - 1, -1, -1), 1, 0
    return range(T), 0, 1


def _lstm_perm(H):
    """PyTorch orders an LSTM's gates i, f, g, o; the fused loop uses i, f, o, g so that the
    three sigmoid gates are one contiguous block."""
    return np.concatenate([np.arange(0, 2 * H), np.arange(3 * H, 4 * H), np.arange(2 * H, 3 * H)])


def _unperm(a, perm, axis=0):
    """Rows of a gradient in the fused gate order back in PyTorch's order."""
    out = a.copy()
    if axis == 0:
        out[perm] = a
    else:
        out[..., perm] = a
    return out


# ---- forward ---------------------------------------------------------------------------------
def direction(mode, x, h0, c0, weights, reverse):
    """x (T, B, I), h0 (B, H_out), c0 (B, H) or None. Returns (output (T, B, H_out), h_n, c_n)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    xp = xp_of(x)
    X, H0 = x._array, h0._array
    T, B, _ = X.shape
    Wih, Whh = w_ih._array, w_hh._array
    bih = None if b_ih is None else b_ih._array
    bhh = None if b_hh is None else b_hh._array
    H = Whh.shape[1] if w_hr is None else w_hr.shape[1]
    Hout = Whh.shape[1]
    lstm, gru = mode == "LSTM", mode == "GRU"
    perm = None
    if lstm:
        perm = xp.asarray(_lstm_perm(H))
        Wih, Whh = Wih[perm], Whh[perm]
        bih = None if bih is None else bih[perm]
        bhh = None if bhh is None else bhh[perm]
    if gru:
        bias = bih
    else:
        bias = bih if bhh is None else (bhh if bih is None else bih + bhh)
    G = xp.matmul(X.reshape(T * B, -1), Wih.T)            # input projections of every step
    if bias is not None:
        G += bias
    G = G.reshape(T, B, -1)
    WhhT = Whh.T
    steps, before, after = _order(T, reverse)
    hs = xp.empty((T + 1, B, Hout), dtype=X.dtype)
    hs[0 if not reverse else T] = H0
    saved = {"G": G, "hs": hs}
    tmp = xp.empty((B, G.shape[2]), dtype=X.dtype)
    with np.errstate(over="ignore"):
        if lstm:
            cs = xp.empty((T + 1, B, H), dtype=X.dtype)
            cs[0 if not reverse else T] = c0._array
            tc = xp.empty((T, B, H), dtype=X.dtype)
            hc = xp.empty((T, B, H), dtype=X.dtype) if w_hr is not None else None
            WhrT = None if w_hr is None else w_hr._array.T
            prod = xp.empty((B, H), dtype=X.dtype)
            for t in steps:
                g = G[t]
                xp.matmul(hs[t + before], WhhT, out=tmp)
                g += tmp
                _sigmoid_(g[:, :3 * H], xp)
                xp.tanh(g[:, 3 * H:], out=g[:, 3 * H:])
                c_new = cs[t + after]
                xp.multiply(g[:, H:2 * H], cs[t + before], out=c_new)
                xp.multiply(g[:, :H], g[:, 3 * H:], out=prod)
                c_new += prod
                xp.tanh(c_new, out=tc[t])
                if hc is None:
                    xp.multiply(g[:, 2 * H:3 * H], tc[t], out=hs[t + after])
                else:
                    xp.multiply(g[:, 2 * H:3 * H], tc[t], out=hc[t])
                    xp.matmul(hc[t], WhrT, out=hs[t + after])
            saved.update(cs=cs, tc=tc, hc=hc, perm=perm)
            c_n = cs[T if not reverse else 0].copy()
        elif gru:
            hn = xp.empty((T, B, H), dtype=X.dtype)   # h W_hn^T + b_hn, inside the reset product
            for t in steps:
                g, h = G[t], hs[t + before]
                xp.matmul(h, WhhT, out=tmp)
                if bhh is not None:
                    tmp += bhh
                g[:, :2 * H] += tmp[:, :2 * H]
                _sigmoid_(g[:, :2 * H], xp)
                hn[t] = tmp[:, 2 * H:]
                n = g[:, 2 * H:]
                xp.multiply(g[:, :H], hn[t], out=tmp[:, 2 * H:])
                n += tmp[:, 2 * H:]
                xp.tanh(n, out=n)
                h_new = hs[t + after]
                xp.subtract(h, n, out=h_new)                 # n + z * (h - n)
                h_new *= g[:, H:2 * H]
                h_new += n
            saved["hn"] = hn
            c_n = None
        else:
            relu = mode == "RNN_RELU"
            for t in steps:
                g = G[t]
                xp.matmul(hs[t + before], WhhT, out=tmp)
                g += tmp
                if relu:
                    xp.maximum(g, 0, out=hs[t + after])
                else:
                    xp.tanh(g, out=hs[t + after])
            c_n = None
    out_arr = hs[1:] if not reverse else hs[:T]
    h_n = hs[T if not reverse else 0].copy()
    out = make_tensor(out_arr, x._device)
    h_n_t = make_tensor(h_n, x._device)
    c_n_t = None if c_n is None else make_tensor(c_n, x._device)
    inputs = [x, h0] + ([c0] if lstm else []) + [w for w in weights if w is not None]
    node = record(_NODES[mode], inputs, out, h_n_t, c_n_t)
    if node is not None:
        node.mode, node.reverse, node.lstm_has = mode, reverse, (b_ih is not None,
                                                                b_hh is not None,
                                                                w_hr is not None)
        node.arrays = saved
        node._out_meta = tuple((o._array.shape, o.dtype, o._device)
                               for o in (out, h_n_t, c_n_t) if o is not None)
        node.save_for_backward(x, w_ih, w_hh, w_hr, out)
    return out, h_n_t, c_n_t


# ---- backward --------------------------------------------------------------------------------
class _FusedLayerBackward(Node):
    arrays = None

    def _release(self):
        super()._release()
        self.arrays = None  # the gates and states of every step go with the saved tensors

    def backward(self, d_out, d_hn, d_cn=None):
        if _grad_state.enabled:
            raise RuntimeError(
                f"the fused {self.mode} layer's backward is not differentiable: double backward "
                f"(create_graph=True) through torch.{self.mode.lower()} is not supported, as "
                "with PyTorch's cuDNN RNN")
        x, w_ih, w_hh, w_hr, _ = self.saved_tensors  # checks their versions
        A = self.arrays
        xp = xp_of(x)
        X = x._array
        G, hs = A["G"], A["hs"]
        T, B, _ = X.shape
        dtype = X.dtype
        Hout = hs.shape[2]
        steps, before, after = _order(T, self.reverse)
        steps = steps[::-1]
        dO = None if d_out is None else d_out._array
        dh = xp.zeros((B, Hout), dtype) if d_hn is None else d_hn._array.astype(dtype, copy=True)
        Whh = w_hh._array
        mode = self.mode
        has_bih, has_bhh, has_proj = self.lstm_has
        dG = xp.empty_like(G)
        grads_h = None
        if mode == "LSTM":
            perm = A["perm"]
            Whh = Whh[perm]
            cs, tc, hc = A["cs"], A["tc"], A["hc"]
            H = cs.shape[2]
            dc = xp.zeros((B, H), dtype) if d_cn is None else d_cn._array.astype(dtype, copy=True)
            Whr = None if w_hr is None else w_hr._array
            dH = xp.empty((T, B, Hout), dtype) if has_proj else None
            for t in steps:
                if dO is not None:
                    dh += dO[t]
                if has_proj:
                    dH[t] = dh
                    dhc = dh @ Whr
                else:
                    dhc = dh
                g, d = G[t], dG[t]
                i, f, o, gg = g[:, :H], g[:, H:2 * H], g[:, 2 * H:3 * H], g[:, 3 * H:]
                tct = tc[t]
                dc += dhc * o * (1 - tct * tct)
                xp.multiply(dhc * tct, o * (1 - o), out=d[:, 2 * H:3 * H])
                xp.multiply(dc * gg, i * (1 - i), out=d[:, :H])
                xp.multiply(dc * cs[t + before], f * (1 - f), out=d[:, H:2 * H])
                xp.multiply(dc * i, 1 - gg * gg, out=d[:, 3 * H:])
                dc *= f
                dh = d @ Whh
            d_c0 = dc
            if has_proj:
                grads_h = (dH.reshape(T * B, Hout).T @ hc.reshape(T * B, H))
        elif mode == "GRU":
            hn = A["hn"]
            H = Hout
            dhg = xp.empty_like(G)
            for t in steps:
                if dO is not None:
                    dh += dO[t]
                g, d, dhgt = G[t], dG[t], dhg[t]
                r, z, n = g[:, :H], g[:, H:2 * H], g[:, 2 * H:]
                h = hs[t + before]
                dn = xp.multiply(dh * (1 - z), 1 - n * n, out=d[:, 2 * H:])
                xp.multiply(dh * (h - n), z * (1 - z), out=d[:, H:2 * H])
                xp.multiply(dn * hn[t], r * (1 - r), out=d[:, :H])
                dhgt[:, :2 * H] = d[:, :2 * H]
                xp.multiply(dn, r, out=dhgt[:, 2 * H:])
                dh = dh * z + dhgt @ Whh
            d_c0 = None
        else:
            out = hs[1:] if not self.reverse else hs[:T]
            relu = mode == "RNN_RELU"
            for t in steps:
                if dO is not None:
                    dh += dO[t]
                d = dG[t]
                y = out[t]
                if relu:
                    xp.multiply(dh, y > 0, out=d)
                else:
                    xp.multiply(dh, 1 - y * y, out=d)
                dh = d @ Whh
            d_c0 = None
            dhg = None
        if mode != "GRU":
            dhg = dG
        Hprev = (hs[:T] if not self.reverse else hs[1:]).reshape(T * B, Hout)
        dGf = dG.reshape(T * B, -1)
        dhgf = dhg.reshape(T * B, -1)
        need = self.needs_input_grad
        d_x = (dGf @ (w_ih._array if mode != "LSTM" else w_ih._array[A["perm"]])).reshape(X.shape) \
            if need[0] else None
        d_wih = dGf.T @ X.reshape(T * B, -1)
        d_whh = dhgf.T @ Hprev
        d_b_ih = dGf.sum(0) if has_bih else None
        d_b_hh = dhgf.sum(0) if has_bhh else None
        if mode == "LSTM":
            perm = A["perm"]
            d_wih, d_whh = _unperm(d_wih, perm), _unperm(d_whh, perm)
            d_b_ih = None if d_b_ih is None else _unperm(d_b_ih, perm)
            d_b_hh = None if d_b_hh is None else _unperm(d_b_hh, perm)
        dev = x._device
        wrap = (lambda a: None if a is None else make_tensor(a, dev))
        grads = [wrap(d_x), wrap(dh)] + ([wrap(d_c0)] if mode == "LSTM" else [])
        grads += [wrap(d_wih), wrap(d_whh)]
        if has_bih:
            grads.append(wrap(d_b_ih))
        if has_bhh:
            grads.append(wrap(d_b_hh))
        if has_proj:
            grads.append(wrap(grads_h))
        return tuple(grads)


class LstmLayerBackward0(_FusedLayerBackward):
    pass


class GruLayerBackward0(_FusedLayerBackward):
    pass


class RnnLayerBackward0(_FusedLayerBackward):
    pass


_NODES = {"LSTM": LstmLayerBackward0, "GRU": GruLayerBackward0, "RNN_TANH": RnnLayerBackward0,
          "RNN_RELU": RnnLayerBackward0}
