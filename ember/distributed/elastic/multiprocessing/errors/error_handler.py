"""`ErrorHandler`: writes a failing process's exception, as structured JSON, to the file
TORCHELASTIC_ERROR_FILE names (the launcher sets it for each worker), and copies a child's
error file into its own when a launcher fails because of that child."""
import faulthandler
import json
import logging
import os
import time
import traceback
import warnings

__all__ = ["ErrorHandler"]

logger = logging.getLogger(__name__)


class ErrorHandler:
    """Records an exception, with the traceback and the time, in the error file named by
    TORCHELASTIC_ERROR_FILE; without that variable nothing is written. Subclasses may
    override `initialize()` and `record_exception()`."""

    def _get_error_file_path(self):
        """The error file's path, or None (the error is then not written)."""
        return os.environ.get("TORCHELASTIC_ERROR_FILE", None)

    def initialize(self) -> None:
        """Called before the code whose errors are to be recorded: turns on Python's fault
        handler, so a crash in native code still leaves a traceback on stderr."""
        try:
            faulthandler.enable(all_threads=True)
        except Exception as e:
            warnings.warn(f"Unable to enable fault handler. {type(e).__name__}: {e}",
                          stacklevel=2)

    def _write_error_file(self, file_path, error_msg):
        try:
            with open(file_path, "w") as fp:
                fp.write(error_msg)
        except Exception as e:
            warnings.warn(f"Unable to write error to file. {type(e).__name__}: {e}",
                          stacklevel=2)

    def record_exception(self, e: BaseException) -> None:
        """Write `e` (being handled now: its traceback is the current one) to the error
        file: {"message": {"message": "Type: text", "extraInfo": {"py_callstack":
        traceback, "timestamp": "seconds since the epoch"}}}."""
        path = self._get_error_file_path()
        if not path:
            return
        record = {"message": {"message": f"{type(e).__name__}: {e}", "extraInfo": {
            "py_callstack": traceback.format_exc(), "timestamp": str(int(time.time()))}}}
        with open(path, "w") as fp:
            json.dump(record, fp)

    def override_error_code_in_rootcause_data(self, rootcause_error_file, rootcause_error,
                                              error_code=0):
        """Put the child's exit code into its error record (a child killed by a signal could
        not write it itself)."""
        message = rootcause_error.get("message") if isinstance(rootcause_error, dict) else None
        if message is None:
            logger.warning("child error file (%s) does not have field `message`. \n"
                           "cannot override error code: %s", rootcause_error_file, error_code)
        elif isinstance(message, str):
            logger.warning("child error file (%s) has a new message format. \n"
                           "skipping error code override", rootcause_error_file)
        else:
            message["errorCode"] = error_code

    def dump_error_file(self, rootcause_error_file, error_code=0):
        """Copy the child's error record (with `error_code`, when given) into this process's
        own error file, replacing one that is already there."""
        with open(rootcause_error_file) as fp:
            rootcause_error = json.load(fp)
        if error_code:
            self.override_error_code_in_rootcause_data(rootcause_error_file, rootcause_error,
                                                       error_code)
        logger.debug("child error file (%s) contents:\n%s", rootcause_error_file,
                     json.dumps(rootcause_error, indent=2))
        own = self._get_error_file_path()
        if not own:
            logger.error("no error file defined for parent, to copy child error file (%s)",
                         rootcause_error_file)
            return
        # a child started with this process's environment may have written here already
        self._rm(own)
        self._write_error_file(own, json.dumps(rootcause_error))
        logger.info("dumped error file to parent's %s", own)

    def _rm(self, my_error_file):
        if not os.path.isfile(my_error_file):
            return
        with open(my_error_file) as fp:
            try:
                original = json.dumps(json.load(fp), indent=2)
                logger.warning("%s already exists and will be overwritten. Original "
                               "contents:\n%s", my_error_file, original)
            except json.decoder.JSONDecodeError:
                logger.warning("%s already exists and will be overwritten. Unable to load "
                               "original contents:\n", my_error_file)
        os.remove(my_error_file)
