"""torch.distributed.elastic.multiprocessing.errors: `record` writes PyTorch's error file and
raises on, `ProcessFailure` reads one, `ChildFailedError` formats the report torchrun prints
(the launcher's own use of them: tests/distributed/test_run.py)."""
import json
import logging
import os

import pytest

from ember.distributed.elastic.multiprocessing import errors
from ember.distributed.elastic.multiprocessing.errors import (ChildFailedError, ErrorHandler,
                                                              ProcessFailure, get_error_handler,
                                                              record)


def _fails():
    raise ValueError("bad value")


def _recorded(module, path, monkeypatch):
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(path))
    with pytest.raises(ValueError, match="bad value"):
        module.record(_fails)()
    return json.loads(path.read_text())


def test_record_writes_pytorchs_error_file_and_raises_on(torch, tmp_path, monkeypatch):
    from torch.distributed.elastic.multiprocessing import errors as theirs
    ours = _recorded(errors, tmp_path / "ours.json", monkeypatch)
    want = _recorded(theirs, tmp_path / "theirs.json", monkeypatch)
    assert ours.keys() == want.keys() == {"message"}
    assert ours["message"].keys() == want["message"].keys() == {"message", "extraInfo"}
    assert ours["message"]["message"] == want["message"]["message"] == "ValueError: bad value"
    assert ours["message"]["extraInfo"].keys() == want["message"]["extraInfo"].keys()
    assert abs(int(ours["message"]["extraInfo"]["timestamp"]) -
               int(want["message"]["extraInfo"]["timestamp"])) <= 2
    stack = ours["message"]["extraInfo"]["py_callstack"]
    assert stack.startswith("Traceback (most recent call last):\n")
    assert 'raise ValueError("bad value")' in stack and stack.endswith("ValueError: bad value\n")


def test_record_without_an_error_file_only_raises(tmp_path, monkeypatch):
    monkeypatch.delenv("TORCHELASTIC_ERROR_FILE", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError):
        record(_fails)()
    assert os.listdir(tmp_path) == []


def test_record_passes_results_and_exits_through():
    @record
    def main(a, b=1):
        """The entry point."""
        return a + b
    assert main(2, b=3) == 5 and main.__doc__ == "The entry point." and main.__name__ == "main"

    def leave(code):
        raise SystemExit(code)
    assert record(leave)(0) is None
    with pytest.raises(SystemExit) as exit_:
        record(leave)(2)
    assert exit_.value.code == 2


def test_record_with_a_given_handler():
    seen = []

    class Handler(ErrorHandler):
        def initialize(self):
            seen.append("initialize")

        def record_exception(self, e):
            seen.append(repr(e))
    with pytest.raises(ValueError):
        record(_fails, error_handler=Handler())()
    assert seen == ["initialize", "ValueError('bad value')"]
    assert type(get_error_handler()) is ErrorHandler


def _failures(module, tmp_path, monkeypatch, stamp):
    """rank 0: killed by SIGKILL; rank 3: failed with an error file; rank 1: exit 2 without
    one. Timestamps set (no error file: the time of reading)."""
    path = tmp_path / f"{module.__name__}.json"
    _recorded(module, path, monkeypatch)
    data = json.loads(path.read_text())
    data["message"]["extraInfo"]["timestamp"] = str(stamp - 5)
    path.write_text(json.dumps(data))
    failures = {0: module.ProcessFailure(0, 101, -9, "/nonexistent/error.json"),
                3: module.ProcessFailure(1, 102, 1, str(path)),
                1: module.ProcessFailure(3, 103, 2, "")}
    failures[0].timestamp = failures[1].timestamp = stamp
    return failures


def test_child_failed_error_report_as_pytorchs(torch, tmp_path, monkeypatch):
    from torch.distributed.elastic.multiprocessing import errors as theirs
    stamp = 1_700_000_000
    ours = ChildFailedError("train.py", _failures(errors, tmp_path, monkeypatch, stamp))
    want = theirs.ChildFailedError("train.py", _failures(theirs, tmp_path, monkeypatch, stamp))
    assert ours.get_first_failure()[0] == want.get_first_failure()[0] == 3
    ours_text = str(ours).replace(str(tmp_path / "ember.distributed.elastic.multiprocessing."
                                                  "errors.json"), "FILE")
    want_text = str(want).replace(str(tmp_path / "torch.distributed.elastic.multiprocessing."
                                                   "errors.json"), "FILE")
    # the recorded tracebacks name each library's own record wrapper
    ours_text = "\n".join(line for line in ours_text.split("\n") if "wrapper" not in line
                          and "return f" not in line and "^^^" not in line)
    want_text = "\n".join(line for line in want_text.split("\n") if "wrapper" not in line
                          and "return f" not in line and "^^^" not in line)
    assert ours_text == want_text
    assert "Signal 9 (SIGKILL) received by PID 101" in ours_text
    assert ours.format_msg("#", "~").split("\n")[1] == "#" * 60
    f = ours.failures[1]
    assert (f.error_file, f.signal_name(), f.error_file_data["errorTraits"]) == \
        ("<N/A>", "<N/A>", {"category": "system_terminated_error", "retryability": "False"})
    with pytest.raises(AssertionError):
        ChildFailedError("train.py", {})


def test_a_short_report_is_narrower_than_sixty(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "e.json").write_text(json.dumps({"message": "short", "timestamp": 3}))
    failure = ProcessFailure(0, 1, 1, "e.json")
    assert (failure.message, failure.timestamp) == ("short", 3)
    lines = str(ChildFailedError("x", {0: failure})).split("\n")
    width = max(len(line) for line in lines[lines.index("[0]:"):-1])  # the failures only
    assert lines[0] == "" and lines[1] == "=" * width and width < 60
    assert lines[2] == "x FAILED" and lines[-1] == lines[1]


def test_dump_error_file_copies_the_childs_record_with_its_exit_code(tmp_path, monkeypatch,
                                                                       caplog):
    child = tmp_path / "child.json"
    _recorded(errors, child, monkeypatch)
    own = tmp_path / "own.json"
    own.write_text("not json")
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(own))
    ErrorHandler().dump_error_file(str(child), error_code=-9)
    copied = json.loads(own.read_text())
    assert copied["message"]["errorCode"] == -9
    assert copied["message"]["message"] == "ValueError: bad value"
    monkeypatch.delenv("TORCHELASTIC_ERROR_FILE")
    with caplog.at_level(logging.ERROR):
        ErrorHandler().dump_error_file(str(child))
    assert f"no error file defined for parent, to copy child error file ({child})" in caplog.text


def test_a_launcher_decorated_with_record_passes_on_the_root_cause(tmp_path, monkeypatch):
    child = tmp_path / "child.json"
    _recorded(errors, child, monkeypatch)
    own = tmp_path / "own.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(own))

    @record
    def launcher():
        raise ChildFailedError("train.py", {1: ProcessFailure(1, 7, 1, str(child))})
    with pytest.raises(ChildFailedError):
        launcher()
    assert json.loads(own.read_text())["message"]["errorCode"] == 1
