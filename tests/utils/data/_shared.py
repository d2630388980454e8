"""Datasets and helpers that tests/utils/data's test files share."""
import contextlib
import math
import signal

from ember.utils.data import Dataset, IterableDataset, get_worker_info


@contextlib.contextmanager
def deadline(seconds):
    """Fail (instead of hanging the suite) when the body takes longer than `seconds`."""
    def on_alarm(signum, frame):
        raise TimeoutError(f"took longer than {seconds} s")
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)



class Range(Dataset):
    def __init__(self, n, offset=0):
        self.n, self.offset = n, offset

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not -self.n <= i < self.n:
            raise IndexError(i)
        return self.offset + (i % self.n)


class IterRange(IterableDataset):
    """range(start, stop), sharded across workers as the PyTorch docs show."""

    def __init__(self, start, stop):
        self.start, self.stop = start, stop

    def __len__(self):
        return self.stop - self.start

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.stop))
        per_worker = int(math.ceil((self.stop - self.start) / float(info.num_workers)))
        lo = self.start + info.id * per_worker
        return iter(range(lo, min(lo + per_worker, self.stop)))


def _order(loader):
    return [i for batch in loader for i in batch.tolist()]
