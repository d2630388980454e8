"""What every backend's process group shares: `Work` (a pending operation), the worker
thread that runs a group's collectives one at a time in call order (so `async_op=True` can
return before the operation finishes), and Python objects sent as pickled bytes (the
`*_object` collectives pickle, as PyTorch's do: the user asked for objects)."""
import pickle
import queue
import threading

import numpy as np

__all__ = ["ProcessGroup", "Work"]


class Work:
    """A pending operation: `wait()` blocks until it finished (raising its error)."""

    def __init__(self, fn=None):
        self._fn, self._done = fn, threading.Event()
        self._exception, self._result, self._source = None, [], -1
        self._futures, self._lock = [], threading.Lock()

    def _run(self):
        try:
            out = self._fn()
            if out is not None:
                self._result, self._source = out
        except BaseException as e:
            self._exception = e
        with self._lock:
            self._done.set()
            futures, self._futures = self._futures, []
        for future in futures:
            self._complete(future)

    def _complete(self, future):
        if self._exception is not None:
            future.set_exception(self._exception)
        else:
            future.set_result(list(self._result))

    def get_future(self):
        """A `torch.futures.Future` of the output tensors, set when the work finishes (its
        callbacks run on the thread that finished it, as PyTorch's run on its own)."""
        from ..futures import Future
        future = Future()
        with self._lock:
            if not self._done.is_set():
                self._futures.append(future)
                return future
        self._complete(future)
        return future

    def wait(self, timeout=None):
        seconds = None if timeout is None else getattr(timeout, "total_seconds", lambda: timeout)()
        if not self._done.wait(seconds):
            raise RuntimeError("Operation timed out!")
        if self._exception is not None:
            raise self._exception
        return True

    def is_completed(self):
        return self._done.is_set()

    def is_success(self):
        return self._done.is_set() and self._exception is None

    def exception(self):
        return self._exception

    def result(self):
        self.wait()
        return list(self._result)

    def source_rank(self):
        self.wait()
        return self._source

    synchronize = wait


# collectives that are one operation on the wire under two names
_SAME_ON_THE_WIRE = {"all_gather_into_tensor": "all_gather",
                     "reduce_scatter_tensor": "reduce_scatter"}


def collective_name(fn):
    """The collective `fn` runs: the public function it was defined in (`all_reduce` for
    all_reduce's inner function), as every rank names it."""
    name = fn.__qualname__.split(".")[0]
    return _SAME_ON_THE_WIRE.get(name, name)


class ProcessGroup:
    """The ranks `ranks` (global ranks, in group order) of a job. Backends add the
    collectives: exchange, gather, scatter, broadcast, all_reduce, reduce, reduce_scatter,
    send_array/recv_array, and `subgroup`."""

    timeout = None  # seconds a blocking call waits for its Work (None: the backend bounds it)

    def __init__(self, ranks, group_id, global_rank, backend):
        self.ranks, self.group_id, self.backend = list(ranks), group_id, backend
        self._rank = self.ranks.index(global_rank)
        self._seq, self._pending = 0, 0
        self._pending_lock = threading.Lock()
        self._jobs = queue.Queue()
        self._worker = threading.Thread(target=self._loop, daemon=True)
        self._worker.start()

    def rank(self):
        return self._rank

    def size(self):
        return len(self.ranks)

    def _peers(self):
        return [r for r in range(self.size()) if r != self._rank]

    def _loop(self):
        while True:
            work = self._jobs.get()
            if work is None:
                return
            work._run()
            with self._pending_lock:
                self._pending -= 1

    def submit(self, fn, wait=False):
        """`fn(key)` under the next sequence number, as a Work. The key is (group id,
        collective name, seq): a backend can tell a peer that runs another collective at the
        same seq (ranks that called mismatched collectives) from one that is just late. A
        call the caller will `wait` for runs at once in the caller's thread when nothing of
        this group is pending (no handoff to the worker thread); otherwise it queues behind
        what is."""
        self._seq += 1
        key = (self.group_id, collective_name(fn), self._seq)
        work = Work(lambda: self._run_or_tell(fn, key))
        with self._pending_lock:
            inline = wait and self._pending == 0
            if not inline:
                self._pending += 1
        if inline:
            work._run()
        else:
            self._jobs.put(work)
        return work

    def _run_or_tell(self, fn, key):
        """`fn(key)`; when it raises, the other ranks of the group are told first, so that
        none of them waits out its timeout for a message this rank will now never send."""
        try:
            return fn(key)
        except Exception as e:
            self.tell_failed(key, e)
            raise

    def tell_failed(self, key, error):
        """Let the group's other ranks know that collective `key` raised `error` here
        (a backend whose peers can be told overrides this)."""

    def submit_keyed(self, key, fn, inline):
        """Point-to-point work under a fixed key: a send runs at once when `inline` (the
        backend never blocks on it), a receive on a thread of its own (it may wait on a later
        send)."""
        work = Work(lambda: fn(key))
        if inline:
            work._run()
        else:
            threading.Thread(target=work._run, daemon=True).start()
        return work

    def shutdown(self):
        self._jobs.put(None)

    def send_object(self, dst, key, obj):
        self.send_array(dst, key, np.frombuffer(pickle.dumps(obj), np.uint8))

    def recv_object(self, src, key):
        return pickle.loads(self.recv_array(src, key)[1].tobytes())
