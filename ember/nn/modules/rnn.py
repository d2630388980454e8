"""Recurrent layers: RNN, LSTM, GRU and their single-step cells, with PyTorch's parameter
names, shapes, gate order and initialisation.

The arithmetic is `ember.ops.recurrent`'s (torch.lstm, torch.gru ... and their cells).
"""
import math
import numbers
import warnings

from ... import ops
from ...ops.recurrent import (gru, gru_cell, lstm, lstm_cell, rnn_relu, rnn_relu_cell,
                              rnn_tanh, rnn_tanh_cell)
from ..._tensor import Tensor
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]



def apply_permutation(tensor, permutation, dim=1):
    """Deprecated in PyTorch: `tensor` reordered along `dim` by the index tensor `permutation`."""
    warnings.warn("`apply_permutation` is deprecated, please use `tensor.index_select(dim, "
                  "permutation)` instead", FutureWarning, stacklevel=2)
    return tensor.index_select(dim, permutation)


_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    """Parameters and bookkeeping shared by RNN, LSTM and GRU."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first = bias, batch_first
        self.dropout = float(dropout) if isinstance(dropout, numbers.Number) else dropout
        self.bidirectional, self.proj_size = bidirectional, proj_size
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int),
                                  ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                                f"{type(value).__name__}")
            if kind is int and value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        num_directions = 2 if bidirectional else 1
        factory = {"device": device, "dtype": dtype}
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for stem, shape in shapes:
                    name = f"{stem}_l{layer}{suffix}"
                    setattr(self, name, Parameter(ops.empty(shape, **factory)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    def __getstate__(self):
        # PyTorch's RNNBase keeps `_flat_weights` as an attribute and its __setstate__ reads
        # it, so a pickled ember RNN carries the list (the same Parameter objects)
        state = self.__dict__.copy()
        state["_flat_weights"] = self._flat_weights
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        # PyTorch's attribute copies (and weak references) of what the property computes
        self.__dict__.pop("_flat_weights", None)
        self.__dict__.pop("_flat_weight_refs", None)
        self.__dict__.setdefault("proj_size", 0)  # LSTMs pickled before PyTorch 1.8

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """cuDNN's weight packing; a no-op here, as in PyTorch on CPU."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ---- argument checks, as PyTorch's ------------------------------------------------------
    def check_input(self, input, batch_sizes):
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                             f"model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def _mini_batch(self, input, batch_sizes):
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def get_expected_hidden_size(self, input, batch_sizes):
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1),
                self._mini_batch(input, batch_sizes), size)

    def get_expected_cell_size(self, input, batch_sizes):
        return (self.num_layers * (2 if self.bidirectional else 1),
                self._mini_batch(input, batch_sizes), self.hidden_size)

    def check_hidden_size(self, hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected):
            raise RuntimeError(msg.format(tuple(expected), list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        if self.mode == "LSTM":
            self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                                   "Expected hidden[0] size {}, got {}")
            self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                                   "Expected hidden[1] size {}, got {}")
        else:
            self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        if self.mode == "LSTM":
            return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)
        return hx.index_select(1, permutation)

    # ---- forward ------------------------------------------------------------------------------
    def _zeros(self, input, batch):
        n = self.num_layers * (2 if self.bidirectional else 1)
        real = self.proj_size if self.proj_size > 0 else self.hidden_size
        h = ops.zeros((n, batch, real), dtype=input.dtype, device=input.device)
        if self.mode != "LSTM":
            return h
        return h, ops.zeros((n, batch, self.hidden_size), dtype=input.dtype,
                            device=input.device)

    def forward(self, input, hx=None):
        lstm = self.mode == "LSTM"
        name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
        packed = isinstance(input, PackedSequence)
        if packed:
            input, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is None:
                hx = self._zeros(input, int(batch_sizes[0]))
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(input, hx, batch_sizes)
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                tail = " tensor" if name == "RNN" else ""
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                                 f"{tail} instead")
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            if hx is None:
                hx = self._zeros(input, input.size(batch_dim))
            else:
                want = 3 if is_batched else 2
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                if lstm and (hx[0].dim() != want or hx[1].dim() != want):
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D "
                                       f"but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                if not lstm and hx.dim() != want:
                    raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                                       f"{hx.dim()}-D tensor")
                if not is_batched:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if lstm else hx.unsqueeze(1)
            self.check_forward_args(input, hx, batch_sizes)
        output, hidden = self._run(input, hx, batch_sizes)
        if packed:
            return (PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices),
                    self.permute_hidden(hidden, unsorted_indices))
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1)) if lstm else hidden.squeeze(1)
        return output, hidden

    def _run(self, x, hx, batch_sizes):
        # through the public function, as PyTorch's module calls _VF.lstm: so that a trace
        # (export, fx) records the whole layer stack as one node
        sequence = {"LSTM": lstm, "GRU": gru, "RNN_TANH": rnn_tanh,
                    "RNN_RELU": rnn_relu}[self.mode]  # the names, read now: a trace swaps them
        if batch_sizes is None:
            # batch_first handled by the op, as PyTorch's (its output's grad_fn shows it)
            found = sequence(x, hx, self._flat_weights, self.bias, self.num_layers,
                             self.dropout, self.training, self.bidirectional, self.batch_first)
        else:
            found = sequence(x, batch_sizes, hx, self._flat_weights, self.bias,
                             self.num_layers, self.dropout, self.training, self.bidirectional)
        return found[0], (tuple(found[1:]) if self.mode == "LSTM" else found[1])


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self_nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self_nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self_nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self_nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self_nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = self_nonlinearity


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ---- cells ------------------------------------------------------------------------------
class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(ops.empty((num_chunks * hidden_size, input_size), **factory))
        self.weight_hh = Parameter(ops.empty((num_chunks * hidden_size, hidden_size),
                                             **factory))
        if bias:
            self.bias_ih = Parameter(ops.empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(ops.empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx, lstm=False):
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        states = () if hx is None else (tuple(hx) if lstm else (hx,))
        for idx, value in enumerate(states):
            if value.dim() not in (1, 2):
                what = f"hx[{idx}]" if lstm else "hidden"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {value.dim()}D "
                                 "instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
            states = tuple(s.unsqueeze(0) for s in states)
        if not states:
            zeros = ops.zeros((input.size(0), self.hidden_size), dtype=input.dtype,
                              device=input.device)
            states = (zeros, zeros) if lstm else (zeros,)
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        for i, s in enumerate(states):
            if s.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} "
                                   f"batch size {s.size(0)}")
            if s.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.size(1)}, "
                                   f"expected {self.hidden_size}")
        return input, states, is_batched



class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (h,), is_batched = self._prepare(input, hx)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        cell = rnn_relu_cell if self.nonlinearity == "relu" else rnn_tanh_cell
        ret = cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, (h, c), is_batched = self._prepare(input, hx, lstm=True)
        h, c = lstm_cell(input, (h, c), self.weight_ih, self.weight_hh, self.bias_ih,
                         self.bias_hh)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), is_batched = self._prepare(input, hx)
        ret = gru_cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
