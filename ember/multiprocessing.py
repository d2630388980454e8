"""`ember.multiprocessing`: Python's multiprocessing with PyTorch's `spawn` helper. Tensors
pickle by value (their host array), so they cross process boundaries as copies."""
import contextlib
import importlib.machinery
import multiprocessing as _mp
import os
import sys
from multiprocessing import *  # noqa: F401,F403

__all__ = ["spawn", "start_processes", "ProcessContext", "set_start_method", "get_start_method",
           "get_context", "Process", "Queue", "Pool", "set_sharing_strategy",
           "get_sharing_strategy"]

_strategy = ["file_system"]


def set_sharing_strategy(strategy):
    _strategy[0] = strategy


def get_sharing_strategy():
    return _strategy[0]


class ProcessContext:
    def __init__(self, processes):
        self.processes = processes

    def join(self, timeout=None):
        for p in self.processes:
            p.join(timeout)
        failed = [p for p in self.processes if p.exitcode not in (0, None)]
        if failed:
            p = failed[0]
            raise RuntimeError(f"process {self.processes.index(p)} terminated with exit code "
                               f"{p.exitcode}")
        return all(p.exitcode is not None for p in self.processes)

    def pids(self):
        return [p.pid for p in self.processes]


@contextlib.contextmanager
def _compat_children(start_method):
    """A spawned child re-runs the parent's main script before it calls `fn`; when that
    script runs under `ember.compat`, the child must install the redirect first, or its
    `import torch` finds PyTorch (or nothing). Multiprocessing starts a child's main by module
    name when the main module has a spec: name one that installs compat, then runs the
    script."""
    compat = sys.modules.get("ember.compat")
    main = sys.modules.get("__main__")
    if (start_method != "spawn" or compat is None or compat._finder not in sys.meta_path
            or getattr(main, "__spec__", None) is not None
            or not getattr(main, "__file__", None)):
        yield
        return
    previous = os.environ.get("EMBER_COMPAT_SCRIPT")
    os.environ["EMBER_COMPAT_SCRIPT"] = os.path.abspath(main.__file__)
    main.__spec__ = importlib.machinery.ModuleSpec("ember.compat._mp_main", None)
    try:
        yield
    finally:
        main.__spec__ = None
        if previous is None:
            del os.environ["EMBER_COMPAT_SCRIPT"]
        else:
            os.environ["EMBER_COMPAT_SCRIPT"] = previous


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    ctx = _mp.get_context(start_method)
    procs = [ctx.Process(target=fn, args=(i, *args), daemon=daemon) for i in range(nprocs)]
    with _compat_children(start_method):
        for p in procs:
            p.start()
    context = ProcessContext(procs)
    if not join:
        return context
    context.join()
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    return start_processes(fn, args, nprocs, join, daemon, start_method)
