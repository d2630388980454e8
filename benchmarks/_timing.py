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


def compare(ours, theirs, number, rounds=9, warmup=3, settle=0.0):
    """(ember s/call, torch s/call, ratio); torch's figures are None when `theirs` is None.
    `settle`: seconds slept before each timed block, for the other library's idle threads to
    stop spinning (see SETTLE_S), followed by one untimed call of the library about to be
    timed (see SETTLE_S: the machine runs slow for a while after an idle pause)."""
    for _ in range(warmup):  # scratch buffers, BLAS threads, the allocator's first pages
        ours()
        if theirs is not None:
            theirs()
    mine, other = [], []
    for _ in range(rounds):
        _settle(settle, ours)
        mine.append(per_call(ours, number))
        if theirs is not None:
            _settle(settle, theirs)
            other.append(per_call(theirs, number))
    if theirs is None:
        return statistics.median(mine), None, None
    ratio = statistics.median(a / b for a, b in zip(mine, other))
    return statistics.median(mine), statistics.median(other), ratio


# With several threads, each library's idle workers spin before they sleep: OpenBLAS's (under
# ember) for ~0.1 s after a threaded product (its THREAD_TIMEOUT), PyTorch's OpenMP ones for a
# while after each parallel region. Timed right after the other library's block, a library
# shares the cores with those spinners, which a program running one library never does: at 2
# threads one model's ratio swung between 1.2 and 2.1 from run to run (GPT: PyTorch's step 94
# ms in one run, 142 in the next). Sleeping this long before each timed block lets them stop.
# A pause costs the call after it, though: on this project's VM the first ~15 ms after 0.25 s
# idle run slow (a float32 exp of 512K values took 3.3 ms for its first five calls, 0.9 ms
# once warm; a product 3.7 ms for its first call, 2.3 after), which a training loop, stepping
# back to back, never meets. With one step timed per block (the large models), each timed step
# was a first one: ember's step 10% slower than its next, PyTorch's 1% (CIFAR ResNet, 1 thread;
# `/work/notes/s26/cold.py`). So one untimed call follows the pause: the other library's
# spinners are gone, and the timed block runs as a training loop does.
SETTLE_S = 0.25


def _settle(seconds, fn):
    if seconds > 0:
        time.sleep(seconds)
        fn()


def header(first, width=36):
    return f"{first:{width}} {'ember':>12} {'torch':>12} {'ratio':>7}"


def row(name, mine, other, ratio, unit, scale, width=36):
    """One printed line: name, ember's time, PyTorch's time and the ratio (when there)."""
    line = f"{name:{width}} {mine * scale:10.2f}{unit}"
    if other is not None:
        line += f" {other * scale:10.2f}{unit} {ratio:7.2f}"
    return line
