"""`python -m ember.distributed.run` (`python -m torch.distributed.run`, torchrun, under
ember.compat): start `--nproc-per-node` copies of a training script on this node with the
environment PyTorch's launcher sets (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
GROUP_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_*), and watch them: when one fails, the
others are ended and the launcher exits 1 with the failing rank's traceback.

The launcher serves the workers' rendezvous store itself (TORCHELASTIC_USE_AGENT_STORE), on
the master port it has already bound, so no two launches race for a port. Nodes meet by a
static rendezvous (`--node-rank`, `--master-addr`, `--master-port`) or a c10d one
(`--rdzv-endpoint host:port`, node ranks in joining order)."""
import argparse
import collections
import datetime
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

__all__ = ["get_args_parser", "parse_args", "run", "main"]

_TAIL_BYTES = 1 << 16  # of each worker's stderr, for the failure report


def get_args_parser():
    p = argparse.ArgumentParser(description="Start and watch the processes of a distributed "
                                            "training job (torchrun's interface).")

    def opt(name, **kw):
        flags = [f"--{name}"] + ([f"--{name.replace('-', '_')}"] if "-" in name else [])
        p.add_argument(*flags, **kw)

    opt("nnodes", default="1:1", help="number of nodes, or MIN:MAX (equal: no elasticity)")
    opt("nproc-per-node", default="1", help="workers per node: a number, or 'cpu'/'auto'")
    opt("rdzv-backend", default="static", help="'static' or 'c10d'")
    opt("rdzv-endpoint", default="", help="host:port of the c10d rendezvous store")
    opt("rdzv-id", default="none", help="the job's id, shared by its nodes")
    opt("rdzv-conf", default="", help="key=value,... (timeout=seconds is read)")
    opt("standalone", action="store_true", help="one node, a free local port")
    opt("max-restarts", type=int, default=0, help="restarts of all workers after a failure")
    opt("monitor-interval", type=float, default=0.1, help="seconds between checks")
    opt("start-method", default="spawn", choices=["spawn", "fork", "forkserver"])
    opt("role", default="default")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module")
    opt("no-python", action="store_true", help="run the script as a program, not Python")
    opt("run-path", action="store_true", help="run the script in the launcher's Python")
    opt("log-dir", default=None)
    opt("node-rank", type=int, default=0)
    opt("master-addr", default="127.0.0.1")
    opt("master-port", type=int, default=None)
    opt("local-addr", default=None)
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args):
    return get_args_parser().parse_args(args)


def _nodes(text):
    lo, _, hi = str(text).partition(":")
    lo, hi = int(lo), int(hi or lo)
    if not 0 < lo <= hi:
        raise ValueError(f"nnodes={text} is not a valid node count or MIN:MAX range")
    if lo != hi:
        raise ValueError(f"nnodes={text}: elastic node ranges are not supported; give one "
                         "number of nodes")
    return lo


def _nproc(text):
    if text in ("cpu", "auto"):
        return os.cpu_count() or 1
    n = int(text)
    if n < 1:
        raise ValueError(f"nproc_per_node must be at least 1, got {n}")
    return n


def _free_port(host):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _rdzv_timeout(conf):
    for item in filter(None, conf.split(",")):
        key, _, value = item.partition("=")
        if key.strip() in ("timeout", "join_timeout"):
            return float(value)
    return 900.0


