"""Core speed, ember beside PyTorch in one run: per-op time on tiny tensors without and
with grad, a small backward `(a * b).sum().backward()`, a 1024x1024 float32 matmul, and erf
and GELU (forward and backward) on a GPT MLP's hidden activations.
Prints each time and the ratio ember / PyTorch (lower is better; 1.0 is parity).

    python benchmarks/bench_core.py [--quick]
"""
import sys

import numpy as np

import ember
from _timing import compare, header, row

try:
    import torch
except ImportError:  # still useful alone: prints ember's times
    torch = None


def cases(lib, quick):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    a, b = lib.tensor(x), lib.tensor(y)
    ag, bg = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
    n = 200 if quick else 2000
    m1 = lib.tensor(rng.standard_normal((1024, 1024)).astype(np.float32))
    m2 = lib.tensor(rng.standard_normal((1024, 1024)).astype(np.float32))

    def backward():
        (ag * bg).sum().backward()

    act = rng.standard_normal((16 * 64, 512)).astype(np.float32)   # a GPT MLP's hidden layer
    h, hg, ones = lib.tensor(act), lib.tensor(act, requires_grad=True), lib.ones(act.shape)

    def gelu_step():
        lib.nn.functional.gelu(hg).backward(ones)
        hg.grad = None

    return [
        ("add, tiny, no grad", lambda: a + b, n),
        ("mul, tiny, no grad", lambda: a * b, n),
        ("exp, tiny, no grad", lambda: a.exp(), n),
        ("sum, tiny, no grad", lambda: a.sum(), n),
        ("a + 1.0, tiny, no grad", lambda: a + 1.0, n),
        ("view, tiny, no grad", lambda: a.view(3, 1), n),
        ("add, tiny, with grad", lambda: ag + bg, n),
        ("mul, tiny, with grad", lambda: ag * bg, n),
        ("exp, tiny, with grad", lambda: ag.exp(), n),
        ("(a * b).sum().backward()", backward, n // 4),
        ("matmul 1024x1024 float32", lambda: m1 @ m2, 3 if quick else 10),
        ("erf (1024, 512) float32", lambda: h.erf(), 3 if quick else 10),
        ("gelu fwd+bwd (1024, 512) float32", gelu_step, 3 if quick else 10),
    ]


def main():
    quick = "--quick" in sys.argv
    ours = cases(ember, quick)
    theirs = cases(torch, quick) if torch is not None else [None] * len(ours)
    print(header("case", 32))
    for (name, fn, n), other in zip(ours, theirs):
        mine, their, ratio = compare(fn, other and other[1], n, rounds=5 if quick else 9)
        print(row(name, mine, their, ratio, "us", 1e6, width=32))


if __name__ == "__main__":
    main()
