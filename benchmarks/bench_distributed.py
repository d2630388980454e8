"""all_reduce throughput between processes on this machine: ember's gloo backend (a ring over
sockets) against PyTorch's gloo, in the same processes, in alternating rounds.

    python benchmarks/bench_allreduce.py [--world 2] [--sizes-mb 1,64] [--rounds 5]

Each rank opens both process groups (on two ports) and runs the same sequence of calls, so
the collectives of the two libraries interleave exactly as `_timing.compare` times them."""
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--sizes-mb", default="1,64")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes_mb.split(",")]
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