class _Rendezvous:
    """Where this node stands in the job: node rank, node count, and the store its workers
    meet in (served by this launcher on node 0)."""

    def __init__(self, args, nnodes):
        from .store import TCPStore
        timeout = datetime.timedelta(seconds=_rdzv_timeout(args.rdzv_conf))
        self.nnodes, self.node_rank = nnodes, args.node_rank
        self.run_id = args.rdzv_id if args.rdzv_id != "none" else str(uuid.uuid4())
        if args.standalone or (args.rdzv_backend == "static" and not args.rdzv_endpoint
                               and nnodes == 1):
            self.master_addr = "localhost" if args.standalone or args.master_port is None \
                else args.master_addr
            host = "127.0.0.1" if self.master_addr == "localhost" else self.master_addr
            self.store = TCPStore(host, args.master_port or 0, None, True, timeout,
                                  wait_for_workers=False)
            self.master_port, self.node_rank = self.store.port, 0
        elif args.rdzv_backend == "static":
            if not 0 <= args.node_rank < nnodes:
                raise ValueError(f"node_rank {args.node_rank} is not in [0, {nnodes})")
            self.master_addr = args.master_addr
            self.master_port = args.master_port or 29500
            self.store = None if args.node_rank else TCPStore(
                self.master_addr, self.master_port, None, True, timeout, wait_for_workers=False)
        elif args.rdzv_backend == "c10d":
            self._c10d(args, timeout, TCPStore)
        else:
            raise ValueError(f"unknown rendezvous backend {args.rdzv_backend!r} (ember's "
                             "launcher has 'static' and 'c10d')")

    def _c10d(self, args, timeout, TCPStore):
        host, _, port = args.rdzv_endpoint.rpartition(":")
        host, port = (host, int(port)) if host else (args.rdzv_endpoint or "127.0.0.1", 29400)
        try:  # the node that can serve the endpoint does; the others join it
            store = TCPStore(host, port, None, True, timeout, wait_for_workers=False)
        except OSError:
            store = TCPStore(host, port, None, False, timeout)
        key = f"rdzv/{self.run_id}"
        self.node_rank = store.add(f"{key}/joined", 1) - 1
        if self.node_rank >= self.nnodes:
            raise RuntimeError(f"rendezvous {self.run_id} already has its {self.nnodes} nodes")
        if self.node_rank == 0:
            addr = args.local_addr or store._sock.getsockname()[0]
            self.master_addr, self.master_port = addr, _free_port(addr)
            self.store = TCPStore(addr, self.master_port, None, True, timeout,
                                  wait_for_workers=False)
            store.set(f"{key}/master", f"{addr}:{self.master_port}")
        else:
            addr, _, p = store.get(f"{key}/master").decode().rpartition(":")
            self.master_addr, self.master_port, self.store = addr, int(p), None
        self._rdzv_store = store


class _Worker:
    """One worker process, its stderr passed through to ours and its last bytes kept."""

    def __init__(self, cmd, env, local_rank, rank):
        self.local_rank, self.rank = local_rank, rank
        self.proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE,
                                     start_new_session=True)
        self.tail = collections.deque()
        self._tail_bytes = 0
        self.reader = threading.Thread(target=self._pump, daemon=True)
        self.reader.start()
        self.ended = None  # when it exited (monotonic): the first failure is the root cause
        threading.Thread(target=self._wait, daemon=True).start()

    def _wait(self):
        self.proc.wait()
        self.ended = time.monotonic()

    def _pump(self):
        fd, out = self.proc.stderr.fileno(), getattr(sys.stderr, "buffer", None)
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            if out is not None:
                out.write(chunk)
            else:  # a stderr without bytes (replaced by a test, an IDE)
                sys.stderr.write(chunk.decode(errors="replace"))
            sys.stderr.flush()
            self.tail.append(chunk)
            self._tail_bytes += len(chunk)
            while self._tail_bytes > _TAIL_BYTES and len(self.tail) > 1:
                self._tail_bytes -= len(self.tail.popleft())

    def traceback(self):
        self.reader.join(5)
        text = b"".join(self.tail).decode(errors="replace")
        start = text.rfind("Traceback (most recent call last):")
        return text[start:].rstrip() if start >= 0 else "\n".join(text.splitlines()[-20:])

    def stop(self, sig):
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _command(args):
    script = [args.training_script] + list(args.training_script_args)
    if args.no_python:
        if args.module:
            raise ValueError("Don't use both the '--no-python' flag and the '--module' flag "
                             "at the same time.")
        return script
    python = [sys.executable, "-u"]
    compat = sys.modules.get("ember.compat")
    if compat is not None and compat.is_installed():  # the workers import torch too
        python += ["-m", "ember.compat"]
    return python + (["-m"] if args.module else []) + script


