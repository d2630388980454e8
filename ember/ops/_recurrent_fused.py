"""One layer and direction of an LSTM, GRU or Elman RNN over a padded or packed sequence as a
single autograd node (as PyTorch's fused CPU/cuDNN kernels are one node per layer).

The forward projects the inputs of every time step with one GEMM, then runs the time loop on
backend arrays, writing the gates in place (ufuncs with `out=`); it keeps the activated gates
and the states of every step. The backward runs the reverse time loop on arrays for all gates
at once and then forms each weight's gradient with one GEMM over all steps (the stacked gate
gradients against the stacked inputs or previous states); bias gradients are sums.

The node's backward is not itself differentiable (as cuDNN's and oneDNN's): a backward with
`create_graph=True` through it raises; `backends.mkldnn.flags(enabled=False)` (cudnn on CUDA)
turns the fused path off. `recurrent.run_direction` takes this path only where it
gives the composite path's results: no autocast, no forward-mode AD, no saved tensor hooks or
selective checkpointing (the node keeps arrays, not tensors), float32/float64. A packed
sequence runs the same loop on the live rows of the running state (see `_steps`).

Where oneDNN is installed (`ember/_dnnl_layers.py`), a padded float32 LSTM direction without a
projection runs on oneDNN's LSTM instead, forward and backward: the kernel PyTorch's own CPU
LSTM runs, with its values to the bit (measured on every output and gradient).
"""
import numpy as np

from .. import _dnnl, _dnnl_layers
from .._gemm import threaded
from .._parallel import intra_threads, matmul as _products
from .._state import (autocast as _autocast, forward_ad as _fw,
                      saved_tensor_hooks as _saved_hooks,
                      saved_tensor_hooks_anywhere as _saved_hooks_anywhere,
                      selective_checkpoint_anywhere as _sac_anywhere,
                      grad as _grad_state)
from .._tensor import make_tensor, xp_of
from .._vml import ufunc as vml_ufunc
from ..backends import cudnn as _cudnn, mkldnn as _mkldnn
from ._graph import Node, record

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def usable(x, h, c, weights, batch_sizes=None):
    """Whether the fused layer gives what the composite path gives for these operands."""
    if _autocast.active or _fw.level is not None or _sac_anywhere.count:
        return False
    if _saved_hooks_anywhere.count and _saved_hooks.stack:
        return False
    # PyTorch's fused RNN kernels are cuDNN's (CUDA) and oneDNN's (CPU): their switches turn
    # this path off too, leaving the composite path, whose backward is differentiable
    if not (_cudnn if x._device.type == "cuda" else _mkldnn).enabled:
        return False
    if x.dim() != (3 if batch_sizes is None else 2) or x.shape[0] == 0:
        return False
    dtype = x._array.dtype
    if dtype not in _FLOATS:
        return False
    for t in (h, c, *weights):
        if t is not None and (t._array.dtype != dtype or t._device != x._device):
            return False
    return True


def _sigmoid_(a, xp):
    """a <- 1 / (1 + exp(-a)), in place (exp overflows to inf for very negative a: 1/inf = 0).
    The last pass divides 1 by a: the same bits as reciprocal, in ~0.7 of its time."""
    xp.negative(a, out=a)
    vml_ufunc(xp.exp, a, out=a)
    a += 1
    xp.divide(1, a, out=a)


def _steps(sizes, reverse):
    """(rows of step t in the flat (N, .) arrays, its batch size) in processing order. A packed
    sequence's batch shrinks over time: the first `bs` rows of the state are the live ones; the
    others keep the last state of sequences that ended (forward) or h_0 of those that have not
    started (reverse), which is PyTorch's final state and initial state for them."""
    offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    order = range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))
    return [(slice(offsets[t], offsets[t + 1]), sizes[t]) for t in order]


def _lstm_perm(H):
    """PyTorch orders an LSTM's gates i, f, g, o; the fused loop uses i, f, o, g so that the
    three sigmoid gates are one contiguous block."""
    return np.concatenate([np.arange(0, 2 * H), np.arange(3 * H, 4 * H), np.arange(2 * H, 3 * H)])


def _unperm(xp, a, perm):
    """Rows of a gradient in the fused gate order back in PyTorch's order (perm is a
    permutation: every row of the fresh array is written)."""
    out = xp.empty_like(a)
    out[perm] = a
    return out


def _rows_times(xp, rows, w_t, scratch):
    """rows @ w_t.T for a state block `rows` (B, K) of few rows and a weight `w_t` (M, K),
    as (w_t @ rows.T).T: OpenBLAS runs this product faster with the long side as its rows
    (an LSTM layer's forward with H=512, B=20: 0.95x the time; the backward's d @ W_hh
    turned round measured slower in the whole layer, so it stays as it was). Returns a
    (B, M) transposed view of `scratch`, a flat buffer of at least M * B."""
    m, b = w_t.shape[0], rows.shape[0]
    out = scratch[:m * b].reshape(m, b)
    _products(xp, w_t, rows.T, out=out)
    return out.T


