"""`python -m ember.distributed.run` (`python -m torch.distributed.run`, torchrun, under
ember.compat): start `--nproc-per-node` copies of a training script on this node with the
environment PyTorch's launcher sets (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
GROUP_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_*), and watch them: when one fails, the
others are ended and the launcher raises `ChildFailedError` (torch.distributed.elastic's
report: exit status 1, the first failure as the root cause). Each worker gets an error file
(TORCHELASTIC_ERROR_FILE, under --log-dir or a temporary folder) that an entry point
decorated with `@record` fills with its traceback; the report shows it.

The launcher serves the workers' rendezvous store itself (TORCHELASTIC_USE_AGENT_STORE), on
the master port it has already bound, so no two launches race for a port. Nodes meet by a
static rendezvous (`--node-rank`, `--master-addr`, `--master-port`) or a c10d one
(`--rdzv-endpoint host:port`, node ranks in joining order)."""
import argparse
import datetime
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from .elastic.multiprocessing.errors import ChildFailedError, ProcessFailure, record

__all__ = ["get_args_parser", "parse_args", "get_use_env", "run", "main"]

logger = logging.getLogger(__name__)


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
    """`--nnodes` N or MIN:MAX, as (MIN, MAX)."""
    lo, _, hi = str(text).partition(":")
    lo, hi = int(lo), int(hi or lo)
    if not 0 < lo <= hi:
        raise ValueError(f"nnodes={text} is not a valid node count or MIN:MAX range")
    return lo, hi


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


def _rdzv_option(conf, names, default):
    for item in filter(None, conf.split(",")):
        key, _, value = item.partition("=")
        if key.strip() in names:
            return float(value)
    return default


def _rdzv_timeout(conf):
    return _rdzv_option(conf, ("timeout", "join_timeout"), 900.0)


