"""The launcher, `python -m ember.distributed.run` (torchrun's interface): the environment it
gives each worker, a job across two launchers (static and c10d rendezvous), restarts, and a
failed or hung rank ending the whole job non-zero with that rank's traceback."""
import json
import os
import re
import socket
import subprocess
import sys
import textwrap

import pytest

from ember.distributed import run as launcher

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WORKER = textwrap.dedent("""
    import datetime, os, signal, sys, time
    import {lib} as torch
    import {lib}.distributed as dist
    from {lib}.distributed.elastic.multiprocessing.errors import record

    @record
    def main():
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=5))
        rank, restart = dist.get_rank(), int(os.environ["TORCHELASTIC_RESTART_COUNT"])
        if mode in ("fail", "norecord") and rank == 1:
            raise ValueError("rank 1 fails on purpose")
        if mode == "killed" and rank == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "hang" and rank == 1:
            time.sleep(600)
        if mode == "fail-first" and rank == 0 and restart == 0:
            sys.exit(3)
        if mode == "scale-up" and dist.get_world_size() == 1:
            time.sleep(60)  # until a second node arrives and the launcher restarts us
        t = torch.tensor([rank + 1.0])
        dist.all_reduce(t)
        env = [os.environ.get(k, "-") for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE",
                                                "LOCAL_WORLD_SIZE", "GROUP_RANK",
                                                "OMP_NUM_THREADS")]
        line = " ".join(["worker", *env, str(restart), str(t.item()), torch.__name__])
        sys.stdout.write(line + "\\n")  # one write: the workers share the launcher's stdout
        dist.destroy_process_group()

    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    (main.__wrapped__ if mode == "norecord" else main)()
""")


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def script(tmp_path):
    def make(lib="ember"):
        path = tmp_path / f"train_{lib}.py"
        path.write_text(WORKER.format(lib=lib))
        return str(path)
    return make