# ---- forward ---------------------------------------------------------------------------------
def direction(mode, x, h0, c0, weights, reverse, batch_sizes=None):
    """x (T, B, I) padded, or (N, I) packed with `batch_sizes`; h0 (B, H_out), c0 (B, H) or
    None. Returns (output in x's layout, h_n, c_n)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    xp = xp_of(x)
    X = x._array
    if mode == "LSTM" and batch_sizes is None and w_hr is None and xp is np and \
            _dnnl.applies(X):
        done = _onednn_lstm(x, h0, c0, weights, reverse)
        if done is not None:
            return done
    if batch_sizes is None:
        T, B = X.shape[0], X.shape[1]
        sizes = [B] * T
    else:
        sizes = [int(b) for b in batch_sizes]
    X2 = X.reshape(-1, X.shape[-1])
    N = X2.shape[0]
    dtype = X.dtype
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
    G = _products(xp, X2, Wih.T)            # input projections of every step, one GEMM
    if bias is not None:
        G += bias
    h = h0._array.astype(dtype, copy=True)   # the running state, updated in place
    Hprev = xp.empty((N, Hout), dtype)       # the state each step starts from
    out = xp.empty((N, Hout), dtype)
    saved = {"G": G, "Hprev": Hprev, "perm": perm}
    B0 = h.shape[0]
    tmp = xp.empty(B0 * G.shape[1], dtype)   # the state products, see _rows_times
    steps = _steps(sizes, reverse)
    with np.errstate(over="ignore"):
        if lstm:
            c = c0._array.astype(dtype, copy=True)
            Cprev = xp.empty((N, H), dtype)
            tc = xp.empty((N, H), dtype)
            hc = xp.empty((N, H), dtype) if w_hr is not None else None
            WhrT = None if w_hr is None else w_hr._array.T
            prod = xp.empty((B0, H), dtype)
            for r, bs in steps:
                g, hp, cp, tct = G[r], h[:bs], c[:bs], tc[r]
                Hprev[r] = hp
                Cprev[r] = cp
                g += _rows_times(xp, hp, Whh, tmp)
                _sigmoid_(g[:, :3 * H], xp)
                vml_ufunc(xp.tanh, g[:, 3 * H:], out=g[:, 3 * H:])
                cp *= g[:, H:2 * H]
                xp.multiply(g[:, :H], g[:, 3 * H:], out=prod[:bs])
                cp += prod[:bs]
                vml_ufunc(xp.tanh, cp, out=tct)
                if hc is None:
                    xp.multiply(g[:, 2 * H:3 * H], tct, out=out[r])
                else:
                    xp.multiply(g[:, 2 * H:3 * H], tct, out=hc[r])
                    _products(xp, hc[r], WhrT, out=out[r])
                hp[...] = out[r]
            saved.update(Cprev=Cprev, tc=tc, hc=hc)
            c_n = c
        elif gru:
            hn = xp.empty((N, H), dtype)   # h W_hn^T + b_hn, inside the reset gate's product
            for r, bs in steps:
                g, hp = G[r], h[:bs]
                Hprev[r] = hp
                t = _rows_times(xp, hp, Whh, tmp)
                if bhh is not None:
                    t += bhh
                g[:, :2 * H] += t[:, :2 * H]
                _sigmoid_(g[:, :2 * H], xp)
                hn[r] = t[:, 2 * H:]
                n = g[:, 2 * H:]
                xp.multiply(g[:, :H], hn[r], out=t[:, 2 * H:])
                n += t[:, 2 * H:]
                vml_ufunc(xp.tanh, n, out=n)
                o = out[r]
                xp.subtract(hp, n, out=o)                 # n + z * (h - n)
                o *= g[:, H:2 * H]
                o += n
                hp[...] = o
            saved["hn"] = hn
            c_n = None
        else:
            relu = mode == "RNN_RELU"
            for r, bs in steps:
                g, hp = G[r], h[:bs]
                Hprev[r] = hp
                g += _rows_times(xp, hp, Whh, tmp)
                if relu:
                    xp.maximum(g, 0, out=out[r])
                else:
                    vml_ufunc(xp.tanh, g, out=out[r])
                hp[...] = out[r]
            c_n = None
    dev = x._device
    out_t = make_tensor(out.reshape(X.shape[:-1] + (Hout,)), dev)
    h_n_t = make_tensor(h, dev)
    c_n_t = None if c_n is None else make_tensor(c_n, dev)
    inputs = [x, h0] + ([c0] if lstm else []) + [w for w in weights if w is not None]
    node = record(_NODES[mode], inputs, out_t, h_n_t, c_n_t)
    if node is not None:
        node.mode, node.steps = mode, steps
        node.has = (b_ih is not None, b_hh is not None, w_hr is not None)
        node.arrays = saved
        node._out_meta = tuple((o._array.shape, o.dtype, o._device)
                               for o in (out_t, h_n_t, c_n_t) if o is not None)
        node.save_for_backward(x, w_ih, w_hh, w_hr, out_t)
    return out_t, h_n_t, c_n_t


# oneDNN's LSTM takes the intra-op threads from this many multiply-adds, where the products
# run on OpenMP's threads too (`_gemm.threaded`): beside OpenBLAS's threads its spinning
# OpenMP workers took their cores (the LSTM LM's step at 2 threads: 2.2x PyTorch's time, 1.6x
# with the layer on one thread, 1.16x with products and layer on OpenMP's threads).
ONEDNN_PARALLEL_MIN_MACS = 1 << 24


def _onednn_threads(macs):
    return intra_threads() if macs >= ONEDNN_PARALLEL_MIN_MACS and threaded() else 1


def _onednn_lstm(x, h0, c0, weights, reverse):
    """`direction` of a padded float32 LSTM without projections through oneDNN's LSTM, the
    kernel PyTorch's CPU LSTM runs (the same bits, measured), or None where oneDNN refuses."""
    w_ih, w_hh, b_ih, b_hh, _ = weights
    biases = [b._array for b in (b_ih, b_hh) if b is not None]
    bias = biases[0] + biases[1] if len(biases) == 2 else \
        (biases[0] if biases else np.zeros(w_ih.shape[0], np.float32))
    X = x._array
    h0a, c0a = np.array(h0._array, np.float32), np.array(c0._array, np.float32)
    macs = X.shape[0] * X.shape[1] * w_ih.shape[0] * (w_ih.shape[1] + w_hh.shape[1])
    done = _dnnl_layers.lstm_forward(X, h0a, c0a, w_ih._array, w_hh._array, bias, reverse,
                              _onednn_threads(macs))
    if done is None:
        return None
    y, h_n, c_n, saved = done
    dev = x._device
    out_t, h_n_t, c_n_t = make_tensor(y, dev), make_tensor(h_n, dev), make_tensor(c_n, dev)
    inputs = [x, h0, c0] + [w for w in weights if w is not None]
    node = record(LstmLayerBackward0, inputs, out_t, h_n_t, c_n_t)
    if node is not None:
        node.mode = "LSTM"
        node.has = (b_ih is not None, b_hh is not None, False)
        node.arrays = {"onednn": saved}
        node._out_meta = tuple((o._array.shape, o.dtype, o._device)
                               for o in (out_t, h_n_t, c_n_t))
        node.save_for_backward(x, w_ih, w_hh, None, out_t)
    return out_t, h_n_t, c_n_t


