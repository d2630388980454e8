"""The one timing method of every benchmark here: ember and PyTorch run in alternating
rounds, so both see the same machine. On a shared 2-core machine a core can be slowed or
taken away for many seconds; timing one library after the other then measures the machine
rather than the library (a run once put ember's MLP step at 6 ms beside PyTorch's 3 ms,
while alternating rounds gave 3.6 ms beside 3.2 ms). Each round times a block of calls of
each library; times are medians over the rounds and the ratio is the median of the
per-round ratios."""
import statistics
import time


def per_call(fn, number):
    """Seconds per call over `number` back-to-back calls."""
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def compare(ours, theirs, number, rounds=9, warmup=3):
    """(ember s/call, torch s/call, ratio); torch's figures are None when `theirs` is None."""
    for _ in range(warmup):  # scratch buffers, BLAS threads, the allocator's first pages
        ours()
        if theirs is not None:
            theirs()
    mine, other = [], []
    for _ in range(rounds):
        mine.append(per_call(ours, number))
        if theirs is not None:
            other.append(per_call(theirs, number))
    if theirs is None:
        return statistics.median(mine), None, None
    ratio = statistics.median(a / b for a, b in zip(mine, other))
    return statistics.median(mine), statistics.median(other), ratio


def header(first, width=36):
    return f"{first:{width}} {'ember':>12} {'torch':>12} {'ratio':>7}"


def row(name, mine, other, ratio, unit, scale, width=36):
    """One printed line: name, ember's time, PyTorch's time and the ratio (when there)."""
    line = f"{name:{width}} {mine * scale:10.2f}{unit}"
    if other is not None:
        line += f" {other * scale:10.2f}{unit} {ratio:7.2f}"
    return line
