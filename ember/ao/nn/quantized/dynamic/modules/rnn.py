"""The dynamically quantized LSTM (PyTorch's `torch.ao.nn.quantized.dynamic.LSTM`, printed as
`DynamicQuantizedLSTM`): every input-to-hidden and hidden-to-hidden weight quantized to int8
per tensor; each layer's whole input sequence, then at each time step the hidden state, is
quantized on the fly and multiplied as the dynamically quantized Linear does; the gates run in
float32.

As for the Linear, the int8 codes live inside the module as NumPy arrays (ember has no
quantized tensors). Not here: PackedSequence input, proj_size, float16 weights."""
import numpy as np

from ...... import dtypes as _dt
from ......nn.modules.module import Module
from ......nn.modules.rnn import LSTM as FloatLSTM
from ......ops.creation import tensor
from .linear import int8_matmul, quantize_weight

__all__ = ["LSTM"]


def _sigmoid(x):
    return np.float32(1) / (np.float32(1) + np.exp(-x))


class _QuantizedProjection:
    """One weight (int8 codes, scale, zero point) and its float bias."""

    def __init__(self, weight, bias, observer):
        self.codes, self.scale, self.zero_point = quantize_weight(weight, observer)
        self.bias = None if bias is None else bias.detach().float().numpy()

    def __call__(self, rows):
        out = int8_matmul(rows, self.codes, self.scale, self.zero_point)
        return out if self.bias is None else out + self.bias


class LSTM(Module):
    _FLOAT_MODULE = [FloatLSTM]

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=_dt.qint8):
        super().__init__()
        if dtype is not _dt.qint8:
            raise NotImplementedError("ember's dynamically quantized LSTM has qint8 weights only")
        self.mode = "LSTM"
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.dtype, self.proj_size = bidirectional, dtype, 0
        self._projections = {}   # (layer, direction) -> (input projection, hidden projection)

    def _get_name(self):
        return "DynamicQuantizedLSTM"

    extra_repr = FloatLSTM.extra_repr

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        from .....quantization.qconfig import default_dynamic_qconfig
        if type(mod) not in cls._FLOAT_MODULE:
            raise AssertionError("nn.quantized.dynamic.LSTM.from_float only works for "
                                 "nn.LSTM")
        if mod.proj_size:
            raise NotImplementedError("ember's quantized LSTM has no proj_size")
        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        if qconfig.weight().dtype is not _dt.qint8:
            raise NotImplementedError("ember's dynamically quantized LSTM has qint8 weights "
                                      "only")
        qlstm = cls(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias, mod.batch_first,
                    mod.dropout, mod.bidirectional)
        for layer in range(mod.num_layers):
            for direction in range(2 if mod.bidirectional else 1):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                parts = [getattr(mod, name + suffix, None) for name in
                         ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
                qlstm._projections[layer, direction] = (
                    _QuantizedProjection(parts[0], parts[2], qconfig.weight()),
                    _QuantizedProjection(parts[1], parts[3], qconfig.weight()))
        return qlstm

    def forward(self, input, hx=None):
        if input.dim() != 3:   # PyTorch's quantized LSTM takes no unbatched input
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        x = input.detach().numpy().astype(np.float32)
        if self.batch_first:
            x = x.transpose(1, 0, 2)
        directions = 2 if self.bidirectional else 1
        batch, hidden = x.shape[1], self.hidden_size
        if hx is None:
            h0 = np.zeros((self.num_layers * directions, batch, hidden), np.float32)
            c0 = h0.copy()
        else:
            h0, c0 = (t.detach().numpy().astype(np.float32) for t in hx)
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                out, h, c = self._run(x, h0[index], c0[index],
                                      self._projections[layer, direction], reverse=direction)
                outputs.append(out)
                h_n.append(h)
                c_n.append(c)
            x = np.concatenate(outputs, axis=2)
        output, h_n, c_n = x, np.stack(h_n), np.stack(c_n)
        if self.batch_first:
            output = output.transpose(1, 0, 2)
        return tensor(np.ascontiguousarray(output)), (tensor(h_n), tensor(c_n))

    @staticmethod
    def _run(x, h, c, projections, reverse):
        input_projection, hidden_projection = projections
        steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        out = np.empty(x.shape[:2] + (h.shape[-1],), np.float32)
        # the layer's whole input is projected at once (one input scale for every step, as
        # PyTorch does); the hidden state is quantized afresh at each step
        projected = input_projection(x.reshape(-1, x.shape[-1])).reshape(x.shape[0],
                                                                        x.shape[1], -1)
        for t in steps:
            gates = projected[t] + hidden_projection(h)
            i, f, g, o = np.split(gates, 4, axis=1)
            c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
            h = _sigmoid(o) * np.tanh(c)
            out[t] = h
        return out, h, c
