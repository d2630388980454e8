"""`DataLoader`: batches from a dataset, in this process or in worker processes.

This follows PyTorch's design. The loader iterates an index sampler (a `BatchSampler` when
auto-batching); each index (or list of indices) is a task. With `num_workers > 0` each
worker process has its own index queue and all share one result queue; tasks are handed out
round-robin, at most `prefetch_factor * num_workers` outstanding, and results are returned in
task order (or as they come with `in_order=False`). A worker's exception comes back wrapped
with its traceback and is raised in the main process with the original type; a worker that
dies is reported as a RuntimeError (the loader polls its workers while waiting), never waited
on forever. Each iterator draws `base_seed` from the loader's generator (or the global one),
also with `num_workers=0`; worker `i` seeds `random` and ember with `base_seed + i` and NumPy
with PyTorch's `_generate_state(base_seed, i)`. Persistent workers survive across epochs: a
new epoch sends each a resume marker and discards whatever the last epoch left unread.
"""
import functools
import itertools
import multiprocessing as python_multiprocessing
import os
import queue
import warnings

from . import graph_settings
from .datapipes.datapipe import (IterDataPipe, MapDataPipe, _IterDataPipeSerializationWrapper,
                                 _MapDataPipeSerializationWrapper)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from ._collate import default_collate, default_convert
from ._utils import MP_STATUS_CHECK_INTERVAL
from ._utils.fetch import _DatasetKind
from ._utils.worker import (ExceptionWrapper, WorkerInfo, _IterableDatasetStopIteration,
                            _ResumeIteration, _worker_loop, get_worker_info)

__all__ = ["DataLoader", "get_worker_info", "WorkerInfo", "default_collate", "default_convert"]

_POLL_SECONDS = 0.2  # how often a waiting loader checks that its workers are alive


# --------------------------------------------------------------------------- main side

class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: yields None forever (the dataset decides)."""

    def __iter__(self):
        while True:
            yield None


def _cpu_count():
    if hasattr(os, "sched_getaffinity"):
        try:
            return len(os.sched_getaffinity(0))
        except Exception:
            pass
    return os.cpu_count()


def _accelerator_available():
    try:
        from ... import accelerator
        return bool(accelerator.is_available())
    except Exception:
        return False


def _checked_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
    """PyTorch's checks of the worker options, in its order; returns prefetch_factor, 2 by
    default where there are workers."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    elif num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


def _check_iterable_options(shuffle, sampler, batch_sampler):
    """An IterableDataset decides its own order: no shuffle, sampler or batch_sampler."""
    if shuffle not in {False, None}:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                         f"option, but got shuffle={shuffle}")
    elif sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                         f"option, but got sampler={sampler}")
    elif batch_sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                         f"batch_sampler option, but got batch_sampler={batch_sampler}")


def _checked_batching(batch_size, shuffle, sampler, batch_sampler, drop_last):
    """The checks of the sampling and batching options against each other; returns
    batch_size and drop_last (None and False where a batch_sampler makes the batches)."""
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None:
        if batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        batch_size = None
        drop_last = False
    elif batch_size is None:
        if drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
    return batch_size, drop_last


class DataLoader:
    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        prefetch_factor = _checked_worker_options(num_workers, timeout, prefetch_factor,
                                                  persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        # DataPipes travel to workers pickled whole (torch's serialization wrappers), and an
        # IterDataPipe's shuffle is switched on or off by the shuffle argument
        if isinstance(dataset, IterDataPipe):
            dataset = self.dataset = _IterDataPipeSerializationWrapper(dataset)
            if shuffle is not None:
                dataset = self.dataset = graph_settings.apply_shuffle_settings(dataset,
                                                                               shuffle=shuffle)
            shuffle = None
        elif isinstance(dataset, MapDataPipe):
            dataset = self.dataset = _MapDataPipeSerializationWrapper(dataset)
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            _check_iterable_options(shuffle, sampler, batch_sampler)
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map
        batch_size, drop_last = _checked_batching(batch_size, shuffle, sampler, batch_sampler,
                                                  drop_last)

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, str):
                    valid = python_multiprocessing.get_all_start_methods()
                    if multiprocessing_context not in valid:
                        raise ValueError(
                            "multiprocessing_context option should specify a valid start method "
                            f"in {valid!r}, but got "
                            f"multiprocessing_context={multiprocessing_context!r}")
                    multiprocessing_context = python_multiprocessing.get_context(
                        multiprocessing_context)
                if not isinstance(multiprocessing_context,
                                  python_multiprocessing.context.BaseContext):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context object or a "
                        "string specifying the start method, but got "
                        f"multiprocessing_context={multiprocessing_context}")
            else:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}")
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                           "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        if not self.num_workers:
            return
        suggest = _cpu_count()
        if suggest is None or self.num_workers > suggest:
            cpuset_checked = hasattr(os, "sched_getaffinity")
            if suggest is not None:
                note = "" if cpuset_checked else " (`cpuset` is not taken into account)"
                max_msg = ("Our suggested max number of worker in current system is "
                           f"{suggest}{note}, which is smaller than what this DataLoader is "
                           "going to create.")
            else:
                max_msg = ("DataLoader is not able to compute a suggested max number of worker "
                           "in current system.")
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                          f"total. {max_msg} Please be aware that excessive worker creation might "
                          "get DataLoader running slow or even freeze, lower the worker number to "
                          "avoid potential slowness/freeze if necessary.", stacklevel=2)