def _launch(*args, compat=False, wait=True):
    prefix = ["-m", "ember.compat", "-m", "torch.distributed.run"] if compat else \
        ["-m", "ember.distributed.run"]
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("OMP_NUM_THREADS", None)
    proc = subprocess.Popen([sys.executable, *prefix, *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc.communicate(timeout=120) + (proc.returncode,) if wait else proc


def _workers(out):
    return sorted(line.split()[1:] for line in out.splitlines() if line.startswith("worker"))


def test_workers_get_torchruns_environment(script):
    out, err, code = _launch("--nproc-per-node", 2, script())
    assert code == 0, err
    assert _workers(out) == [["0", "0", "2", "2", "0", "1", "0", "3.0", "ember"],
                             ["1", "1", "2", "2", "0", "1", "0", "3.0", "ember"]]
    assert "Setting OMP_NUM_THREADS environment variable" in err


def test_torch_distributed_run_under_compat_restarts_failed_workers(script):
    out, err, code = _launch("--nproc_per_node=2", "--max-restarts=1", script("torch"),
                             "fail-first", compat=True)
    assert code == 0, err
    assert [w[6:] for w in _workers(out)] == [["1", "3.0", "ember"]] * 2
    assert "restarting them (1 of 1)" in err


def _report(err):
    """The ChildFailedError's report the launcher ends with."""
    assert "ChildFailedError: \n" in err, err[-3000:]
    return err[err.rindex("ChildFailedError: \n"):]


@pytest.mark.parametrize("mode", ["fail", "hang"])
def test_a_failed_or_hung_rank_ends_the_job(script, mode):
    out, err, code = _launch("--nproc-per-node", 2, script(), mode)
    assert code == 1
    report = _report(err)
    assert "FAILED" in report and "Root Cause (first observed failure):" in report
    if mode == "fail":  # the failing rank's traceback, from the error file @record wrote
        assert "rank      : 1 (local_rank: 1)" in report.split("Root Cause")[1]
        assert "ValueError: rank 1 fails on purpose" in report
        assert "attempt_0/1/error.json" in report
        # rank 0 is ended by the launcher, unless (on a loaded machine) its all_reduce saw
        # rank 1's connection close first and it failed on its own, after rank 1
        assert "<NO_OTHER_FAILURES>" in report or \
            "rank      : 0 (local_rank: 0)" in report.split("Root Cause")[0]
    else:  # rank 0 timed out waiting for the hung rank 1, which the launcher then ended
        assert "rank      : 0 (local_rank: 0)" in report.split("Root Cause")[1]
        assert "Timed out waiting 5000ms" in report
        assert "rank      : 1" not in report  # ended by the launcher: no failure of its own


def test_a_rank_without_record_or_killed_by_a_signal(script):
    out, err, code = _launch("--nproc-per-node", 2, script(), "norecord")
    report = _report(err)
    assert code == 1 and "ValueError: rank 1 fails on purpose" in err  # its own stderr
    assert "  error_file: <N/A>\n  traceback : To enable traceback see: " \
        "https://pytorch.org/docs/stable/elastic/errors.html" in report
    out, err, code = _launch("--nproc-per-node", 2, script(), "killed")
    report = _report(err)
    assert code == 1
    assert re.search(r"exitcode  : -9 \(pid: (\d+)\)  \(SIGKILL\)\n  error_file: <N/A>\n"
                     r"  traceback : Signal 9 \(SIGKILL\) received by PID \1", report), report


def test_the_launchers_own_error_file_gets_the_root_cause(script, tmp_path):
    own = tmp_path / "launcher_error.json"
    env = dict(os.environ, PYTHONPATH=ROOT, TORCHELASTIC_ERROR_FILE=str(own))
    proc = subprocess.run([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node",
                           "2", "--log-dir", str(tmp_path / "logs"), script(), "fail"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    record = json.loads(own.read_text())
    root = _report(proc.stderr).split("Root Cause")[1]
    if "rank      : 0 (local_rank: 0)" in root:
        # a loaded machine: rank 0's all_reduce saw rank 1's connection close and failed on
        # its own within the same second, and failures are timed in whole seconds, the lower
        # rank first on a tie (as in PyTorch's launcher): rank 0's error is the root cause
        assert record["message"]["message"].startswith("DistNetworkError"), record
    else:
        assert record["message"]["message"] == "ValueError: rank 1 fails on purpose"
        assert "raise ValueError" in record["message"]["extraInfo"]["py_callstack"]
    assert record["message"]["errorCode"] == 1
    kept = list((tmp_path / "logs").glob("*/attempt_0/1/error.json"))
    assert len(kept) == 1 and json.loads(kept[0].read_text())["message"]["message"] == \
        "ValueError: rank 1 fails on purpose"


@pytest.mark.parametrize("rdzv", ["static", "c10d"])
def test_a_job_across_two_launchers(script, rdzv):
    port, path = _port(), script()
    if rdzv == "static":
        nodes = [["--node-rank", i, "--master-addr", "127.0.0.1", "--master-port", port]
                 for i in (0, 1)]
    else:
        nodes = [["--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}",
                  "--rdzv-id", "job7"]] * 2
    procs = [_launch("--nnodes", 2, "--nproc-per-node", 1, *node, path, wait=False)
             for node in nodes]
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    assert all(code == 0 for _, _, code in results), [err for _, err, _ in results]
    workers = _workers("".join(out for out, _, _ in results))
    assert [w[:5] for w in workers] == [["0", "0", "2", "1", "0"], ["1", "0", "2", "1", "1"]]
    assert all(w[7] == "3.0" for w in workers)


def _c10d(port, *extra):
    return ["--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id",
            "elastic", *extra]


def test_an_elastic_range_starts_with_the_nodes_there_after_the_last_call(script):
    out, err, code = _launch("--nnodes", "1:2", "--nproc-per-node", 2,
                             *_c10d(_port(), "--rdzv-conf", "last_call_timeout=1"), script())
    assert code == 0, err
    assert [w[:5] for w in _workers(out)] == [["0", "0", "2", "2", "0"], ["1", "1", "2", "2", "0"]]


def test_an_elastic_range_takes_every_node_up_to_its_maximum(script):
    port, path = _port(), script()
    procs = [_launch("--nnodes", "1:2", "--nproc-per-node", 1,
                     *_c10d(port, "--rdzv-conf", "last_call_timeout=20"), path, wait=False)
             for _ in range(2)]
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    assert all(code == 0 for _, _, code in results), [err for _, err, _ in results]
    workers = _workers("".join(out for out, _, _ in results))
    assert [w[:5] for w in workers] == [["0", "0", "2", "1", "0"], ["1", "0", "2", "1", "1"]]


def test_a_node_arriving_late_joins_at_a_new_round(script):
    import time
    port, path = _port(), script()
    first = _launch("--nnodes", "1:2", "--nproc-per-node", 1,
                    *_c10d(port, "--rdzv-conf", "last_call_timeout=0.5"), path, "scale-up",
                    wait=False)
    time.sleep(3)  # the first node's round has closed with it alone
    second = _launch("--nnodes", "1:2", "--nproc-per-node", 1,
                     *_c10d(port, "--rdzv-conf", "last_call_timeout=10"), path, "scale-up",
                     wait=False)
    results = [p.communicate(timeout=120) + (p.returncode,) for p in (first, second)]
    assert all(code == 0 for _, _, code in results), [err[-3000:] for _, err, _ in results]
    workers = _workers("".join(out for out, _, _ in results))
    assert [w[2] for w in workers] == ["2", "2"]  # both ran in a world of two
    assert "the nodes meet again" in results[0][1]


def test_a_failure_on_one_node_restarts_every_node(script):
    port, path = _port(), script()
    procs = [_launch("--nnodes", 2, "--nproc-per-node", 1, "--max-restarts", 1,
                     *_c10d(port), path, "fail-first", wait=False) for _ in range(2)]
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    assert all(code == 0 for _, _, code in results), [err for _, err, _ in results]
    workers = _workers("".join(out for out, _, _ in results))
    assert [(w[0], w[6]) for w in workers] == [("0", "1"), ("1", "1")]  # both on restart 1
    assert all(w[7] == "3.0" for w in workers)
    assert sum("restarting them (1 of 1)" in err for _, err, _ in results) == 2


@pytest.mark.parametrize("args, message", [
    (["--nnodes", "1:2"], "elastic node range needs the c10d rendezvous"),
    (["--nnodes", "0"], "not a valid node count"),
    (["--nproc-per-node", "0"], "at least 1"),
    (["--nnodes", "2", "--max-restarts", "1"], "needs the c10d rendezvous"),
    (["--rdzv-backend", "etcd"], "unknown rendezvous backend"),
    (["--no-python", "-m"], "Don't use both"),
])
def test_argument_errors(args, message):
    with pytest.raises(ValueError, match=message):
        launcher.run(launcher.parse_args([*args, "--node-rank", "0", "script.py"]))


def test_parser_has_torchruns_flags():
    args = launcher.parse_args(["--nproc_per_node", "4", "--master_port", "1234",
                                "--rdzv_endpoint", "h:1", "-m", "pkg.train", "--lr", "0.1"])
    assert (args.nproc_per_node, args.master_port, args.rdzv_endpoint, args.module) == \
        ("4", 1234, "h:1", True)
    assert (args.training_script, args.training_script_args) == ("pkg.train", ["--lr", "0.1"])


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_to_the_launcher_ends_its_workers(tmp_path, sig):
    import signal
    import time
    worker = tmp_path / "sleeper.py"
    worker.write_text("import os, time\n"
                      f"open(os.path.join({str(tmp_path)!r}, 'pid' + os.environ['RANK']), 'w')"
                      ".write(str(os.getpid()))\n"
                      "time.sleep(60)\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    # started as a shell starts a background job: SIGINT ignored, so no KeyboardInterrupt
    proc = subprocess.Popen([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node",
                             "2", str(worker)], env=env, stderr=subprocess.DEVNULL,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        pid_files = [tmp_path / "pid0", tmp_path / "pid1"]
        deadline = time.monotonic() + 60
        while not all(f.exists() and f.read_text() for f in pid_files):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        proc.send_signal(getattr(signal, sig))
        assert proc.wait(timeout=30) == 128 + getattr(signal, sig)
    finally:
        if proc.poll() is None:
            proc.kill()
    for f in pid_files:  # the workers went with it
        pid = int(f.read_text())
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
