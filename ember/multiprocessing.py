"""`ember.multiprocessing`: Python's multiprocessing with PyTorch's `spawn` helper. Tensors
pickle by value (their host array), so they cross process boundaries as copies."""
import multiprocessing as _mp
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


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    ctx = _mp.get_context(start_method)
    procs = [ctx.Process(target=fn, args=(i, *args), daemon=daemon) for i in range(nprocs)]
    for p in procs:
        p.start()
    context = ProcessContext(procs)
    if not join:
        return context
    context.join()
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    return start_processes(fn, args, nprocs, join, daemon, start_method)
