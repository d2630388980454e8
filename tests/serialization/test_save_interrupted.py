"""`save` to a path: a save killed at any moment leaves the previous file whole and no
full-size temporary behind (the bytes go to an unnamed file; where the system has none, to a
temporary named for the target, process and thread, which the next save of that target sweeps
once its process is gone). Concurrent savers in one folder never share a temporary."""
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import ember
from ember.serialization import saving

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SAVER = """
import sys, ember
from ember.serialization import saving
if sys.argv[2] == "named":
    saving._open_unnamed = lambda folder: None
big = ember.arange(3_000_000, dtype=ember.float64)  # 24 MB a save
print("ready", flush=True)
while True:
    ember.save({"x": big}, sys.argv[1])
"""


def _temporaries(folder):
    return [n for n in os.listdir(folder) if "ember-save" in n]


@pytest.mark.parametrize("mode", ["unnamed", "named"])
def test_killed_saves_leave_the_file_and_no_temporaries(tmp_path, mode):
    path = tmp_path / "model.pt"
    ember.save({"x": ember.ones(2)}, path)
    for delay in (0.4,):
        proc = subprocess.Popen([sys.executable, "-c", SAVER, str(path), mode], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        back = ember.load(path)  # the previous file, or a newer one: never a torn one
        assert back["x"].shape in ((2,), (3_000_000,))
        if mode == "unnamed":  # killed while writing: nothing with a name was made
            assert len(_temporaries(tmp_path)) <= 1  # (a kill between link and rename)
    ember.save({"x": ember.zeros(3)}, path)  # sweeps what the killed savers left
    assert _temporaries(tmp_path) == []
    assert ember.load(path)["x"].tolist() == [0.0, 0.0, 0.0]


def test_a_stale_temporary_is_swept_only_when_its_process_is_gone(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = tmp_path / f".model.pt.{gone.pid}-1.ember-save"
    live = tmp_path / f".model.pt.{os.getppid()}-1.ember-save"  # a saver still running
    other = tmp_path / f".other.pt.{gone.pid}-1.ember-save"  # another target's
    for p in (stale, live, other):
        p.write_bytes(b"x" * 1000)
    ember.save({"x": ember.ones(1)}, tmp_path / "model.pt")
    assert not stale.exists() and live.exists() and other.exists()


def test_concurrent_savers_in_one_folder(tmp_path):
    errors = []

    def saver(name, value):
        try:
            for _ in range(5):
                ember.save({"v": ember.full((1000,), value)}, tmp_path / name)
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)
    threads = [threading.Thread(target=saver, args=(f"m{i}.pt", float(i))) for i in range(4)]
    threads += [threading.Thread(target=saver, args=("shared.pt", 7.0)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(4):
        assert ember.load(tmp_path / f"m{i}.pt")["v"].tolist() == [float(i)] * 1000
    assert ember.load(tmp_path / "shared.pt")["v"].tolist() == [7.0] * 1000
    assert _temporaries(tmp_path) == []


def test_without_unnamed_files_the_save_is_still_atomic(tmp_path, monkeypatch):
    monkeypatch.setattr(saving, "_open_unnamed", lambda folder: None)
    path = tmp_path / "m.pt"
    ember.save({"a": ember.arange(3)}, path)
    assert ember.load(path)["a"].tolist() == [0, 1, 2]
    assert _temporaries(tmp_path) == []
    mode = os.stat(path).st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # what open() would give, as before