class _Rendezvous:
    """Where this node stands in the job: node rank, node count, and the store its workers
    meet in (served by this launcher on node 0). The c10d rendezvous runs in rounds: a round
    closes when MAX nodes have joined, or MIN and `last_call_timeout` seconds have passed; a
    failure on any node, or a node arriving after the close, makes every node rejoin in the
    next round (torchrun's elastic agent does the same)."""

    def __init__(self, args, nodes):
        from .store import TCPStore
        self._TCPStore = TCPStore
        self.timeout = datetime.timedelta(seconds=_rdzv_timeout(args.rdzv_conf))
        self.min_nodes, self.max_nodes = nodes
        self.nnodes, self.node_rank = self.max_nodes, args.node_rank
        self.run_id = args.rdzv_id if args.rdzv_id != "none" else str(uuid.uuid4())
        self.round, self._rdzv_store, self.store = 0, None, None
        elastic = self.min_nodes != self.max_nodes
        if elastic and args.rdzv_backend != "c10d":
            raise ValueError(f"nnodes={args.nnodes}: an elastic node range needs the c10d "
                             "rendezvous (--rdzv-backend c10d --rdzv-endpoint HOST:PORT)")
        if args.standalone or (args.rdzv_backend == "static" and not args.rdzv_endpoint
                               and self.max_nodes == 1):
            self.master_addr = "localhost" if args.standalone or args.master_port is None \
                else args.master_addr
            host = "127.0.0.1" if self.master_addr == "localhost" else self.master_addr
            self.store = TCPStore(host, args.master_port or 0, None, True, self.timeout,
                                  wait_for_workers=False)
            self.master_port, self.node_rank, self.nnodes = self.store.port, 0, 1
        elif args.rdzv_backend == "static":
            if not 0 <= args.node_rank < self.nnodes:
                raise ValueError(f"node_rank {args.node_rank} is not in [0, {self.nnodes})")
            self.master_addr = args.master_addr
            self.master_port = args.master_port or 29500
            self.store = None if args.node_rank else TCPStore(
                self.master_addr, self.master_port, None, True, self.timeout,
                wait_for_workers=False)
        elif args.rdzv_backend == "c10d":
            self._last_call = _rdzv_option(args.rdzv_conf, ("last_call_timeout",), 30.0)
            self._local_addr = args.local_addr
            self._connect(args.rdzv_endpoint)
            self.round = self._rdzv_store.add(self._key("current"), 0)
            self._join()
        else:
            raise ValueError(f"unknown rendezvous backend {args.rdzv_backend!r} (ember's "
                             "launcher has 'static' and 'c10d')")

    @property
    def rounds(self):
        """Whether the nodes can meet again (the c10d rendezvous)."""
        return self._rdzv_store is not None

    def _key(self, name, round=None):
        if round is None:
            return f"rdzv/{self.run_id}/{name}"
        return f"rdzv/{self.run_id}/{round}/{name}"

    def _connect(self, endpoint):
        host, _, port = endpoint.rpartition(":")
        host, port = (host, int(port)) if host else (endpoint or "127.0.0.1", 29400)
        from .store import DistNetworkError
        TCPStore = self._TCPStore
        try:  # the node that can serve the endpoint does; the others join it
            self._rdzv_store = TCPStore(host, port, None, True, self.timeout,
                                        wait_for_workers=False)
        except DistNetworkError:  # (the port is taken: another launcher serves it)
            self._rdzv_store = TCPStore(host, port, None, False, self.timeout)

    def _join(self):
        """Join the current round: wait for it to close, learn this node's rank and the
        round's master."""
        store, r = self._rdzv_store, self.round
        index = store.add(self._key("joined", r), 1) - 1
        if index == 0:
            self._close_round(store, r)
        count = int(store.get(self._key("closed", r)))
        if index >= count:  # arrived after the close: the running nodes let us in
            store.set(self._key("rejoin", r), f"a node arrived after round {r} closed")
            self.next_round(restart=False)
            return
        self.node_rank, self.nnodes = index, count
        if self.store is not None:  # the previous round's workers' store, served here
            self.store._release()
            self.store = None
        if index == 0:
            addr = self._local_addr or self._rdzv_store._sock.getsockname()[0]
            self.master_addr, self.master_port = addr, _free_port(addr)
            self.store = self._TCPStore(addr, self.master_port, None, True, self.timeout,
                                        wait_for_workers=False)
            store.set(self._key("master", r), f"{addr}:{self.master_port}")
        else:
            addr, _, p = store.get(self._key("master", r)).decode().rpartition(":")
            self.master_addr, self.master_port = addr, int(p)

    def _close_round(self, store, r):
        deadline = time.monotonic() + self.timeout.total_seconds()
        enough_since = None
        while True:
            joined = store.add(self._key("joined", r), 0)
            now = time.monotonic()
            if joined >= self.max_nodes:
                break
            if joined >= self.min_nodes:
                enough_since = enough_since or now
                if now - enough_since >= self._last_call:
                    break
            if now > deadline:
                raise RuntimeError(f"rendezvous {self.run_id} timed out with {joined} of at "
                                   f"least {self.min_nodes} nodes")
            time.sleep(0.05)
        store.set(self._key("closed", r), str(min(joined, self.max_nodes)))

    def interrupted(self):
        """Why the nodes must meet again (a failure elsewhere, a new node), or None. A
        rendezvous host that has gone away is no news: this node's workers carry on."""
        if self._rdzv_store is None:
            return None
        try:
            for name in ("restart", "rejoin"):
                key = self._key(name, self.round)
                if self._rdzv_store.check([key]):
                    return name, self._rdzv_store.get(key).decode()
        except OSError:
            return None
        return None

    def finish(self):
        """This node's workers succeeded. The launcher that serves the rendezvous store
        keeps it up until every node of the round has said so (bounded by the timeout)."""
        if self._rdzv_store is None or self.nnodes == 1:
            return
        done = self._key("done", self.round)
        try:
            self._rdzv_store.add(done, 1)
            if self._rdzv_store._server is None:
                return
            deadline = time.monotonic() + self.timeout.total_seconds()
            while self._rdzv_store.add(done, 0) < self.nnodes and time.monotonic() < deadline:
                time.sleep(0.05)
        except OSError:
            pass

    def fail(self, why):
        """Tell the other nodes this round's workers failed here."""
        if self._rdzv_store is not None and self.nnodes > 1:
            self._rdzv_store.set(self._key("restart", self.round), why)

    def next_round(self, restart=True):
        r = self.round + 1
        self._rdzv_store.compare_set(self._key("current"), str(self.round), str(r))
        self.round = r
        self._join()


class _Worker:
    """One worker process, its stderr passed through to ours, and its error file."""

    def __init__(self, cmd, env, local_rank, rank):
        self.local_rank, self.rank = local_rank, rank
        self.error_file = env["TORCHELASTIC_ERROR_FILE"]
        self.proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE,
                                     start_new_session=True)
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

    def failure(self):
        """This failed worker as a ProcessFailure (its error file read, once its stderr is
        all through)."""
        self.reader.join(5)
        return ProcessFailure(local_rank=self.local_rank, pid=self.proc.pid,
                              exitcode=self.proc.returncode, error_file=self.error_file)

    def stop(self, sig):
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def get_use_env(args) -> bool:
    """Whether the workers learn their local rank from LOCAL_RANK alone (torchrun, always),
    rather than also from a `--local-rank=N` argument (the legacy torch.distributed.launch
    without `--use-env`)."""
    if not hasattr(args, "use_env"):
        return True
    return args.use_env


def _command(args, local_rank):
    script = [args.training_script]
    if not get_use_env(args):
        script.append(f"--local-rank={local_rank}")
    script += list(args.training_script_args)
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