def _environment(args, rdzv, nproc, local_rank, restart):
    rank = rdzv.node_rank * nproc + local_rank
    env = dict(os.environ)
    env.update(
        RANK=str(rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(rdzv.nnodes * nproc),
        LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK=str(rdzv.node_rank),
        GROUP_WORLD_SIZE=str(rdzv.nnodes), ROLE_NAME=args.role, ROLE_RANK=str(rank),
        ROLE_WORLD_SIZE=str(rdzv.nnodes * nproc), MASTER_ADDR=rdzv.master_addr,
        MASTER_PORT=str(rdzv.master_port), TORCHELASTIC_RESTART_COUNT=str(restart),
        TORCHELASTIC_MAX_RESTARTS=str(args.max_restarts), TORCHELASTIC_RUN_ID=rdzv.run_id,
        TORCHELASTIC_USE_AGENT_STORE="True", PYTHONUNBUFFERED="1")
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        env["OMP_NUM_THREADS"] = "1"
    return env


def _report(args, failed, others):
    stamp = time.strftime("%Y-%m-%d_%H:%M:%S")
    host = socket.gethostname()

    def entry(i, w, trace):
        code = w.proc.returncode
        sig = f"  ({signal.Signals(-code).name})" if code < 0 else ""
        return (f"[{i}]:\n  time      : {stamp}\n  host      : {host}\n"
                f"  rank      : {w.rank} (local_rank: {w.local_rank})\n"
                f"  exitcode  : {code} (pid: {w.proc.pid}){sig}\n  traceback :\n"
                + "\n".join("    " + line for line in trace.splitlines()))
    rule, thin = "=" * 60, "-" * 60
    rest = [entry(i + 1, w, w.traceback() if w.proc.returncode > 0 else
                  f"ended by the launcher after rank {failed.rank} failed")
            for i, w in enumerate(others)] or ["  <NO_OTHER_FAILURES>"]
    return "\n".join([rule, f"{args.training_script} FAILED", thin, "Failures:", *rest, thin,
                      "Root Cause (first observed failure):",
                      entry(0, failed, failed.traceback()), rule])


def _stop(workers, grace=5.0):
    """SIGTERM every live worker's process group, then SIGKILL what is left after `grace`."""
    live = [w for w in workers if w.ended is None]
    for w in live:
        w.stop(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for w in live:
        try:
            w.proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            w.stop(signal.SIGKILL)
            w.proc.wait()
    return live


def _attempt(args, rdzv, nproc, restart):
    """Run the workers once: None when all succeeded, else the report of the failure."""
    cmd = _command(args)
    workers = [_Worker(cmd, _environment(args, rdzv, nproc, i, restart), i,
                       rdzv.node_rank * nproc + i) for i in range(nproc)]
    try:
        while True:
            done = [w for w in workers if w.ended is not None]
            failed = sorted((w for w in done if w.proc.returncode), key=lambda w: w.ended)
            if failed:
                ended = _stop(workers)
                return _report(args, failed[0], failed[1:] + ended)
            if len(done) == len(workers):
                return None
            time.sleep(args.monitor_interval)
    except BaseException:  # Ctrl-C or a signal to the launcher: take the workers with it
        _stop(workers)
        raise


def run(args):
    nnodes, nproc = _nodes(args.nnodes), _nproc(args.nproc_per_node)
    if args.standalone:
        nnodes = 1
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        print("*" * 41 + "\nSetting OMP_NUM_THREADS environment variable for each process to "
              "be 1 in default, to avoid your system being overloaded, please further tune "
              "the variable for optimal performance in your application as needed. \n"
              + "*" * 41, file=sys.stderr)
    if args.max_restarts and nnodes > 1:
        raise ValueError("ember's launcher restarts the workers of a single node only: use "
                         "--max-restarts 0 with --nnodes > 1")
    rdzv = _Rendezvous(args, nnodes)
    for restart in range(args.max_restarts + 1):
        report = _attempt(args, rdzv, nproc, restart)
        if report is None:
            return
        if restart < args.max_restarts:
            print(f"[launcher] workers failed; restarting them ({restart + 1} of "
                  f"{args.max_restarts})", file=sys.stderr)
    print(report, file=sys.stderr)
    raise SystemExit(1)


def _on_signal(signum, frame):
    raise SystemExit(128 + signum)  # unwinds through _attempt, which ends the workers


def main(args=None):
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, _on_signal)
    try:
        run(parse_args(sys.argv[1:] if args is None else args))
    except KeyboardInterrupt:
        raise SystemExit(128 + signal.SIGINT) from None


if __name__ == "__main__":
    main()
