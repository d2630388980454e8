"""`DataLoader`: batches from a dataset, in this process or in worker processes.

Workers get (task id, indices) on their own queue and put (task id, batch) on a shared one;
the loader hands batches out in task order. A worker's exception comes back with its
traceback and is raised in the main process; a worker that dies is reported, never waited
on forever. Each worker is seeded base_seed + worker_id (ember, `random` and NumPy), as in
PyTorch, with base_seed drawn from the loader's generator once per iterator.
"""
import itertools
import multiprocessing
import queue
import random
import sys
import traceback

from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from ._collate import default_collate, default_convert

__all__ = ["DataLoader", "get_worker_info", "WorkerInfo"]

_POLL_SECONDS = 1.0  # how often a waiting loader checks that its workers are alive


class WorkerInfo:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __repr__(self):
        fields = ", ".join(f"{k}={v}" for k, v in self.__dict__.items() if k != "dataset")
        return f"WorkerInfo({fields})"


_worker_info = None


def get_worker_info():
    """In a worker process: its id, the number of workers, its seed and dataset copy."""
    return _worker_info


class _ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.message = f"Caught {exc_info[0].__name__} {where}.\nOriginal " + \
            "".join(traceback.format_exception(*exc_info))

    def reraise(self):
        try:
            error = self.exc_type(self.message)
        except Exception:
            error = RuntimeError(self.message)
        raise error


class _IterableExhausted:
    pass


def _worker_loop(dataset, index_queue, result_queue, collate_fn, auto_collation, drop_last,
                 seed, init_fn, worker_id, num_workers, is_iterable):
    global _worker_info
    import numpy as np
    from ... import random as ember_random
    random.seed(seed)
    ember_random.manual_seed(seed)
    np.random.seed(seed % (2 ** 32))
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    try:
        if init_fn is not None:
            init_fn(worker_id)
        iterator = iter(dataset) if is_iterable else None
    except Exception:
        result_queue.put((None, _ExceptionWrapper(sys.exc_info(),
                                                  f"in DataLoader worker process {worker_id}")))
        return
    while True:
        task = index_queue.get()
        if task is None:
            return
        task_id, indices = task
        try:
            data = _fetch(dataset, iterator, indices, collate_fn, auto_collation, drop_last)
        except StopIteration:
            data = _IterableExhausted()
        except Exception:
            data = _ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
        result_queue.put((task_id, data))


def _fetch(dataset, iterator, indices, collate_fn, auto_collation, drop_last):
    """One batch (or one sample without auto-collation); `iterator` for iterable datasets."""
    if iterator is not None:
        if not auto_collation:
            return collate_fn(next(iterator))
        batch = list(itertools.islice(iterator, indices))
        if not batch or (drop_last and len(batch) < indices):
            raise StopIteration
        return collate_fn(batch)
    if auto_collation:
        getitems = getattr(dataset, "__getitems__", None)
        samples = getitems(indices) if getitems else [dataset[i] for i in indices]
        return collate_fn(samples)
    return collate_fn(dataset[indices])


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset, self.num_workers, self.timeout = dataset, num_workers, timeout
        self.prefetch_factor = 2 if num_workers > 0 and prefetch_factor is None else prefetch_factor
        self.pin_memory, self.pin_memory_device = pin_memory, pin_memory_device
        self.worker_init_fn, self.generator = worker_init_fn, generator
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 "and batch_sampler options")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._is_iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle \
                else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._is_iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._iterator = None

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None or (self._is_iterable and
                                                  self.batch_size is not None)

    def _tasks(self):
        """What each fetch gets: a list of indices, an index, or (iterable) a batch size."""
        if self._is_iterable:
            return itertools.repeat(self.batch_size if self._auto_collation else None)
        return iter(self.batch_sampler if self._auto_collation else self.sampler)

    def __iter__(self):
        if self.num_workers == 0:
            return self._single_process()
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator._reset()
            return self._iterator
        return _MultiProcessIter(self)

    def _single_process(self):
        iterator = iter(self.dataset) if self._is_iterable else None
        for task in self._tasks():
            try:
                yield _fetch(self.dataset, iterator, task, self.collate_fn, self._auto_collation,
                             self.drop_last)
            except StopIteration:
                return

    def __len__(self):
        if self._is_iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self.batch_sampler if self._auto_collation else self.sampler)


class _MultiProcessIter:
    def __init__(self, loader):
        self.loader = loader
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context()
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self._result_queue = ctx.Queue()
        self._index_queues, self._workers = [], []
        from ...ops.creation import empty
        from ... import dtypes
        base_seed = int(empty((), dtype=dtypes.int64).random_(generator=loader.generator).item())
        for wid in range(loader.num_workers):
            iq = ctx.Queue()
            w = ctx.Process(target=_worker_loop, daemon=True,
                            args=(loader.dataset, iq, self._result_queue, loader.collate_fn,
                                  loader._auto_collation, loader.drop_last, base_seed + wid,
                                  loader.worker_init_fn, wid, loader.num_workers,
                                  loader._is_iterable))
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        self._shutdown = False
        self._reset(first=True)

    def _reset(self, first=False):
        self._tasks = self.loader._tasks()
        self._sent = self._next_task = 0
        self._buffer = {}
        self._task_worker = {}
        self._active = set(range(len(self._workers)))  # iterable datasets: not yet exhausted
        self._worker_cycle = itertools.cycle(range(len(self._workers)))
        if not first and self.loader._is_iterable:
            raise RuntimeError("persistent workers over an IterableDataset cannot restart its "
                               "iteration")
        for _ in range(self.loader.prefetch_factor * len(self._workers)):
            self._send()

    def _send(self):
        if not self._active:
            return
        try:
            task = next(self._tasks)
        except StopIteration:
            return
        for _ in range(len(self._workers)):
            wid = next(self._worker_cycle)
            if wid in self._active:
                break
        self._index_queues[wid].put((self._sent, task))
        self._task_worker[self._sent] = wid
        self._sent += 1

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            if self._next_task >= self._sent:
                if not self.loader.persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if self._next_task in self._buffer:
                data = self._buffer.pop(self._next_task)
                wid = self._task_worker.pop(self._next_task)
                self._next_task += 1
                if isinstance(data, _IterableExhausted):
                    self._active.discard(wid)
                    continue
                self._send()
                if isinstance(data, _ExceptionWrapper):
                    self._shutdown_workers()
                    data.reraise()
                return data
            task_id, data = self._get()
            if task_id is None:  # a worker failed before taking any task
                self._shutdown_workers()
                data.reraise()
            self._buffer[task_id] = data

    def _get(self):
        waited = 0.0
        while True:
            try:
                return self._result_queue.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                waited += _POLL_SECONDS
                dead = [w for w in self._workers if not w.is_alive()]
                if dead:
                    pids = ", ".join(str(w.pid) for w in dead)
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly")
                if self.loader.timeout and waited >= self.loader.timeout:
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader timed out after {self.loader.timeout} "
                                       "seconds")

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        for iq in self._index_queues:
            try:
                iq.put(None)
            except Exception:
                pass
        for w in self._workers:
            w.join(timeout=5)
            if w.is_alive():
                w.terminate()

    def __len__(self):
        return len(self.loader)

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:
            pass
