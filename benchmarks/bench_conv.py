"""Convolution and pooling speed, ember beside PyTorch on the same inputs: forward+backward
of conv2d (batch 32, 64->64 channels, 32x32, 3x3, padding 1) and of max_pool2d (2x2, and
3x3 stride 2) on the same 32x64x32x32 input. Prints median times from alternating rounds
(`_timing.py`) and the ratio ember / PyTorch (lower is better); both libraries use their
default thread counts (NumPy's BLAS and PyTorch each take every core).

`--layers cifar` / `--layers resnet18` instead times forward+backward (input and weight
gradients) of every distinct conv shape of a CIFAR ResNet (batch 32, 16/32/64 channels, 32x32)
or of ResNet-18 (batch 8, 224x224); `--layout im2col|winograd|shifted|batched|channels_last` forces
ember's path (ember.ops.conv._layout.LAYOUT) for before/after comparisons. For 1-thread figures set
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 and pass --threads 1.

    python benchmarks/bench_conv.py [--quick] [--profile]
    python benchmarks/bench_conv.py --layers cifar|resnet18 [--layout L] [--threads 1] [--quick]
"""
import os
import sys

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


# (batch, in channels, out channels, size, kernel, stride, padding)
LAYERS = {
    "cifar": [(32, 3, 16, 32, 3, 1, 1), (32, 16, 16, 32, 3, 1, 1), (32, 16, 32, 32, 3, 2, 1),
              (32, 32, 32, 16, 3, 1, 1), (32, 16, 32, 32, 1, 2, 0), (32, 32, 64, 16, 3, 2, 1),
              (32, 64, 64, 8, 3, 1, 1), (32, 32, 64, 16, 1, 2, 0)],
    "resnet18": [(8, 3, 64, 224, 7, 2, 3), (8, 64, 64, 56, 3, 1, 1), (8, 64, 128, 56, 3, 2, 1),
                 (8, 128, 128, 28, 3, 1, 1), (8, 64, 128, 56, 1, 2, 0),
                 (8, 128, 256, 28, 3, 2, 1), (8, 256, 256, 14, 3, 1, 1),
                 (8, 256, 512, 14, 3, 2, 1), (8, 512, 512, 7, 3, 1, 1)],
}


def layer_case(lib, F, shape):
    n, c, o, size, k, stride, pad = shape
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((n, c, size, size)).astype(np.float32),
                   requires_grad=c != 3)  # a network's first layer needs no input gradient
    w = lib.tensor((rng.standard_normal((o, c, k, k)) * 0.1).astype(np.float32),
                   requires_grad=True)
    out = (size + 2 * pad - k) // stride + 1
    g = lib.tensor(rng.standard_normal((n, o, out, out)).astype(np.float32))

    def step():
        x.grad = w.grad = None
        F.conv2d(x, w, stride=stride, padding=pad).backward(g)
    return step


def layers_main(which, quick):
    import ember.nn.functional as EF
    from ember.ops.conv import _layout
    if "--layout" in sys.argv:
        _layout.LAYOUT = sys.argv[sys.argv.index("--layout") + 1]
    if "--threads" in sys.argv and torch is not None:
        torch.set_num_threads(int(sys.argv[sys.argv.index("--threads") + 1]))
    print(f"{which} conv layers, forward+backward, ember layout {_layout.LAYOUT}")
    print(header("NxC->O size kKsS", 30))
    for shape in LAYERS[which]:
        n, c, o, size, k, stride, _ = shape
        other = None
        if torch is not None:
            import torch.nn.functional as TF
            other = layer_case(torch, TF, shape)
        mine, their, ratio = compare(layer_case(ember, EF, shape), other, 1,
                                     rounds=3 if quick else 7, warmup=1)
        print(row(f"{n}x{c}->{o} {size}x{size} k{k}s{stride}", mine, their, ratio, "ms", 1e3,
                  width=30))


def main():
    quick = "--quick" in sys.argv
    if "--layers" in sys.argv:
        return layers_main(sys.argv[sys.argv.index("--layers") + 1], quick)
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
