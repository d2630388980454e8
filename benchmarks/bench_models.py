"""Training-step speed of real architectures, ember beside PyTorch in one process.

Each model is one class body written as a function of the library (`_models.py`, the MLP and
CNN of bench_train.py, the main job's DigitsCNN from examples/train_digits.py); PyTorch's
freshly initialised weights are copied into ember's, both get the same batch, and a step is
zero_grad, forward, loss, backward, (gradient clipping,) optimizer step and `loss.item()`.
Steps alternate in rounds (`_timing.compare`); the ratio is the median of per-round ratios.
The first step's loss of each library is printed beside the other's (DigitsCNN has dropout,
whose masks differ between the libraries, so its two first losses differ a little).

    python benchmarks/bench_models.py [--models cifar_resnet,gpt] [--rounds 7] [--quick]
                                      [--threads N | --both-threads] [--profile [STEPS]]

--threads N sets torch.set_num_threads(N) and, since NumPy's BLAS reads its thread count only
when it loads, re-executes this script with OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and
MKL_NUM_THREADS set to N. --both-threads prints the table at 1 thread and at the default
(each in a subprocess with the right environment). --profile runs ember's step alone under
cProfile (default 10 steps) and prints the functions with the largest cumulative time, in ms
per step and % of the step.
"""
import argparse
import ctypes
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(HERE))  # ember from this checkout when run as a script

import ember  # noqa: E402
import _models  # noqa: E402
from _timing import SETTLE_S, compare, per_call  # noqa: E402
from bench_train import cnn, mlp  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

