"""`spawn` / `start_processes`: run `fn(i, *args)` in `nprocs` processes, and PyTorch's
errors when one fails: the child's exception comes back with its traceback
(ProcessRaisedException), a child that exits nonzero or dies by a signal is named
(ProcessExitedException), and the others are terminated."""
import contextlib
import multiprocessing
import os
import signal
import sys
import tempfile
import time
import warnings

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException",
           "ProcessRaisedException", "spawn", "SpawnContext", "start_processes"]


class ProcessException(Exception):
    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A process failed because `fn` raised: the message holds the child's traceback."""


class ProcessExitedException(ProcessException):
    """A process exited with a nonzero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return (type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                             self.signal_name))


def _wrap(fn, i, args, error_file):
    """The child's target: run `fn`, and on an exception leave its traceback in
    `error_file` for the parent and exit 1."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent interrupted us while stopping the others
    except Exception:
        import traceback
        # plain text, never a pickle: the parent reads a file in the temp folder
        with open(error_file, "w", encoding="utf-8") as fh:
            fh.write(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_files):
        self.processes = processes
        self.error_files = error_files

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """Wait for the processes; True once all ended well, False if some still run after
        `timeout`. When one fails, the others are terminated (after `grace_period` seconds,
        killed) and its error is raised."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            # one snapshot of the exit codes: read twice, a child ending in between could be
            # missed as failed yet counted as ended, and its error lost
            codes = [p.exitcode for p in self.processes]
            failed = [i for i, code in enumerate(codes) if code not in (None, 0)]
            if failed or all(code is not None for code in codes):
                break
            if deadline is not None and time.monotonic() >= deadline:
                return False
            multiprocessing.connection.wait([p.sentinel for p in self.processes
                                             if p.exitcode is None], timeout=0.1)
        if not failed:
            self._cleanup()
            return True
        index = failed[0]
        self._stop_others(grace_period)
        process = self.processes[index]
        error_file = self.error_files[index]
        if os.path.exists(error_file) and os.path.getsize(error_file):
            with open(error_file, encoding="utf-8", errors="replace") as fh:
                trace = fh.read()
            self._cleanup()
            raise ProcessRaisedException(
                f"\n\n-- Process {index} terminated with the following error:\n{trace}",
                index, process.pid)
        self._cleanup()
        if process.exitcode < 0:
            name = signal.Signals(-process.exitcode).name
            raise ProcessExitedException(f"process {index} terminated with signal {name}",
                                         index, process.pid, process.exitcode, name)
        raise ProcessExitedException(
            f"process {index} terminated with exit code {process.exitcode}", index,
            process.pid, process.exitcode)

    def _stop_others(self, grace_period):
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        end = time.monotonic() + (grace_period or 0)
        for p in self.processes:
            p.join(max(0.0, end - time.monotonic()) if grace_period else None)
            if p.is_alive():
                p.kill()
                p.join()

    def _cleanup(self):
        for path in self.error_files:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


class SpawnContext(ProcessContext):
    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    ctx = multiprocessing.get_context(start_method)
    error_files, processes = [], []
    for i in range(nprocs):
        handle, path = tempfile.mkstemp(prefix="ember-spawn-error-")
        os.close(handle)
        os.unlink(path)  # the child creates it only when it has an error to report
        error_files.append(path)
        processes.append(ctx.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon))
    for p in processes:
        p.start()
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run `fn(i, *args)` for i in range(nprocs) in processes started with `start_method`."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