def _environment(args, rdzv, nproc, local_rank, restart, error_file):
    rank = rdzv.node_rank * nproc + local_rank
    env = dict(os.environ)
    env.update(
        RANK=str(rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(rdzv.nnodes * nproc),
        LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK=str(rdzv.node_rank),
        GROUP_WORLD_SIZE=str(rdzv.nnodes), ROLE_NAME=args.role, ROLE_RANK=str(rank),
        ROLE_WORLD_SIZE=str(rdzv.nnodes * nproc), MASTER_ADDR=rdzv.master_addr,
        MASTER_PORT=str(rdzv.master_port), TORCHELASTIC_RESTART_COUNT=str(restart),
        TORCHELASTIC_MAX_RESTARTS=str(args.max_restarts), TORCHELASTIC_RUN_ID=rdzv.run_id,
        TORCHELASTIC_USE_AGENT_STORE="True", TORCHELASTIC_ERROR_FILE=error_file,
        PYTHONUNBUFFERED="1")
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        env["OMP_NUM_THREADS"] = "1"
    return env


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


def _error_file(log_root, restart, local_rank):
    """The error file of a worker of this attempt, in a folder of its own (none left there
    from before)."""
    folder = os.path.join(log_root, f"attempt_{restart}", str(local_rank))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "error.json")
    if os.path.exists(path):
        os.remove(path)
    return path


def _attempt(args, rdzv, nproc, restart, log_root):
    """Run the workers once: (None, None) when all succeeded, else (why, report): why is
    "failed" (a worker here failed; the report is a ChildFailedError), "restart" (one on
    another node did) or "rejoin" (a node is waiting to join)."""
    workers = [_Worker(_command(args, i), _environment(args, rdzv, nproc, i, restart,
                                                       _error_file(log_root, restart, i)),
                       i, rdzv.node_rank * nproc + i) for i in range(nproc)]
    try:
        while True:
            done = [w for w in workers if w.ended is not None]
            # the workers that failed on their own, the first first (the root cause when
            # error files' timestamps, in whole seconds, tie); the others are then ended
            failed = sorted((w for w in done if w.proc.returncode), key=lambda w: w.ended)
            if failed:
                rdzv.fail(f"node {rdzv.node_rank}: local rank {failed[0].local_rank} failed")
                for w in failed:
                    logger.error("failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s",
                                 w.proc.returncode, w.local_rank, w.proc.pid, w.proc.args[0])
                _stop(workers)
                failures = {w.rank: w.failure() for w in failed}
                return "failed", ChildFailedError(args.training_script, failures)
            if len(done) == len(workers):
                return None, None
            elsewhere = rdzv.interrupted()
            if elsewhere is not None:
                _stop(workers)
                return elsewhere[0], f"[launcher] {elsewhere[1]}"
            time.sleep(args.monitor_interval)
    except BaseException:  # Ctrl-C or a signal to the launcher: take the workers with it
        _stop(workers)
        raise


def run(args):
    nodes, nproc = _nodes(args.nnodes), _nproc(args.nproc_per_node)
    if args.standalone:
        nodes = (1, 1)
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        print("*" * 41 + "\nSetting OMP_NUM_THREADS environment variable for each process to "
              "be 1 in default, to avoid your system being overloaded, please further tune "
              "the variable for optimal performance in your application as needed. \n"
              + "*" * 41, file=sys.stderr)
    if args.max_restarts and nodes[1] > 1 and args.rdzv_backend != "c10d":
        raise ValueError("restarting the workers of several nodes needs the c10d rendezvous "
                         "(--rdzv-backend c10d --rdzv-endpoint HOST:PORT); the static one "
                         "restarts a single node only")
    rdzv = _Rendezvous(args, nodes)
    if args.log_dir:
        os.makedirs(args.log_dir, exist_ok=True)
    base = args.log_dir or tempfile.mkdtemp(prefix="torchelastic_")
    keep = bool(args.log_dir)  # a temporary folder stays only for a failure's error files
    try:
        report = _run_attempts(args, rdzv, nproc,
                               tempfile.mkdtemp(prefix=f"{rdzv.run_id}_", dir=base))
        if isinstance(report, ChildFailedError):
            keep = True
            raise report
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    if report is not None:
        print(report, file=sys.stderr)
        raise SystemExit(1)


def _run_attempts(args, rdzv, nproc, log_root):
    """Run the workers, restarting them as allowed: None when they succeeded, else the last
    attempt's report (a ChildFailedError, or the launcher's message)."""
    restart = 0
    while True:
        why, report = _attempt(args, rdzv, nproc, restart, log_root)
        if why is None:
            rdzv.finish()
            return None
        if why == "rejoin":  # a membership change: not a failure, as in torchrun
            print(f"{report}; the nodes meet again", file=sys.stderr)
            rdzv.next_round()
            continue
        if restart >= args.max_restarts:
            return report
        restart += 1
        print(f"[launcher] workers failed; restarting them ({restart} of "
              f"{args.max_restarts})", file=sys.stderr)
        if rdzv.rounds:
            rdzv.next_round()


def _on_signal(signum, frame):
    raise SystemExit(128 + signum)  # unwinds through _attempt, which ends the workers


def end_workers_on_signals():
    """A signal that ends the launcher ends its workers first (they run in sessions of their
    own, so a signal to the launcher alone would leave them). SIGINT too: a launcher started
    in the background by a shell inherits it ignored (no KeyboardInterrupt), and `kill -INT`
    must still end it and its workers."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, _on_signal)


@record
def main(args=None):
    end_workers_on_signals()
    run(parse_args(sys.argv[1:] if args is None else args))


if __name__ == "__main__":
    main()
