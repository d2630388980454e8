"""Core speed, ember beside PyTorch in one run: per-op time on tiny tensors without and
with grad, a small backward `(a * b).sum().backward()`, a 1024x1024 float32 matmul, and erf
and GELU (forward and backward) on a GPT MLP's hidden activations.
With --nn, instead: forward + backward of the normalisation and attention ops at the
shapes of real models' training steps (batch norm in training mode with running stats,
layer norm, softmax, log_softmax, cross entropy, causal scaled_dot_product_attention).
Prints each time and the ratio ember / PyTorch (lower is better; 1.0 is parity).

    python benchmarks/bench_core.py [--quick] [--nn]
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


def nn_cases(lib, quick):
    """(name, forward + backward of one op, calls per round): inputs and weights require
    grad, the backward is seeded with a fixed random gradient of the output's shape."""
    rng = np.random.default_rng(0)
    F = lib.nn.functional

    def arr(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def leaf(*shape):
        return lib.tensor(arr(*shape), requires_grad=True)

    def fwd_bwd(forward, out_shape):
        seed = lib.tensor(arr(*out_shape)) if out_shape else None

        def step():
            out = forward()
            out.backward(seed) if seed is not None else out.backward()
        return step

    def batch_norm(shape, training=True):
        x, c = leaf(*shape), shape[1]
        w, b = leaf(c), leaf(c)
        rm, rv = lib.zeros(c), lib.ones(c)
        return fwd_bwd(lambda: F.batch_norm(x, rm, rv, w, b, training, 0.1, 1e-5), shape)

    def layer_norm(shape):
        x, w, b = leaf(*shape), leaf(shape[-1]), leaf(shape[-1])
        return fwd_bwd(lambda: F.layer_norm(x, shape[-1:], w, b), shape)

    logits = leaf(16 * 64, 1000)
    target = lib.tensor(rng.integers(0, 1000, 16 * 64))
    target_ignored = lib.tensor(np.where(rng.random(16 * 64) < 0.1, -100,
                                         rng.integers(0, 1000, 16 * 64)))
    q, k, v = leaf(16, 4, 64, 32), leaf(16, 4, 64, 32), leaf(16, 4, 64, 32)
    n = 5 if quick else 20
    return [
        ("batch_norm train (32,16,32,32)", batch_norm((32, 16, 32, 32)), n),
        ("batch_norm train (32,64,8,8)", batch_norm((32, 64, 8, 8)), n),
        ("batch_norm train (8,64,56,56)", batch_norm((8, 64, 56, 56)), max(n // 4, 2)),
        ("batch_norm eval (32,16,32,32)", batch_norm((32, 16, 32, 32), False), n),
        ("batch_norm train (256,512) 2-d", batch_norm((256, 512)), n),
        ("layer_norm (1024,128)", layer_norm((16 * 64, 128)), n),
        ("softmax (1024,1000)",
         fwd_bwd(lambda: F.softmax(logits, -1), (16 * 64, 1000)), n),
        ("log_softmax (1024,1000)",
         fwd_bwd(lambda: F.log_softmax(logits, -1), (16 * 64, 1000)), n),
        ("cross_entropy (1024,1000)",
         fwd_bwd(lambda: F.cross_entropy(logits, target), ()), n),
        ("cross_entropy smooth+ignore",
         fwd_bwd(lambda: F.cross_entropy(logits, target_ignored, label_smoothing=0.1), ()), n),
        ("sdpa causal (16,4,64,32)",
         fwd_bwd(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                 (16, 4, 64, 32)), n),
    ]


def main():
    quick = "--quick" in sys.argv
    if "--nn" in sys.argv:
        ours = nn_cases(ember, quick)
        theirs = nn_cases(torch, quick) if torch is not None else [None] * len(ours)
        print(header("case (forward + backward)", 32))
        for (name, fn, n), other in zip(ours, theirs):
            mine, their, ratio = compare(fn, other and other[1], n, rounds=5 if quick else 9)
            print(row(name, mine, their, ratio, "ms", 1e3, width=32))
        return
    ours = cases(ember, quick)
    theirs = cases(torch, quick) if torch is not None else [None] * len(ours)
    print(header("case", 32))
    for (name, fn, n), other in zip(ours, theirs):
        mine, their, ratio = compare(fn, other and other[1], n, rounds=5 if quick else 9)
        print(row(name, mine, their, ratio, "us", 1e6, width=32))


if __name__ == "__main__":
    main()
