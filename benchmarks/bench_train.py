"""Training-step speed, ember beside PyTorch in one run (same weights, same data):
an MLP (784-512-512-10, batch 128, SGD with momentum) and a small CNN (two conv+pool
blocks, batch 32, 28x28 inputs, SGD with momentum). Prints median step times and the ratio
ember / PyTorch, from alternating rounds (`_timing.py`).

    python benchmarks/bench_train.py [--steps 30]
"""
import sys

import os

import numpy as np

# ember from this checkout when run as a script (else an editable install's, maybe another
# worktree's, is what gets timed)
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ember  # noqa: E402
from _timing import compare, header, row  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


def setup(lib, build, x, y, weights):
    model = build(lib)
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.tensor(w))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = lib.nn.CrossEntropyLoss()
    xt, yt = lib.tensor(x), lib.tensor(y)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(xt), yt)
        loss.backward()
        opt.step()
        return loss
    return step


def main():
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 45
    rng = np.random.default_rng(0)
    cases = [("MLP 784-512-512-10, batch 128", mlp, rng.standard_normal((128, 784))),
             ("CNN 2x(conv+pool), batch 32, 28x28", cnn, rng.standard_normal((32, 1, 28, 28)))]
    print(header("training step"))
    for name, build, x in cases:
        x = x.astype(np.float32)
        y = rng.integers(0, 10, len(x))
        weights = [p.detach().numpy().copy() for p in build(ember).parameters()]
        theirs = setup(torch, build, x, y, weights) if torch is not None else None
        rounds = max(1, steps // 5)
        mine, other, ratio = compare(setup(ember, build, x, y, weights), theirs, 5, rounds)
        print(row(name, mine, other, ratio, "ms", 1e3))


if __name__ == "__main__":
    main()
