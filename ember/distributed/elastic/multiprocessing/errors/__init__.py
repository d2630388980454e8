"""`torch.distributed.elastic.multiprocessing.errors`: how a worker's failure reaches the
launcher and the user.

A worker's entry point decorated with `@record` writes an uncaught exception, with its
traceback and time, to the file TORCHELASTIC_ERROR_FILE names (the launcher gives each
worker its own), then lets it propagate. When workers fail, the launcher reads their files
into `ProcessFailure`s and raises `ChildFailedError`, whose message is the report torchrun
prints: the first failure (smallest timestamp) as the root cause, the others listed, each
with time, host, ranks, exit code and the worker's traceback (or, without an error file,
where to read about `@record`)."""
import dataclasses
import datetime
import functools
import json
import logging
import os
import signal
import socket
import time

from .error_handler import ErrorHandler
from .handlers import get_error_handler

__all__ = ["ProcessFailure", "ChildFailedError", "record", "ErrorHandler",
           "get_error_handler"]

logger = logging.getLogger(__name__)

_NOT_AVAILABLE = "<N/A>"
_NO_ERROR_DATA = {"message": "<NONE>"}
_HOW_TO_RECORD = "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"


@dataclasses.dataclass
class ProcessFailure:
    """A failed worker: its local rank, pid and exit code (negative: the signal that ended
    it), and its error file. `message` and `timestamp` come from the error file when the
    worker wrote one (`error_file_data` is its record); otherwise the time is now and the
    message says what is known (the signal, or how to get a traceback), and `error_file`
    is "<N/A>"."""

    local_rank: int
    pid: int
    exitcode: int
    error_file: str
    error_file_data: dict = dataclasses.field(init=False)
    message: str = dataclasses.field(init=False)
    timestamp: int = dataclasses.field(init=False)

    def __post_init__(self):
        self.error_file_data = dict(_NO_ERROR_DATA)
        self.message = ""
        if os.path.isfile(self.error_file):
            try:
                with open(self.error_file) as fp:
                    self.error_file_data = json.load(fp)
                logger.debug("User process failed with error data: %s",
                             json.dumps(self.error_file_data, indent=2))
                self.message, self.timestamp = self._get_error_data(self.error_file_data)
            except Exception:
                logger.exception("Failed to parse reply file: %s", self.error_file)
                raise
        else:
            self._set_no_reply_file()
        if not self.message:
            if self.exitcode < 0:  # a signal leaves no error file
                self.message = (f"Signal {-self.exitcode} ({self.signal_name()}) received by "
                                f"PID {self.pid}")
            else:
                self.error_file_data["errorTraits"] = {
                    "category": "system_terminated_error", "retryability": "False"}
                self.message = _HOW_TO_RECORD

    def _get_error_data(self, error_file_data):
        message = error_file_data["message"]
        if isinstance(message, str):
            return message, int(error_file_data.get("timestamp", 0))
        return message, int(message["extraInfo"]["timestamp"])

    def _set_no_reply_file(self):
        self.error_file = _NOT_AVAILABLE
        self.error_file_data = dict(_NO_ERROR_DATA)
        self.message = ""
        self.timestamp = int(time.time())

    def signal_name(self) -> str:
        """The name of the signal that ended the process ("SIGTERM"), or "<N/A>"."""
        if self.exitcode < 0:
            try:
                return signal.Signals(-self.exitcode).name
            except ValueError:  # a number no signal of this platform has
                return _NOT_AVAILABLE
        return _NOT_AVAILABLE

    def timestamp_isoformat(self):
        """The failure's time as YYYY-MM-DD_HH:MM:SS (local time)."""
        return datetime.datetime.fromtimestamp(self.timestamp).isoformat(sep="_")


GlobalRank = int


class ChildFailedError(Exception):
    """Raised by a launcher whose workers failed (`failures`: global rank -> ProcessFailure,
    at least one); its message is the failure report. Raised through a `@record` entry
    point, the first failure's error file becomes the launcher's own, so the worker's root
    cause propagates up as it is."""

    def __init__(self, name: str, failures: dict):
        self.name = name
        self.failures = failures
        if not self.failures:  # a report of no failure makes no sense
            raise AssertionError
        super().__init__(self.format_msg())

    def get_first_failure(self):
        """(global rank, ProcessFailure) of the earliest failure."""
        rank = min(self.failures, key=lambda r: self.failures[r].timestamp)
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim="=", section_delim="-"):
        title = f"{self.name} FAILED"
        root_rank, _ = self.get_first_failure()
        root, others, width = "", [], len(title)
        for idx, (rank, failure) in enumerate(self.failures.items()):
            text, text_width = self._format_failure(idx, rank, failure)
            width = max(width, text_width)
            if rank == root_rank:
                root = text
            else:
                others.append(text)
        width = min(width, 60)
        border, section = boarder_delim * width, section_delim * width
        return "\n".join(["", border, title, section, "Failures:",
                          "\n".join(others or ["  <NO_OTHER_FAILURES>"]), section,
                          "Root Cause (first observed failure):", root, border])

    def _format_failure(self, idx, rank, failure):
        # the message is the worker's record (its traceback, else its message) or a string
        message = failure.message
        if isinstance(message, dict):
            message = message.get("extraInfo", {}).get(
                "py_callstack", message.get("message", _NOT_AVAILABLE)).replace("\n", "\n  ")
        name = failure.signal_name()
        sig = f" ({name})" if name != _NOT_AVAILABLE else ""
        text = (f"[{idx}]:\n"
                f"  time      : {failure.timestamp_isoformat()}\n"
                f"  host      : {socket.getfqdn()}\n"
                f"  rank      : {rank} (local_rank: {failure.local_rank})\n"
                f"  exitcode  : {failure.exitcode} (pid: {failure.pid}) {sig}\n"
                f"  error_file: {failure.error_file}\n"
                f"  traceback : {message}")
        return text, max(len(line) for line in text.split("\n"))


def record(fn, error_handler=None):
    """Decorate a process's entry point (`main`): an exception escaping it is written to the
    error file (TORCHELASTIC_ERROR_FILE) and raised on. A `ChildFailedError` (a launcher
    whose workers failed) copies its first failure's error file instead; `SystemExit(0)`
    returns None. Use it once per process, on the top-level function::

        @record
        def main():
            ...
    """
    if not error_handler:
        error_handler = get_error_handler()

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        error_handler.initialize()
        try:
            return fn(*args, **kwargs)
        except SystemExit as e:
            if e.code == 0:  # (a script run by run_path that exits cleanly)
                return None
            raise
        except ChildFailedError as e:
            rank, failure = e.get_first_failure()
            if failure.error_file != _NOT_AVAILABLE:
                error_handler.dump_error_file(failure.error_file, failure.exitcode)
            else:
                logger.info("local_rank %s FAILED with no error file. Decorate your entrypoint "
                            "fn with @record for traceback info. See: "
                            "https://pytorch.org/docs/stable/elastic/errors.html", rank)
            raise
        except Exception as e:
            error_handler.record_exception(e)
            raise

    return wrapper