# ---- backward --------------------------------------------------------------------------------
class FusedLayerBackward(Node):
    arrays = None

    def _release(self):
        super()._release()
        self.arrays = None  # the gates and states of every step go with the saved tensors

    def backward(self, d_out, d_hn, d_cn=None):
        if _grad_state.enabled:
            raise RuntimeError(
                f"the fused {self.mode} layer's backward is not differentiable: double backward "
                f"(create_graph=True) through torch.{self.mode.lower()} is not supported, as "
                "with PyTorch's cuDNN and oneDNN RNN kernels; run the forward under "
                "torch.backends.mkldnn.flags(enabled=False) (torch.backends.cudnn.flags("
                "enabled=False) on CUDA) for the composite, twice differentiable path")
        x, w_ih, w_hh, w_hr, out_t = self.saved_tensors  # checks their versions
        A = self.arrays
        if "onednn" in A:
            return self._onednn_backward(d_out, d_hn, d_cn)
        xp = xp_of(x)
        X = x._array
        X2 = X.reshape(-1, X.shape[-1])
        G, Hprev, perm = A["G"], A["Hprev"], A["perm"]
        N, Hout = Hprev.shape
        dtype = X.dtype
        steps = self.steps[::-1]
        dO = d_out._array.reshape(N, Hout)
        dh = d_hn._array.astype(dtype, copy=True)    # running gradient of the state
        mode = self.mode
        has_bih, has_bhh, has_proj = self.has
        Whh = w_hh._array if perm is None else w_hh._array[perm]
        Wih = w_ih._array if perm is None else w_ih._array[perm]
        dG = xp.empty_like(G)
        dhg = dG
        d_whr = d_c0 = None
        if mode == "LSTM":
            Cprev, tc, hc = A["Cprev"], A["tc"], A["hc"]
            H = Cprev.shape[1]
            dc = d_cn._array.astype(dtype, copy=True)
            Whr = None if w_hr is None else w_hr._array
            dH = xp.empty((N, Hout), dtype) if has_proj else None
            for r, bs in steps:
                dht, dct = dh[:bs], dc[:bs]
                dht += dO[r]
                if has_proj:
                    dH[r] = dht
                    dhc = _products(xp, dht, Whr)
                else:
                    dhc = dht
                g, d, tct = G[r], dG[r], tc[r]
                i, f, o, gg = g[:, :H], g[:, H:2 * H], g[:, 2 * H:3 * H], g[:, 3 * H:]
                dct += dhc * o * (1 - tct * tct)
                xp.multiply(dhc * tct, o * (1 - o), out=d[:, 2 * H:3 * H])
                xp.multiply(dct * gg, i * (1 - i), out=d[:, :H])
                xp.multiply(dct * Cprev[r], f * (1 - f), out=d[:, H:2 * H])
                xp.multiply(dct * i, 1 - gg * gg, out=d[:, 3 * H:])
                dct *= f
                _products(xp, d, Whh, out=dht)
            d_c0 = dc
            if has_proj:
                d_whr = _products(xp, dH.T, hc)
        elif mode == "GRU":
            hn = A["hn"]
            H = Hout
            dhg = xp.empty_like(G)
            for r, bs in steps:
                dht = dh[:bs]
                dht += dO[r]
                g, d, dhgt = G[r], dG[r], dhg[r]
                rr, z, n = g[:, :H], g[:, H:2 * H], g[:, 2 * H:]
                dn = xp.multiply(dht * (1 - z), 1 - n * n, out=d[:, 2 * H:])
                xp.multiply(dht * (Hprev[r] - n), z * (1 - z), out=d[:, H:2 * H])
                xp.multiply(dn * hn[r], rr * (1 - rr), out=d[:, :H])
                dhgt[:, :2 * H] = d[:, :2 * H]
                xp.multiply(dn, rr, out=dhgt[:, 2 * H:])
                dht *= z
                dht += _products(xp, dhgt, Whh)
        else:
            out = out_t._array.reshape(N, Hout)
            relu = mode == "RNN_RELU"
            for r, bs in steps:
                dht = dh[:bs]
                dht += dO[r]
                d = dG[r]
                y = out[r]
                if relu:
                    xp.multiply(dht, y > 0, out=d)
                else:
                    xp.multiply(dht, 1 - y * y, out=d)
                _products(xp, d, Whh, out=dht)
        # the weights' gradients: one GEMM each over all steps
        # (through _products, as every product: MKL's where it is installed)
        d_x = _products(xp, dG, Wih).reshape(X.shape) if self.needs_input_grad[0] else None
        d_wih = _products(xp, dG.T, X2)
        d_whh = _products(xp, dhg.T, Hprev)
        d_b_ih = dG.sum(0) if has_bih else None
        d_b_hh = dhg.sum(0) if has_bhh else None
        if perm is not None:
            d_wih, d_whh = _unperm(xp, d_wih, perm), _unperm(xp, d_whh, perm)
            d_b_ih = None if d_b_ih is None else _unperm(xp, d_b_ih, perm)
            d_b_hh = None if d_b_hh is None else _unperm(xp, d_b_hh, perm)
        dev = x._device
        grads = [d_x, dh] + ([d_c0] if mode == "LSTM" else []) + [d_wih, d_whh]
        grads += [g for g, present in ((d_b_ih, has_bih), (d_b_hh, has_bhh), (d_whr, has_proj))
                  if present]
        return tuple(None if a is None else make_tensor(a, dev) for a in grads)


    def _onednn_backward(self, d_out, d_hn, d_cn):
        d_x, d_h0, d_c0, d_wih, d_whh, d_bias = _dnnl_layers.lstm_backward(
            self.arrays["onednn"], d_out._array, d_hn._array, d_cn._array)
        has_bih, has_bhh, _ = self.has
        grads = [d_x, d_h0, d_c0, d_wih, d_whh]
        grads += [d_bias] if has_bih else []
        grads += [d_bias.copy() if has_bih else d_bias] if has_bhh else []
        dev = d_out._device
        return tuple(make_tensor(a, dev) for a in grads)


class LstmLayerBackward0(FusedLayerBackward):
    pass


class GruLayerBackward0(FusedLayerBackward):
    pass


class RnnLayerBackward0(FusedLayerBackward):
    pass


_NODES = {"LSTM": LstmLayerBackward0, "GRU": GruLayerBackward0, "RNN_TANH": RnnLayerBackward0,
          "RNN_RELU": RnnLayerBackward0}
