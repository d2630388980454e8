"""The recurrent ops nn.RNN/LSTM/GRU run on: `lstm`, `gru`, `rnn_tanh`, `rnn_relu` (whole
stacked, optionally bidirectional layers over a padded or packed sequence) and their one-step
cells `lstm_cell`, `gru_cell`, `rnn_tanh_cell`, `rnn_relu_cell`.

A layer and direction (padded or packed) runs as one fused node, `_recurrent_fused`, wherever
it can (float32/float64, no autocast, forward AD, saved-tensor hooks or selective
checkpointing): its backward is written for all gates at once and is not differentiable again.
Elsewhere, and for the cells, they are compositions of ember ops (linear, addmm, sigmoid,
tanh ...), so their gradients and second derivatives come from those ops: each layer and
direction projects the inputs of all time steps with one matmul, and only the recurrent part
runs in the Python loop over time (packed sequences on shrinking (forward) or growing
(reverse) batches).

`params` is PyTorch's flat weight list: per layer and direction `w_ih, w_hh`, then `b_ih, b_hh`
when `has_biases`, then `w_hr` for an LSTM with projections.
"""
from .._state import flop_counter as _flops
from . import _recurrent_fused as _fused, activation, shape
from .linalg import linear, mm
from .normalization import dropout as _dropout
from .pointwise import sigmoid, tanh

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
           "rnn_relu_cell"]
METHODS = []


# ---- one time step ------------------------------------------------------------------------
# PyTorch's cell functors, op for op (so their grad_fn graphs are PyTorch's): `xg` is the
# input projection of this step (x W_ih^T + b_ih), the recurrent one h W_hh^T + b_hh is made
# here and added to it; the gates are unsafe chunks. `h`, `c` the state.
def rnn_step(xg, h, w_hh, b_hh, relu):
    pre = linear(h, w_hh, b_hh) + xg
    return activation.relu(pre) if relu else tanh(pre)


def lstm_step(xg, h, c, w_hh, b_hh, w_hr):
    i, f, g, o = (linear(h, w_hh, b_hh) + xg).unsafe_chunk(4, 1)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(c)
    if w_hr is not None:
        h = mm(h, w_hr.t())
    return h, c


def gru_step(xg, h, w_hh, b_hh):
    xr, xz, xn = xg.unsafe_chunk(3, 1)
    hr, hz, hn = linear(h, w_hh, b_hh).unsafe_chunk(3, 1)
    r = sigmoid(hr + xr)
    z = sigmoid(hz + xz)
    n = tanh(xn + hn * r)
    return (h - n) * z + n


# ---- one layer, one direction ------------------------------------------------------------
def _one_kernel_in_pytorch(mode, x, weights, batch_sizes):
    """Whether PyTorch's CPU build runs this layer as one oneDNN kernel, whose FLOPs it does
    not count (an LSTM of float32, bfloat16 or float16 without projections over a padded
    batch). Elsewhere it runs the cells op by op, each product counted: while FLOPs are
    counted ember then composes the layer of its ops too, so that they are counted alike."""
    return (mode == "LSTM" and weights[4] is None and batch_sizes is None
            and x.device.type == "cpu" and x.dtype.name in ("float32", "bfloat16", "float16"))


