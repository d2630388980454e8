"""Convolution and pooling speed, ember beside PyTorch on the same inputs: forward+backward
of conv2d (batch 32, 64->64 channels, 32x32, 3x3, padding 1) and of max_pool2d (2x2, and
3x3 stride 2) on the same 32x64x32x32 input. Prints median times from alternating rounds
(`_timing.py`) and the ratio ember / PyTorch (lower is better); both libraries use their
default thread counts (NumPy's BLAS and PyTorch each take every core).

    python benchmarks/bench_conv.py [--quick] [--profile]
"""
import sys

import numpy as np

import ember
from _timing import compare, header, row

try:
    import torch
except ImportError:  # still useful alone: prints ember's times
    torch = None


def cases(lib, F):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64, 32, 32)).astype(np.float32)
    w = (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    xt = lib.tensor(x, requires_grad=True)
    wt = lib.tensor(w, requires_grad=True)
    bt = lib.tensor(b, requires_grad=True)
    g = lib.tensor(rng.standard_normal((32, 64, 32, 32)).astype(np.float32))
    g2 = lib.tensor(rng.standard_normal((32, 64, 16, 16)).astype(np.float32))
    g3 = lib.tensor(rng.standard_normal((32, 64, 15, 15)).astype(np.float32))

    def conv():
        xt.grad = wt.grad = bt.grad = None
        F.conv2d(xt, wt, bt, padding=1).backward(g)

    def conv_fwd():
        with lib.no_grad():
            F.conv2d(xt, wt, bt, padding=1)

    def pool2():
        xt.grad = None
        F.max_pool2d(xt, 2).backward(g2)

    def pool3():
        xt.grad = None
        F.max_pool2d(xt, 3, stride=2).backward(g3)

    def avg2():
        xt.grad = None
        F.avg_pool2d(xt, 2).backward(g2)

    return [("conv2d 3x3 fwd+bwd", conv), ("conv2d 3x3 fwd (no grad)", conv_fwd),
            ("max_pool2d 2x2 fwd+bwd", pool2), ("max_pool2d 3x3/s2 fwd+bwd", pool3),
            ("avg_pool2d 2x2 fwd+bwd", avg2)]


def main():
    quick = "--quick" in sys.argv
    import ember.nn.functional as EF
    theirs = [None] * 5
    if torch is not None:
        import torch.nn.functional as TF
        theirs = [f for _, f in cases(torch, TF)]
    print(header("case", 28))
    for (name, fn), other in zip(cases(ember, EF), theirs):
        mine, their, ratio = compare(fn, other, 1, rounds=3 if quick else 9, warmup=1)
        print(row(name, mine, their, ratio, "ms", 1e3, width=28))
    if "--profile" in sys.argv:
        import cProfile
        import pstats
        fns = dict(cases(ember, EF))
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(3):
            fns["conv2d 3x3 fwd+bwd"]()
            fns["max_pool2d 3x3/s2 fwd+bwd"]()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
