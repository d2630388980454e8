"""Runs fuzz cases (fuzz_cases.py) through `ember.load` in worker processes, each under a
memory cap (RLIMIT_AS) and a per-case time limit, and sorts every outcome:

- original: the file loaded the original values;
- as the file says: it loaded other values, exactly those the reference decoder
  (fuzz_reference.py) reads from the damaged file (a flipped bit in a tensor's bytes);
- clean error: one of PyTorch's exception types, raised by ember, not by NumPy;
- anything else: a wrong value, another exception type (MemoryError, RecursionError, a NumPy
  error), a crash, a hang, or a hostile global that ran. There must be none.

A worker that dies or stops answering is replaced, and the case it was on counts as
"anything else" (a crash or a hang).
"""
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLEAN = (RuntimeError, pickle.UnpicklingError, EOFError, ValueError, TypeError)


class _CaseTimeout(BaseException):
    pass


def _cap_memory(extra_mb):
    """Address space capped at what the worker uses now plus `extra_mb`."""
    import resource
    try:
        with open("/proc/self/status") as f:
            vm = next(int(line.split()[1]) for line in f if line.startswith("VmSize:")) * 1024
    except OSError:  # no /proc (not Linux): the peak resident size is a lower bound
        vm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    limit = vm + extra_mb * (1 << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _raised_by_ember(exc):
    """The innermost frame of the traceback is not in a third-party package (a NumPy error
    leaking out) and the message says something."""
    tb, last = exc.__traceback__, None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return bool(str(exc)) and (last is None or "site-packages" not in last)


def classify(blob, original, marker):
    """(outcome, detail) of loading one file."""
    import io
    import ember
    from .fuzz_reference import Invalid, Unmodeled, decode, fingerprint, normalize
    try:
        loaded = ember.load(io.BytesIO(blob))
    except _CaseTimeout:
        raise
    except BaseException as exc:  # noqa: BLE001 (the point: every outcome is sorted)
        ran = os.path.exists(marker)
        if ran:
            return "bad", f"hostile code ran; then {type(exc).__name__}"
        if type(exc) in CLEAN and _raised_by_ember(exc):
            return "error", f"{type(exc).__name__}: {str(exc)[:120]}"
        return "bad", f"{type(exc).__name__} ({exc!s:.200})"
    if os.path.exists(marker):
        return "bad", "hostile code ran"
    try:
        got = fingerprint(normalize(loaded))
    except RecursionError:  # nested deeper than Python's limit: compared by the reference
        got = "too deep"
    if original is not None and got == fingerprint(original):
        return "original", ""
    try:
        said = decode(blob)
        said = fingerprint(said)
    except (Invalid, Unmodeled) as exc:
        return "bad", f"loaded a value where the reference says {type(exc).__name__}: {exc}"
    except RecursionError:
        said = "too deep"
    if got == said:
        return "file", ""
    return "bad", f"loaded {str(normalize(loaded))[:200]}, the file says something else"


def _torch_outcome(blob):
    """Whether PyTorch (weights-only) loads the file: for the on-demand comparison."""
    import io
    import torch
    try:
        torch.load(io.BytesIO(blob), weights_only=True)
    except _CaseTimeout:
        raise
    except BaseException:  # noqa: BLE001
        return "refused"
    return "loaded"


def worker(seed, start, count, marker_dir, per_case_s, memory_mb, against_torch=False):
    """Runs cases start..start+count-1 and prints one JSON line per case (flushed)."""
    import signal
    from .fuzz_cases import bases, case
    bases()  # made before the cap
    if against_torch:
        import torch  # noqa: F401 (imported before the cap)
    _cap_memory(memory_mb)

    def timeout(signum, frame):
        raise _CaseTimeout()
    signal.signal(signal.SIGALRM, timeout)
    marker = os.path.join(marker_dir, "pwned")
    for i in range(start, start + count):
        print(json.dumps({"i": i, "start": True}), flush=True)
        label, blob, original = case(seed, i, marker)
        began = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, per_case_s)
        try:
            outcome, detail = classify(blob, original, marker)
        except _CaseTimeout:
            outcome, detail = "bad", f"hang: over {per_case_s} s"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if os.path.exists(marker):
            os.unlink(marker)
        line = {"i": i, "label": label, "outcome": outcome, "detail": detail,
                "s": round(time.perf_counter() - began, 3)}
        if against_torch:
            signal.setitimer(signal.ITIMER_REAL, per_case_s)
            try:
                line["torch"] = _torch_outcome(blob)
            except _CaseTimeout:
                line["torch"] = "hang"
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            if os.path.exists(marker):
                os.unlink(marker)
        print(json.dumps(line), flush=True)


def run(seed, count, per_case_s=5.0, memory_mb=1024, start=0, progress=None,
        against_torch=False):
    """Runs `count` cases in a worker process (replaced if it dies or hangs): a list of
    {i, label, outcome, detail} dicts."""
    results, i, end = [], start, start + count
    with tempfile.TemporaryDirectory() as marker_dir:
        while i < end:
            results_before = len(results)
            current = _run_worker(seed, i, end - i, marker_dir, per_case_s, memory_mb, results,
                                  progress, against_torch)
            if current is not None:  # the worker died or hung on this case
                i = current + 1
            else:
                i = end
            if len(results) == results_before and current is None:
                break
    return results


def _run_worker(seed, start, count, marker_dir, per_case_s, memory_mb, results, progress,
                against_torch=False):
    code = ("import sys; from tests.serialization.fuzz_runner import worker; "
            f"worker({seed}, {start}, {count}, {marker_dir!r}, {per_case_s}, {memory_mb}, "
            f"{against_torch})")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    errors = tempfile.TemporaryFile("w+")  # (a pipe could fill and stall the worker)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=errors, text=True)

    def stderr_tail():
        errors.seek(0)
        return errors.read()[-400:]

    import selectors
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    current, deadline = None, time.monotonic() + 120  # the first case waits for the imports
    try:
        while True:
            if not sel.select(timeout=max(deadline - time.monotonic(), 0)):
                proc.kill()
                proc.wait()
                if current is None:
                    raise RuntimeError("fuzz worker did not start: " + stderr_tail())
                results.append({"i": current, "label": "?", "outcome": "bad",
                                "detail": "hang: the worker stopped answering"})
                return current
            line = proc.stdout.readline()
            if not line:
                rc = proc.wait()
                if current is not None:
                    results.append({"i": current, "label": "?", "outcome": "bad",
                                    "detail": f"crash: worker exit status {rc} "
                                              f"{stderr_tail()}"})
                    return current
                if rc:
                    raise RuntimeError(f"fuzz worker failed ({rc}): {stderr_tail()}")
                return None
            msg = json.loads(line)
            if msg.get("start"):
                current, deadline = msg["i"], time.monotonic() + per_case_s * 3 + 30
                continue
            current = None
            results.append(msg)
            if progress is not None:
                progress(msg)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        errors.close()


def summary(results):
    counts = {"original": 0, "file": 0, "error": 0, "bad": 0}
    for r in results:
        counts[r["outcome"]] += 1
    return counts