BLAS_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def digits_cnn(lib):
    """The main job's model (examples/train_digits.py), built from `lib`."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "train_digits", os.path.join(os.path.dirname(HERE), "examples", "train_digits.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.digits_cnn_class(lib.nn)()


def _images(shape, classes=10):
    return lambda rng, batch: ((rng.standard_normal((batch,) + shape, dtype=np.float32),),
                               rng.integers(0, classes, batch))


def _tokens(vocab, length, seq_first=False, pair=False):
    def make(rng, batch):
        shape = (length, batch) if seq_first else (batch, length)
        inputs = (rng.integers(0, vocab, shape),)
        if pair:  # seq2seq: a source and the teacher-forced target input
            inputs += (rng.integers(0, vocab, shape),)
        return inputs, rng.integers(0, vocab, shape)
    return make


def _flat_cross_entropy(lib, output, target):
    return lib.nn.functional.cross_entropy(output.reshape(-1, output.shape[-1]),
                                           target.reshape(-1))


def _adam(lr):
    return lambda lib, params: lib.optim.Adam(params, lr=lr)


def _sgd(lr, momentum=0.0, weight_decay=0.0):
    return lambda lib, params: lib.optim.SGD(params, lr=lr, momentum=momentum,
                                             weight_decay=weight_decay)


@dataclass
class Case:
    name: str
    label: str
    build: object          # build(lib, **sizes) -> model
    batch: object          # batch(rng, batch_size) -> (inputs tuple, target), NumPy arrays
    batch_size: int
    optimizer: object      # optimizer(lib, parameters)
    loss: object = _flat_cross_entropy
    clip: float = None     # clip_grad_norm_'s max_norm, when the model clips
    tiny: dict = field(default_factory=dict)  # sizes for the smoke test
    tiny_batch: object = None                  # batch(rng, size) for the smoke test


CASES = [
    Case("cifar_resnet", "CIFAR ResNet-20 16/32/64, b32 32x32, Adam",
         _models.cifar_resnet, _images((3, 32, 32)), 32, _adam(1e-3),
         tiny=dict(widths=(4, 8, 8), blocks=1), tiny_batch=_images((3, 8, 8))),
    Case("resnet18", "ResNet-18, b8 224x224, SGD+momentum",
         _models.resnet18, _images((3, 224, 224), classes=1000), 8, _sgd(0.1, 0.9, 1e-4),
         tiny=dict(widths=(4, 4, 8, 8), classes=10), tiny_batch=_images((3, 32, 32))),
    Case("gpt", "GPT 4x128 4 heads, T64 b16 V1000, AdamW",
         _models.gpt, _tokens(1000, 64), 16,
         lambda lib, params: lib.optim.AdamW(params, lr=3e-4, weight_decay=0.1),
         tiny=dict(vocab=50, width=16, layers=1, heads=2, block=8),
         tiny_batch=_tokens(50, 8)),
    Case("lstm_lm", "LSTM LM V5000 E128 H512, T30 b20, SGD+clip",
         _models.lstm_lm, _tokens(5000, 30, seq_first=True), 20, _sgd(1.0), clip=0.25,
         tiny=dict(vocab=50, embed=8, hidden=16), tiny_batch=_tokens(50, 5, seq_first=True)),
    Case("gru_seq2seq", "GRU seq2seq+attn V1000 H256, T20 b32, Adam",
         _models.gru_seq2seq, _tokens(1000, 20, pair=True), 32, _adam(1e-3),
         tiny=dict(vocab=50, hidden=16), tiny_batch=_tokens(50, 5, pair=True)),
    Case("mlp", "MLP 784-512-512-10, b128, SGD+momentum (bench_train)",
         lambda lib: mlp(lib), _images((784,)), 128, _sgd(0.01, 0.9)),
    Case("cnn", "CNN 2x(conv+pool), b32 28x28, SGD+momentum (bench_train)",
         lambda lib: cnn(lib), _images((1, 28, 28)), 32, _sgd(0.01, 0.9)),
    Case("digits", "DigitsCNN (train_digits.py), b32 8x8, Adam",
         lambda lib: digits_cnn(lib), _images((1, 8, 8)), 32, _adam(2e-3)),
]


def make_step(lib, case, model, inputs, target):
    """One training step of `model` on tensors of `lib`; returns the loss as a float."""
    inputs = tuple(lib.tensor(x) for x in inputs)
    target = lib.tensor(target)
    optimizer = case.optimizer(lib, model.parameters())
    model.train()

    def step():
        optimizer.zero_grad()
        loss = case.loss(lib, model(*inputs), target)
        loss.backward()
        if case.clip is not None:
            lib.nn.utils.clip_grad_norm_(model.parameters(), case.clip)
        optimizer.step()
        return loss.item()
    return step


def paired_steps(case, seed=0, tiny=False):
    """(ember's step, PyTorch's step or None): same class body, weights and batch. `tiny`
    builds the smoke test's sizes (batch of 2)."""
    rng = np.random.default_rng(seed)
    batch = case.tiny_batch or case.batch if tiny else case.batch
    inputs, target = batch(rng, 2 if tiny else case.batch_size)
    sizes = case.tiny if tiny else {}
    ember.manual_seed(seed)
    mine = case.build(ember, **sizes)
    theirs = None
    if torch is not None:
        torch.manual_seed(seed)
        theirs = case.build(torch, **sizes)
        state = {k: ember.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
        mine.load_state_dict(state)
        theirs = make_step(torch, case, theirs, inputs, target)
    return make_step(ember, case, mine, inputs, target), theirs


def blas_threads():
    """The thread count NumPy's OpenBLAS is using (asked of the loaded library), or '?'."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    for path in paths:
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                     "openblas_get_num_threads"):
            if hasattr(lib, name):
                return str(getattr(lib, name)())
    return "?"


def run_table(cases, rounds, quick):
    torch_threads = torch.get_num_threads() if torch is not None else "-"
    env = ", ".join(f"{k}={os.environ.get(k, 'unset')}" for k in BLAS_ENV)
    mkl, onednn = ember.backends.mkl.is_available(), ember.backends.mkldnn.is_available()
    # (asked after MKL has loaded: on OpenMP's threads, it leaves NumPy's BLAS one; _gemm)
    print(f"threads: torch {torch_threads}, NumPy BLAS {blas_threads()} ({env}); ember's "
          f"products through MKL: {mkl} (on OpenMP threads: {ember._gemm.threaded()}); "
          f"convolutions through oneDNN: {onednn}")
    print(f"{'model':58} {'ember ms':>9} {'torch ms':>9} {'ratio':>6}  first loss ember/torch")
    for case in cases:
        mine, theirs = paired_steps(case)
        loss_mine = mine()
        loss_theirs = theirs() if theirs is not None else float("nan")
        # each timed block should last ~0.3 s, so short steps are not swamped by the timer
        number = 1 if quick else max(1, round(0.3 / per_call(theirs or mine, 2)))
        t_mine, t_theirs, ratio = compare(mine, theirs, number, rounds, warmup=1 if quick else 2,
                                          settle=0 if quick else SETTLE_S)
        t_theirs = float("nan") if t_theirs is None else t_theirs
        ratio = float("nan") if ratio is None else ratio
        print(f"{case.label:58} {t_mine * 1e3:9.2f} {t_theirs * 1e3:9.2f} {ratio:6.2f}  "
              f"{loss_mine:.6f} / {loss_theirs:.6f}", flush=True)


def run_profile(cases, steps, top=45):
    import cProfile
    import pstats
    for case in cases:
        mine, _ = paired_steps(case)
        for _ in range(2):
            mine()
        profiler = cProfile.Profile()
        t0 = time.perf_counter()
        profiler.runcall(lambda: [mine() for _ in range(steps)])
        step_s = (time.perf_counter() - t0) / steps
        print(f"\n== {case.label}: ember {step_s * 1e3:.1f} ms/step under cProfile "
              f"({steps} steps)")
        stats = pstats.Stats(profiler)
        rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][3])
        print(f"{'cum ms/step':>11} {'%':>5} {'self ms':>8} {'calls/step':>10}  function")
        for (file, line, func), (_, calls, self_s, cum_s, _) in rows[:top]:
            where = f"{os.path.relpath(file, os.path.dirname(HERE))}:{line}" \
                if file.startswith("/") else file
            print(f"{cum_s / steps * 1e3:11.2f} {100 * cum_s / steps / step_s:5.1f} "
                  f"{self_s / steps * 1e3:8.2f} {calls / steps:10.1f}  {func} ({where})")


def reexec_with_blas_threads(threads):
    """Re-run this process with NumPy's BLAS thread count set in the environment (it is read
    only when the library loads), unless it is set already."""
    env = dict(os.environ)
    if all(env.get(k) == str(threads) for k in BLAS_ENV):
        return
    env.update({k: str(threads) for k in BLAS_ENV})
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(c.name for c in CASES),
                        help="comma-separated, of: " + ", ".join(c.name for c in CASES))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 rounds of one step: a smoke run")
    parser.add_argument("--threads", type=int)
    parser.add_argument("--both-threads", action="store_true")
    parser.add_argument("--profile", type=int, nargs="?", const=10, metavar="STEPS")
    args = parser.parse_args(argv)
    names = args.models.split(",")
    unknown = sorted(set(names) - {c.name for c in CASES})
    if unknown:
        parser.error(f"unknown model(s) {unknown}")
    if args.both_threads:
        rest = [a for a in sys.argv[1:] if a != "--both-threads"]
        default_env = {k: v for k, v in os.environ.items() if k not in BLAS_ENV}
        for threads, env in (("1", None), (None, default_env)):
            extra = ["--threads", threads] if threads else []
            print(f"\n$ {' '.join(['bench_models.py'] + rest + extra)}", flush=True)
            subprocess.run([sys.executable, os.path.abspath(__file__)] + rest + extra,
                           env=env, check=True)
        return
    if args.threads is not None:
        reexec_with_blas_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    cases = [c for c in CASES if c.name in names]
    if args.profile:
        run_profile(cases, args.profile)
    else:
        run_table(cases, 3 if args.quick else args.rounds, args.quick)


if __name__ == "__main__":
    main()