def _seed_datapipe(datapipe, seed):
    """Every shuffle in the DataPipe seeded from one generator seeded with `seed`."""
    from ...random import Generator
    rng = Generator()
    rng.manual_seed(seed)
    return graph_settings.apply_random_seed(datapipe, rng)


def _sharding_worker_init_fn(worker_init_fn, world_size, rank_id, worker_id):
    """In a worker: shard the DataPipe across all workers of all ranks, then the user's init."""
    info = get_worker_info()
    total_workers = info.num_workers * world_size
    global_worker_id = worker_id * world_size + rank_id
    graph_settings.apply_sharding(info.dataset, total_workers, global_worker_id)
    if worker_init_fn is not None:
        worker_init_fn(worker_id)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        from ...ops.creation import empty
        from ... import dtypes
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        accelerator = _accelerator_available()
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used "
                          f"as the device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                          stacklevel=2)
        if loader.pin_memory and not accelerator:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then "
                          "device pinned memory won't be used.", stacklevel=2)
        # Host memory is never pinned here: the batches are returned as they are.
        self._pin_memory = loader.pin_memory and accelerator
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(empty((), dtype=dtypes.int64)
                              .random_(generator=loader.generator).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        if isinstance(self._dataset, IterDataPipe):
            # one seed per epoch for every shuffle in the pipeline, the same in all workers
            self._shared_seed = int(empty((), dtype=dtypes.int64)
                                    .random_(generator=loader.generator).item())
            self._dataset = _seed_datapipe(self._dataset, self._shared_seed)

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        if self._sampler_iter is None:
            self._reset()
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable
                and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset"
                        " for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration


_python_exiting = False


def _set_python_exiting():
    global _python_exiting
    _python_exiting = True


import atexit  # noqa: E402
atexit.register(_set_python_exiting)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._num_workers <= 0:
            raise AssertionError("num_workers must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = python_multiprocessing.get_context()
        self._worker_init_fn = loader.worker_init_fn
        if isinstance(self._dataset, (IterDataPipe, MapDataPipe)):
            # each worker keeps its shard of the pipeline
            self._worker_init_fn = functools.partial(_sharding_worker_init_fn,
                                                     self._worker_init_fn, 1, 0)
        self._owner_pid = os.getpid()
        self._shutdown = False
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._index_queues, self._workers = [], []
        self._data_queue = self._worker_result_queue
        try:
            for i in range(self._num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()
                w = ctx.Process(
                    target=_worker_loop,
                    args=(self._dataset_kind, self._dataset, index_queue,
                          self._worker_result_queue, self._workers_done_event,
                          self._auto_collation, self._collate_fn, self._drop_last,
                          self._base_seed, self._worker_init_fn, i, self._num_workers,
                          self._persistent_workers))
                w.daemon = True
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
            self._reset(loader, first_iter=True)
        except BaseException:
            self._workers_status = [True] * len(self._workers)
            self._shutdown_workers()
            raise

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the id of the next task to send
        self._rcvd_idx = 0  # the id of the next task to return
        self._task_info = {}  # task id -> (worker id,) or (worker id, data)
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # Persistent workers: everything a worker sent before its resume marker belongs to
            # the previous epoch and is dropped.
            # persistent workers reseed their DataPipes' shuffles for the new epoch, all alike
            seed = None
            if isinstance(self._dataset, IterDataPipe):
                from ...ops.creation import empty
                from ... import dtypes
                seed = int(empty((), dtype=dtypes.int64)
                           .random_(generator=loader.generator).item())
            for idx in range(self._num_workers):
                self._index_queues[idx].put(_ResumeIteration(seed))
            remaining = self._num_workers
            while remaining > 0:
                return_idx, _ = self._get_data()
                if isinstance(return_idx, _ResumeIteration):
                    remaining -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _failed_workers(self):
        failed = []
        for worker_id, w in enumerate(self._workers):
            if self._workers_status[worker_id] and not w.is_alive():
                failed.append(w)
                self._mark_worker_as_unavailable(worker_id)
        return failed

    def _try_get_data(self, timeout):
        import pickle
        try:
            return True, pickle.loads(self._data_queue.get(timeout=timeout))
        except queue.Empty:
            failed = self._failed_workers()
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") \
                    from None
            return False, None

    def _get_data(self):
        if self._timeout > 0:
            import time
            deadline = time.monotonic() + self._timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    # raised at once, as PyTorch: the workers (perhaps stuck in the dataset) are
                    # shut down when the iterator goes, not first (that waited 5 s more)
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                success, data = self._try_get_data(min(left, _POLL_SECONDS))
                if success:
                    return data
        while True:
            success, data = self._try_get_data(_POLL_SECONDS)
            if success:
                return data

    def _next_data(self):
        while True:
            # skip tasks whose worker has ended (iterable datasets) and that have no data
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx, None)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            if self._shutdown:
                raise RuntimeError("DataLoader iterator has been shut down")
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable and \
                    isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                if self._in_order:
                    break
                if self._workers_num_tasks[worker_queue_idx] < \
                        max_tasks // sum(self._workers_status):
                    break
        else:
            return  # no worker is active
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_idx):
        self._workers_num_tasks[worker_idx] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        try:
            self._index_queues[worker_id].put(None)
        except Exception:
            pass
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if _python_exiting or getattr(self, "_shutdown", True):
            return
        if os.getpid() != self._owner_pid:
            # a forked process (another loader's worker) collecting its copy of this
            # iterator: the workers and the done event belong to the process that made them
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            for w in self._workers:
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=MP_STATUS_CHECK_INTERVAL)

    def __del__(self):
        self._shutdown_workers()
