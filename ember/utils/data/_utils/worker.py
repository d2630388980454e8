"""`torch.utils.data._utils.worker`: what runs in a DataLoader's worker process (the loop
that fetches the batches it is asked for, seeding, `get_worker_info`) and how its results and
errors travel back (`ExceptionWrapper`, the markers of an epoch's end and of a resumed one).
"""
import dataclasses
import os
import queue
import random
import sys
import traceback

from .fetch import _DatasetKind

_WORKER_POLL_SECONDS = 0.25  # how often an idle worker checks for shutdown and its parent


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


_worker_info = None


def get_worker_info():
    """In a worker process: its id, the number of workers, its seed and dataset copy;
    None in the main process."""
    return _worker_info


class KeyErrorMessage(str):
    """str whose repr is itself, so a KeyError's multi-line message stays readable."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_type_name = exc_info[0].__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            # no exception -> traceback -> this frame -> exception cycle: the iterator that
            # raised it is then freed (and its workers shut down) as soon as it is unused
            del exception


@dataclasses.dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclasses.dataclass(frozen=True)
class _ResumeIteration:
    seed: object = None


def _generate_state(base_seed, worker_id):
    """PyTorch's NumPy seed for a worker: four 32-bit words mixed from base_seed and id."""
    INIT_A, MULT_A = 0x43b0d7e5, 0x931e8875
    INIT_B, MULT_B = 0x8b51f9dd, 0x58f38ded
    MIX_MULT_L, MIX_MULT_R = 0xca01f9dd, 0x4973f715
    XSHIFT, MASK32 = 4 * 8 // 2, 0xFFFFFFFF
    entropy = [worker_id, base_seed & MASK32, base_seed >> 32, 0]
    pool = [0] * 4
    hash_const_A = INIT_A

    def hash(value):
        nonlocal hash_const_A
        value = (value ^ hash_const_A) & MASK32
        hash_const_A = (hash_const_A * MULT_A) & MASK32
        value = (value * hash_const_A) & MASK32
        return (value ^ (value >> XSHIFT)) & MASK32

    def mix(x, y):
        result = ((MIX_MULT_L * x) & MASK32) - ((MIX_MULT_R * y) & MASK32) & MASK32
        return (result ^ (result >> XSHIFT)) & MASK32

    for i in range(len(pool)):
        pool[i] = hash(entropy[i])
    for i_src in range(len(pool)):
        for i_dst in range(len(pool)):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash(pool[i_src]))
    hash_const_B = INIT_B
    state = []
    for i_dst in range(4):
        data_val = (pool[i_dst] ^ hash_const_B) & MASK32
        hash_const_B = (hash_const_B * MULT_B) & MASK32
        data_val = (data_val * hash_const_B) & MASK32
        state.append((data_val ^ (data_val >> XSHIFT)) & MASK32)
    return state


def _put(data_queue, idx, data, worker_id):
    """Send (idx, data) pickled here, so that what cannot be pickled becomes an error the
    main process raises instead of a result the queue's feeder thread silently drops."""
    from multiprocessing.reduction import ForkingPickler
    try:
        payload = ForkingPickler.dumps((idx, data))
    except Exception:
        if isinstance(data, ExceptionWrapper):  # e.g. an exception class local to a function
            data.exc_type = RuntimeError
        else:
            data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id} (the "
                                          "batch could not be pickled)")
        try:
            payload = ForkingPickler.dumps((idx, data))
        except Exception:
            data.exc_type = RuntimeError
            payload = ForkingPickler.dumps((idx, data))
    data_queue.put(bytes(payload))


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 persistent_workers):
    global _worker_info
    try:
        import numpy as np
        from .... import _environment, random as ember_random
        _environment.set_num_threads(1)  # as PyTorch's workers: one intra-op thread each
        seed = base_seed + worker_id
        random.seed(seed)
        ember_random.manual_seed(seed)
        np.random.seed(_generate_state(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                  collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        manager_pid = os.getppid()
        while os.getppid() == manager_pid:  # exit should the main process die
            try:
                r = index_queue.get(timeout=_WORKER_POLL_SECONDS)
            except queue.Empty:
                # The loader sets done_event before sending None; the None can be lost when
                # the loader is freed by the garbage collector (which may close its queues
                # first), so an idle worker also leaves once done_event is set.
                if done_event.is_set():
                    break
                continue
            if isinstance(r, _ResumeIteration):
                if r.seed is not None:  # a new epoch of a DataPipe: its shuffles' seeds
                    from ..dataloader import _seed_datapipe
                    dataset = _seed_datapipe(dataset, r.seed)
                _put(data_queue, r, None, worker_id)
                iteration_end = False
                try:
                    fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                          collate_fn, drop_last)
                except Exception:
                    init_exception = ExceptionWrapper(
                        where=f"in DataLoader worker process {worker_id}")
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
            _put(data_queue, idx, data, worker_id)
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
