# The "getting started with DistributedDataParallel" pattern on CPU: two processes started by
# torch.multiprocessing.spawn meet over env:// (gloo), train a DDP-wrapped model on their
# halves of the data with a DistributedSampler, and end with the same parameters.
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train(rank, world_size, port, results):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(rank)  # different starting points: DDP hands out rank 0's
    model = DDP(nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1)))
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 3, generator=g)
    y = x.sum(1, keepdim=True)
    sampler = DistributedSampler(TensorDataset(x, y), num_replicas=world_size, rank=rank)
    loader = DataLoader(TensorDataset(x, y), batch_size=8, sampler=sampler)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for xb, yb in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    gathered = [torch.zeros_like(flat) for _ in range(world_size)]
    dist.all_gather(gathered, flat)
    loss = nn.functional.mse_loss(model(x), y).detach()
    dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    if rank == 0:
        results.put((torch.equal(gathered[0], gathered[1]), loss.item(),
                     list(model.state_dict())[0], torch.__name__))
    dist.destroy_process_group()


if __name__ == "__main__":
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    results = mp.get_context("spawn").SimpleQueue()
    mp.spawn(train, args=(2, port, results), nprocs=2, join=True)
    same, loss, first_key, library = results.get()
    assert library == torch.__name__, (library, torch.__name__)  # the children run it too
    assert same, "the replicas drifted apart"
    assert loss < 0.5, loss
    assert first_key == "module.0.weight", first_key
    print("final loss", round(loss, 3))
    print("OK")