def run_direction(mode, x, h, c, weights, batch_sizes, reverse):
    """x: (T, B, I) padded or (N, I) packed. Returns the output in x's layout and the final
    (h, c) (c None unless LSTM)."""
    if _fused.usable(x, h, c, weights, batch_sizes) and (
            _flops.active is None or _one_kernel_in_pytorch(mode, x, weights, batch_sizes)):
        return _fused.direction(mode, x, h, c, weights, reverse, batch_sizes)
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    xg = linear(x, w_ih, b_ih)

    def step(xg_t, h, c):
        if mode == "LSTM":
            return lstm_step(xg_t, h, c, w_hh, b_hh, w_hr)
        if mode == "GRU":
            return gru_step(xg_t, h, w_hh, b_hh), None
        return rnn_step(xg_t, h, w_hh, b_hh, mode == "RNN_RELU"), None

    if batch_sizes is None:
        steps = xg.unbind(0)
        order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
        outs = [None] * len(steps)
        for t in order:
            h, c = step(steps[t], h, c)
            outs[t] = h
        return shape.stack(outs) if outs else xg[..., :h.shape[-1]], h, c

    sizes = [int(b) for b in batch_sizes]
    steps = xg.split(sizes, 0)
    outs = [None] * len(sizes)
    if not reverse:
        done_h, done_c = [], []
        for t, bs in enumerate(sizes):
            if bs < h.shape[0]:  # sequences that ended keep their last state
                done_h.append(h[bs:])
                h = h[:bs]
                if c is not None:
                    done_c.append(c[bs:])
                    c = c[:bs]
            h, c = step(steps[t], h, c)
            outs[t] = h
        if done_h:
            h = shape.cat([h] + done_h[::-1])
            c = None if c is None else shape.cat([c] + done_c[::-1])
        return shape.cat(outs), h, c
    h0, c0 = h, c
    active = sizes[-1]
    h, c = h0[:active], (None if c0 is None else c0[:active])
    for t in range(len(sizes) - 1, -1, -1):
        bs = sizes[t]
        if bs > active:  # sequences that start (from their end) at this step
            h = shape.cat([h, h0[active:bs]])
            if c is not None:
                c = shape.cat([c, c0[active:bs]])
            active = bs
        h, c = step(steps[t], h, c)
        outs[t] = h
    return shape.cat(outs), h, c


# ---- stacked layers ------------------------------------------------------------------------
def run_layers(mode, x, h0, c0, params, has_biases, num_layers, dropout, train, bidirectional,
               batch_sizes):
    """Every layer and direction over x ((T, B, I) padded or (N, I) packed): the last layer's
    output and the stacked final states (h_n, c_n), c_n None unless LSTM."""
    num_directions = 2 if bidirectional else 1
    per_plain = 4 if has_biases else 2
    groups = num_layers * num_directions
    if len(params) % per_plain and len(params) % (per_plain + 1):
        raise RuntimeError(f"MatrixRef: ArrayRef size {len(params)} not divisible by stride "
                           f"{per_plain}")
    per = len(params) // groups if groups else per_plain
    if h0.shape[0] < groups or (c0 is not None and c0.shape[0] < groups):
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    hs, cs = [], []
    for layer in range(num_layers):
        if layer > 0 and dropout > 0 and train:
            x = _dropout(x, dropout, True)
        outs = []
        for d in range(num_directions):
            k = layer * num_directions + d
            w = params[k * per:(k + 1) * per]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            w_hr = w[-1] if per > per_plain else None
            out, h, c = run_direction(mode, x, h0[k], None if c0 is None else c0[k],
                                      (w[0], w[1], b_ih, b_hh, w_hr), batch_sizes, d == 1)
            outs.append(out)
            hs.append(h)
            cs.append(c)
        x = outs[0] if num_directions == 1 else shape.cat(outs, -1)
    return x, shape.stack(hs), (shape.stack(cs) if c0 is not None else None)


def _forms(name, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
           batch_first, data, batch_sizes):
    """PyTorch's two overloads: (input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first) and, for packed data, (data, batch_sizes, hx, params,
    has_biases, num_layers, dropout, train, bidirectional). A positional call of the second
    puts `params` where the first has `has_biases`, which tells them apart."""
    if data is not None or batch_sizes is not None or isinstance(has_biases, (list, tuple)):
        if data is None:  # positional packed form: shift the arguments into place
            data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, \
                bidirectional = (input, hx, params, has_biases, num_layers, dropout, train,
                                 bidirectional, batch_first)
        return data, hx, list(params), has_biases, num_layers, dropout, train, bidirectional, \
            False, batch_sizes
    return input, hx, list(params), has_biases, num_layers, dropout, train, bidirectional, \
        batch_first, None


