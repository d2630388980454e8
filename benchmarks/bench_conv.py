"""Convolution and pooling speed, ember beside PyTorch on the same inputs: forward+backward
of conv2d (batch 32, 64->64 channels, 32x32, 3x3, padding 1) and of max_pool2d (2x2, and
3x3 stride 2) on the same 32x64x32x32 input. Prints the median time of several runs and
the ratio ember / PyTorch (lower is better), PyTorch with 2 threads and with its default.

    python benchmarks/bench_conv.py [--quick] [--profile]
"""
import statistics
import sys
import time

import numpy as np

import ember

try:
    import torch
except ImportError:  # still useful alone: prints ember's times
    torch = None


def median_time(fn, repeat):
    fn()  # warm up (scratch buffers, BLAS threads)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


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
    repeat = 3 if quick else 9
    import ember.nn.functional as EF
    ours = [(n, median_time(f, repeat)) for n, f in cases(ember, EF)]
    columns = []
    if torch is not None:
        import torch.nn.functional as TF
        default_threads = torch.get_num_threads()
        for threads in (2, default_threads):
            torch.set_num_threads(threads)
            columns.append((threads, [median_time(f, repeat) for _, f in cases(torch, TF)]))
        torch.set_num_threads(default_threads)
    head = f"{'case':28} {'ember ms':>9}"
    for threads, _ in columns:
        head += f" {'torch ms':>9}({threads}t) {'ratio':>6}"
    print(head)
    for i, (name, t) in enumerate(ours):
        line = f"{name:28} {t * 1e3:9.2f}"
        for _, times in columns:
            line += f" {times[i] * 1e3:13.2f} {t / times[i]:6.2f}"
        print(line)
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
