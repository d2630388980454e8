"""all_reduce throughput between processes on this machine, in alternating rounds:

    python benchmarks/bench_distributed.py [--world 2] [--sizes-mb 1,64] [--rounds 5]
        ember's gloo backend (a ring over sockets) against PyTorch's gloo
    mpiexec -n 2 python benchmarks/bench_distributed.py --mpi [--sizes-mb 1,64]
        ember's mpi backend against raw mpi4py `Allreduce` on the same buffers

Each rank opens both sides (two process groups, or ember's group and COMM_WORLD) and runs
the same sequence of calls, so the two interleave exactly as `_timing.compare` times them."""
import argparse
import multiprocessing
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import compare, header, row  # noqa: E402


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank(rank, world, ports, sizes_mb, rounds, out):
    import datetime

    import ember
    import ember.distributed as edist
    timeout = datetime.timedelta(seconds=120)
    store = edist.TCPStore("127.0.0.1", ports[0], world, rank == 0, timeout=timeout)
    edist.init_process_group("gloo", store=store, rank=rank, world_size=world)
    try:
        import torch
        import torch.distributed as tdist
        tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{ports[1]}",
                                 rank=rank, world_size=world, timeout=timeout)
    except ImportError:
        torch = None
    lines = [header(f"all_reduce float32, {world} ranks", 28) + "   ember GB/s"]
    for mb in sizes_mb:
        n = int(mb * (1 << 20)) // 4
        ours = ember.ones(n)
        theirs = None if torch is None else torch.ones(n)
        number = max(1, int(8 // max(mb, 1)))
        mine, other, ratio = compare(
            lambda: edist.all_reduce(ours),
            None if torch is None else (lambda: tdist.all_reduce(theirs)),
            number, rounds=rounds, warmup=1)
        line = row(f"{mb:g} MB", mine, other, ratio, "ms", 1e3, 28)
        lines.append(line + f"   {n * 4 / mine / 1e9:8.2f}")
    if rank == 0:
        out.put("\n".join(lines))
    edist.destroy_process_group()
    if torch is not None:
        tdist.destroy_process_group()


def _mpi(sizes_mb, rounds):
    import numpy as np
    from mpi4py import MPI

    import ember
    import ember.distributed as edist
    edist.init_process_group("mpi")
    comm = MPI.COMM_WORLD
    lines = [header(f"all_reduce float32, {comm.Get_size()} ranks", 28)
             .replace("torch", "mpi4py") + "   ember GB/s"]
    for mb in sizes_mb:
        n = int(mb * (1 << 20)) // 4
        ours, raw = ember.ones(n), np.ones(n, np.float32)
        number = max(1, int(8 // max(mb, 1)))
        mine, other, ratio = compare(lambda: edist.all_reduce(ours),
                                     lambda: comm.Allreduce(MPI.IN_PLACE, raw, MPI.SUM),
                                     number, rounds=rounds, warmup=1)
        lines.append(row(f"{mb:g} MB", mine, other, ratio, "ms", 1e3, 28)
                     + f"   {n * 4 / mine / 1e9:8.2f}")
    if comm.Get_rank() == 0:
        print("\n".join(lines))
    edist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--sizes-mb", default="1,64")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--mpi", action="store_true", help="under mpiexec: ember's mpi backend")
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes_mb.split(",")]
    if args.mpi:
        return _mpi(sizes, args.rounds)
    ctx = multiprocessing.get_context("spawn")
    out, ports = ctx.Queue(), (_port(), _port())
    procs = [ctx.Process(target=_rank, args=(r, args.world, ports, sizes, args.rounds, out))
             for r in range(args.world)]
    for p in procs:
        p.start()
    print(out.get(timeout=1800))
    for p in procs:
        p.join()


if __name__ == "__main__":
    main()