def _sequence(mode, name, args):
    x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first, \
        batch_sizes = _forms(name, *args)
    lstm_mode = mode == "LSTM"
    if lstm_mode:
        if len(hx) != 2:
            raise RuntimeError("lstm expects two hidden states")
        h0, c0 = hx
    else:
        h0, c0 = hx, None
    if batch_first and batch_sizes is None:
        x = x.transpose(0, 1)
    out, h_n, c_n = run_layers(mode, x, h0, c0, params, has_biases, num_layers, dropout, train,
                               bidirectional, batch_sizes)
    if batch_first and batch_sizes is None:
        # PyTorch turns an RNN's or GRU's output round in place (TransposeBackward1), an
        # LSTM's with a view; not in place where a fused layer saved its output for backward
        in_place = not lstm_mode and not isinstance(out.grad_fn, _fused.FusedLayerBackward)
        out = out.transpose_(0, 1) if in_place else out.transpose(0, 1)
    return (out, h_n, c_n) if lstm_mode else (out, h_n)


def lstm(input=None, hx=None, params=None, has_biases=None, num_layers=None, dropout=None,
         train=None, bidirectional=None, batch_first=None, *, data=None, batch_sizes=None):
    """`torch.lstm`: (output, h_n, c_n); hx is [h_0, c_0]."""
    return _sequence("LSTM", "lstm", (input, hx, params, has_biases, num_layers, dropout, train,
                                      bidirectional, batch_first, data, batch_sizes))


def gru(input=None, hx=None, params=None, has_biases=None, num_layers=None, dropout=None,
        train=None, bidirectional=None, batch_first=None, *, data=None, batch_sizes=None):
    """`torch.gru`: (output, h_n)."""
    return _sequence("GRU", "gru", (input, hx, params, has_biases, num_layers, dropout, train,
                                    bidirectional, batch_first, data, batch_sizes))


def rnn_tanh(input=None, hx=None, params=None, has_biases=None, num_layers=None, dropout=None,
             train=None, bidirectional=None, batch_first=None, *, data=None, batch_sizes=None):
    """`torch.rnn_tanh`: (output, h_n) of an Elman RNN with tanh."""
    return _sequence("RNN_TANH", "rnn_tanh", (input, hx, params, has_biases, num_layers, dropout,
                                              train, bidirectional, batch_first, data,
                                              batch_sizes))


def rnn_relu(input=None, hx=None, params=None, has_biases=None, num_layers=None, dropout=None,
             train=None, bidirectional=None, batch_first=None, *, data=None, batch_sizes=None):
    """`torch.rnn_relu`: (output, h_n) of an Elman RNN with relu."""
    return _sequence("RNN_RELU", "rnn_relu", (input, hx, params, has_biases, num_layers, dropout,
                                              train, bidirectional, batch_first, data,
                                              batch_sizes))


# ---- cells --------------------------------------------------------------------------------
def _check_cell(input, states, w_ih, w_hh, gates):
    """PyTorch's checks of a cell's operands, in its order."""
    hidden = w_hh.shape[1]
    for wname, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if w.shape[0] != gates * hidden:
            raise RuntimeError(f"{wname} first dim must be {gates} * hidden_size = "
                               f"{gates * hidden}, but got {w.shape[0]}")
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                           f"{w_ih.shape[1]}")
    for i, s in enumerate(states):
        if s.shape[0] != input.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} batch "
                               f"size {s.shape[0]}")
        if s.shape[1] != hidden:
            raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.shape[1]}, "
                               f"expected {hidden}")


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """`torch.lstm_cell`: one LSTM step, (h_1, c_1); hx is [h_0, c_0]."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    _check_cell(input, (h, c), w_ih, w_hh, 4)
    return lstm_step(linear(input, w_ih, b_ih), h, c, w_hh, b_hh, None)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """`torch.gru_cell`: one GRU step (b_hh stays inside the reset gate's product)."""
    _check_cell(input, (hx,), w_ih, w_hh, 3)
    return gru_step(linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """`torch.rnn_tanh_cell`: tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    _check_cell(input, (hx,), w_ih, w_hh, 1)
    return rnn_step(linear(input, w_ih, b_ih), hx, w_hh, b_hh, False)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """`torch.rnn_relu_cell`: relu(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    _check_cell(input, (hx,), w_ih, w_hh, 1)
    return rnn_step(linear(input, w_ih, b_ih), hx, w_hh, b_hh, True)
