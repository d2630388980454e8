"""Children started by spawn (a plain multiprocessing Process, DataLoader workers with a spawn
context, torch.multiprocessing.spawn) re-run this script first: their `import torch` must be
the same library as the parent's."""
import multiprocessing as mp

import torch
from torch.utils.data import DataLoader, Dataset


def which_torch():
    return torch.__name__ + ":" + type(torch.ones(1)).__module__


def report(queue):
    queue.put(which_torch())


class Squares(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return torch.tensor([i * i]), which_torch()


def spawned(rank, queue):
    queue.put((rank, which_torch()))


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    p = ctx.Process(target=report, args=(queue,))
    p.start()
    child = queue.get(timeout=120)
    p.join()
    assert child == which_torch(), (child, which_torch())

    loader = DataLoader(Squares(), batch_size=2, num_workers=1, multiprocessing_context="spawn")
    batches = list(loader)
    assert [b[0].view(-1).tolist() for b in batches] == [[0, 1], [4, 9]]
    assert {w for b in batches for w in b[1]} == {which_torch()}

    queue = ctx.SimpleQueue()
    torch.multiprocessing.spawn(spawned, args=(queue,), nprocs=2)
    assert sorted(queue.get() for _ in range(2)) == [(0, which_torch()), (1, which_torch())]
    print(which_torch(), "OK")
