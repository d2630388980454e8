"""Op-table entries for `ember/ops/recurrent.py`: torch.lstm/gru/rnn_tanh/rnn_relu (padded and
packed forms) and their cells."""
import numpy as np

from . import OpInfo, Sample, randn, register, top

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def params(rng, gates, input_size, hidden, layers=1, directions=1, bias=True, proj=0):
    out = []
    for layer in range(layers):
        for _ in range(directions):
            isz = input_size if layer == 0 else (proj or hidden) * directions
            out += [randn(rng, gates * hidden, isz) * 0.5,
                    randn(rng, gates * hidden, proj or hidden) * 0.5]
            if bias:
                out += [randn(rng, gates * hidden) * 0.5, randn(rng, gates * hidden) * 0.5]
            if proj:
                out.append(randn(rng, proj, hidden) * 0.5)
    return out


def sequence_samples(name):
    g = GATES[name]

    def hx(rng, n, b, h):
        state = randn(rng, n, b, h) * 0.5
        return [state, randn(rng, n, b, h) * 0.5] if name == "lstm" else state

    def samples(rng):
        out = [
            Sample((randn(rng, 4, 2, 3), hx(rng, 1, 2, 2), params(rng, g, 3, 2), True, 1, 0.0,
                    False, False, False)),
            Sample((randn(rng, 2, 3, 3), hx(rng, 4, 2, 2), params(rng, g, 3, 2, 2, 2, False),
                    False, 2, 0.0, False, True, True)),
            # packed: batch sizes 2, 2, 1 (the data form)
            Sample((randn(rng, 5, 3), np.array([2, 2, 1]), hx(rng, 2, 2, 2),
                    params(rng, g, 3, 2, 1, 2), True, 1, 0.0, False, True)),
        ]
        if name == "lstm":
            out.append(Sample((randn(rng, 3, 2, 3), [randn(rng, 1, 2, 2), randn(rng, 1, 2, 4)],
                               params(rng, 4, 3, 4, proj=2), True, 1, 0.0, False, False,
                               False)))
            out.append(Sample((randn(rng, 3, 2, 3), [randn(rng, 1, 2, 2)], params(rng, 4, 3, 2),
                               True, 1, 0.0, False, False, False), raises=RuntimeError))
        return out
    return samples


def cell_samples(name):
    g = GATES[name.replace("_cell", "")]
    lstm = name == "lstm_cell"

    def hx(rng, b, h):
        return [randn(rng, b, h), randn(rng, b, h)] if lstm else randn(rng, b, h)

    def samples(rng):
        w = params(rng, g, 3, 2)
        return [
            Sample((randn(rng, 4, 3), hx(rng, 4, 2), *w)),
            Sample((randn(rng, 4, 3), hx(rng, 4, 2), w[0], w[1])),
            Sample((randn(rng, 4, 3), hx(rng, 4, 2), w[0], w[1], w[2])),
            Sample((randn(rng, 4, 4), hx(rng, 4, 2), *w), raises=RuntimeError),
            Sample((randn(rng, 4, 3), hx(rng, 5, 2), *w), raises=RuntimeError),
            Sample((randn(rng, 4, 3), hx(rng, 4, 2), w[1][:, :2], w[1]), raises=RuntimeError),
        ]
    return samples


for _name in GATES:
    register(OpInfo(_name, top(_name), sequence_samples(_name), gradgrad=False))
    register(OpInfo(f"{_name}_cell", top(f"{_name}_cell"), cell_samples(f"{_name}_cell")))
