"""`ExecutionTraceObserver`: records every op ember runs between start() and stop() as an
execution trace (a JSON graph of op nodes, each with its parent, thread, inputs' shapes and
times, in the layout of PyTorch's Chakra execution traces), written to the registered file
(gzip-compressed where it ends in .gz). With `torch.profiler.profile(
execution_trace_observer=et)`, the profile's recorded steps go to the trace."""
import gzip
import json
import os
import tempfile
import time
import warnings

from ..autograd.profiler_util import build_events
from . import _recorder

__all__ = ["ExecutionTraceObserver"]

_SCHEMA = "1.1.1-chakra.0.0.4"
_ROOT_ID = 1


class ExecutionTraceObserver:
    def __init__(self):
        self._registered = False
        self._execution_trace_running = False
        self._recorder = None
        self._nodes = []
        self._start_ts = None
        self.extra_resources_collection = False
        self.resources_dir = ""
        self.output_file_path = ""

    def __del__(self):
        self.unregister_callback()

    @staticmethod
    def build_execution_trace_obs_from_env():
        """An observer writing to a new temporary file, where ENABLE_PYTORCH_EXECUTION_TRACE
        is 1 (else None)."""
        if os.environ.get("ENABLE_PYTORCH_EXECUTION_TRACE", "0") != "1":
            return None
        try:
            with tempfile.NamedTemporaryFile("w+t", suffix=".et.json", delete=False) as f:
                filename = f.name
        except OSError as error:
            warnings.warn(f"Execution trace will not be recorded. Exception on creating "
                          f"default temporary file: {error}", stacklevel=2)
            return None
        observer = ExecutionTraceObserver().register_callback(filename)
        observer.set_extra_resource_collection(
            os.environ.get("ENABLE_PYTORCH_EXECUTION_TRACE_EXTRAS", "0") == "1")
        return observer

    def set_extra_resource_collection(self, val):
        self.extra_resources_collection = val
        if val:
            self.get_resources_dir(can_create=True)

    def register_callback(self, output_file_path):
        """Write the trace to `output_file_path` when recording stops."""
        if not self._registered:
            self.output_file_path = output_file_path
            self._registered = True
        return self

    def get_resources_dir(self, can_create=False):
        if not self.extra_resources_collection:
            return None
        if not self.resources_dir:
            path = self.get_resources_dir_for_et_path(self.output_file_path, can_create)
            if not path:
                return None
            self.resources_dir = path
        return self.resources_dir

    @staticmethod
    def get_resources_dir_for_et_path(trace_path, create_dir=False):
        """`trace.json` -> `trace_resources/` beside it (made where asked; None if absent)."""
        directory, name = os.path.split(trace_path)
        resources = os.path.join(directory, os.path.splitext(name)[0] + "_resources")
        if not os.path.exists(resources):
            if not create_dir:
                return None
            try:
                os.mkdir(resources)
            except OSError:
                warnings.warn(f"Execution trace exception when creating {resources}",
                              stacklevel=2)
                return None
        return resources

    def unregister_callback(self):
        if self._registered:
            self.stop()
            self._registered = False

    @property
    def is_registered(self):
        return self._registered

    def is_running(self):
        return self._execution_trace_running

    def start(self):
        """Record the ops from now on (on its own, without a profiler)."""
        if self._registered and not self._execution_trace_running:
            self._nodes, self._start_ts = [], time.time_ns() // 1000
            self._recorder = _recorder.Recorder(record_shapes=True)
            _recorder.start(self._recorder)
            self._execution_trace_running = True

    def stop(self):
        """Stop recording and write the trace."""
        if self._execution_trace_running:
            recorder, self._recorder = self._recorder, None
            _recorder.stop(recorder)
            self._execution_trace_running = False
            self._add(build_events(recorder.events, recorder.base_ns, recorder.wall_base_us))
            self._write()

    def cleanup(self):
        self.unregister_callback()

    def get_output_file_path(self):
        return self.output_file_path or None

    # ---- the trace ----------------------------------------------------------------------
    def _add(self, events):
        """Nodes for `events` (FunctionEvents, parents before children)."""
        if not self._nodes:
            self._nodes.append({"id": _ROOT_ID, "name": "[pytorch|profiler|execution_trace|"
                                "process]", "ctrl_deps": 0, "inputs": _values([]),
                                "outputs": _values([]), "attrs": []})
        ids = {}
        for event in sorted(_walk(events), key=lambda e: e.time_range.start):
            node_id = len(self._nodes) + 1
            ids[id(event)] = node_id
            parent = ids.get(id(event.cpu_parent), _ROOT_ID)
            self._nodes.append({
                "id": node_id, "name": event.name, "ctrl_deps": parent,
                "inputs": _values(event.input_shapes), "outputs": _values([]),
                "attrs": [{"name": "rf_id", "type": "uint64", "value": node_id},
                          {"name": "fw_parent", "type": "uint64", "value": 0},
                          {"name": "seq_id", "type": "int64", "value": -1},
                          {"name": "scope", "type": "uint64", "value": 0},
                          {"name": "tid", "type": "uint64", "value": event.thread},
                          {"name": "fw_tid", "type": "uint64", "value": 0},
                          {"name": "op_schema", "type": "string", "value": ""},
                          {"name": "kernel_backend", "type": "string", "value": ""},
                          {"name": "kernel_file", "type": "string", "value": ""}],
                "start_us": event.time_range.start, "dur_us": event.time_range.elapsed_us()})

    def _write(self):
        trace = {"schema": _SCHEMA, "pid": os.getpid(), "time": time.strftime(
            "%Y-%m-%d %H:%M:%S"), "start_ts": self._start_ts or time.time_ns() // 1000,
            "nodes": self._nodes, "finish_ts": time.time_ns() // 1000}
        data = json.dumps(trace, indent=2).encode()
        opener = gzip.open if self.output_file_path.endswith(".gz") else open
        with opener(self.output_file_path, "wb") as f:
            f.write(data)


def _walk(events):
    """Every event of `events` and all their descendants, once."""
    seen, stack = set(), list(events)
    while stack:
        event = stack.pop()
        if id(event) not in seen:
            seen.add(id(event))
            yield event
            stack.extend(event.cpu_children)


def _values(shapes):
    return {"values": [[] for _ in shapes], "shapes": [list(s) for s in shapes],
            "types": ["Tensor" if s else "" for s in shapes]}
