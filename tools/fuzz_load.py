"""Maintenance script (not part of ember, never imported by it): the checkpoint fuzz test at
scale. Runs N malformed checkpoints (tests/serialization/fuzz_cases.py: damaged ember.save
outputs, hostile pickles, zip and pickle bombs) through `ember.load` in worker processes under
a memory cap and a per-case time limit, and prints the figures: files tried, loaded with their
original values, loaded with the values the damaged file itself says (checked by the reference
decoder), clean errors, and anything else (a wrong value, a crash, a hang, a MemoryError, a
NumPy error, code run by the file), which must be 0.

Run from the repository root:
    python tools/fuzz_load.py --cases 10000 --seed 1 --workers 2
With --against-torch (PyTorch installed) each file also goes to torch.load(weights_only=True),
and the figures say where the two disagree.
"""
import argparse
import collections
import pathlib
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.serialization.fuzz_runner import run, summary  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=int, default=0, help="the first case's index")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--per-case-s", type=float, default=10.0)
    parser.add_argument("--memory-mb", type=int, default=1024,
                        help="address space a worker may add to what it has after imports")
    parser.add_argument("--show", type=int, default=30, help="failures to list")
    parser.add_argument("--against-torch", action="store_true",
                        help="also load each file with PyTorch (weights-only) and compare")
    args = parser.parse_args()

    slices, step = [], -(-args.cases // args.workers)
    for w in range(args.workers):
        first = args.start + w * step
        count = min(step, args.start + args.cases - first)
        if count > 0:
            slices.append((first, count))
    results, done, lock = [], [0], threading.Lock()
    began = time.monotonic()

    def progress(msg):
        with lock:
            done[0] += 1
            if done[0] % 1000 == 0:
                print(f"  {done[0]} cases, {time.monotonic() - began:.0f} s", flush=True)

    def work(first, count):
        out = run(args.seed, count, per_case_s=args.per_case_s, memory_mb=args.memory_mb,
                  start=first, progress=progress, against_torch=args.against_torch)
        with lock:
            results.extend(out)
    threads = [threading.Thread(target=work, args=s) for s in slices]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - began

    counts = summary(results)
    print(f"seed {args.seed}, cases {args.start}..{args.start + args.cases - 1}, "
          f"{args.workers} workers, {elapsed:.0f} s")
    print(f"files tried:                          {len(results)}")
    print(f"loaded, original values:              {counts['original']}")
    print(f"loaded, the values the file says:     {counts['file']}")
    print(f"clean errors (PyTorch's types):       {counts['error']}")
    print(f"anything else (must be 0):            {counts['bad']}")
    kinds = collections.defaultdict(collections.Counter)
    errors = collections.Counter()
    for r in results:
        kinds[r["label"].split()[-1]][r["outcome"]] += 1
        if r["outcome"] == "error":
            errors[r["detail"].split(":")[0]] += 1
    print("by damage:  " + "; ".join(f"{k} {dict(v)}" for k, v in sorted(kinds.items())))
    print("error types: " + ", ".join(f"{k} {v}" for k, v in errors.most_common()))
    if args.against_torch:
        pairs = collections.Counter((r["outcome"], r.get("torch")) for r in results)
        print("ember loaded, PyTorch refused:        "
              f"{pairs['original', 'refused'] + pairs['file', 'refused']}")
        print(f"ember refused, PyTorch loaded:        {pairs['error', 'loaded']}")
        print(f"both loaded: {pairs['original', 'loaded'] + pairs['file', 'loaded']}, both "
              f"refused: {pairs['error', 'refused']}, PyTorch hung: "
              f"{sum(v for (o, t), v in pairs.items() if t == 'hang')}")
    slow = sorted((r for r in results if "s" in r), key=lambda r: -r["s"])[:3]
    print("slowest: " + ", ".join(f"#{r['i']} {r['label']} {r['s']} s" for r in slow))
    bad = sorted((r for r in results if r["outcome"] == "bad"), key=lambda r: r["i"])
    for r in bad[:args.show]:
        print(f"  #{r['i']} {r['label']}: {r['detail']}")
    if len(results) != args.cases:
        print(f"only {len(results)} of {args.cases} cases ran")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
