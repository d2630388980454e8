"""`ember.autograd.profiler`, as torch.autograd.profiler: the recording profiler `profile`
(the wall-clock time of every ember op and autograd node run inside it; `torch.profiler`'s
schedules build on it), `record_function` regions, and the annotators `emit_nvtx` (each op
an NVTX range, through CuPy) and `emit_itt`.

The recorder that wraps the ops lives in ember.profiler._recorder (it reaches the public
functions, so this module sits on floor 5 though its folder is autograd's); it is imported
when a recording starts."""
import contextlib
import ctypes
import ctypes.util
import time
import warnings

from .. import _state
from .profiler_util import EventList, FunctionEvent, MemRecordsAcc, build_events

__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx", "EventList",
           "FunctionEvent", "EnforceUnique", "KinetoStepTracker", "MemRecordsAcc",
           "load_nvprof", "parse_nvprof_trace"]


class record_function(contextlib.ContextDecorator):
    """A named region in the profile (a context manager or a decorator); nothing is done when
    no profiler records."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._open = []

    def __enter__(self):
        recorder = _state.profiler.active
        self._open.append((recorder, None if recorder is None
                           else recorder.open(self.name, annotation=True)))
        return self

    def __exit__(self, *exc):
        recorder, event = self._open.pop()
        if event is not None:
            recorder.close(event)
        return False


class profile:
    """Records the ops run inside `with profile() as prof:`; then `prof.function_events`,
    `key_averages()`, `table()` and `export_chrome_trace()`. Only CPU time is measured:
    the device, memory, FLOPs and stack options are accepted."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        self.enabled = enabled
        self.use_cuda = use_cuda
        self.use_device = "cuda" if use_cuda and use_device is None else use_device
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.entered = False
        self.function_events = None
        self._recorder = None
        self.profiling_start_time_ns = self.profiling_end_time_ns = 0

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        from ..profiler import _recorder
        self.entered = True
        self._recorder = _recorder.Recorder(self.record_shapes)
        _recorder.start(self._recorder)
        self.profiling_start_time_ns = time.perf_counter_ns()
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        from ..profiler import _recorder
        recorder, self._recorder = self._recorder, None
        _recorder.stop(recorder)
        self.profiling_end_time_ns = time.perf_counter_ns()
        events = build_events(recorder.events, recorder.base_ns, recorder.wall_base_us)
        if self.acc_events and self.function_events is not None:
            events = EventList(list(self.function_events) + list(events))
        self.function_events = events
        self.entered = False
        return False

    def __repr__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self.function_events)

    def __str__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self.function_events)

    def _events(self):
        if self.function_events is None:
            raise AssertionError("Expected profiling results")
        return self.function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        return self._events().table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    def export_chrome_trace(self, path, metadata=None, use_python_export=False):
        return self._events().export_chrome_trace(path)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self._events().key_averages(group_by_input_shape, group_by_stack_n,
                                           group_by_overload_name)

    def total_average(self):
        return self._events().total_average()

    @property
    def self_cpu_time_total(self):
        return self._events().self_cpu_time_total


class _NvtxRanges:
    """A recorder (the protocol the op wrappers and the engine speak) that opens an NVTX
    range for each op instead of timing it, so Nsight Systems shows ember's ops."""

    def __init__(self, nvtx, shapes_of):
        self._nvtx = nvtx
        self._shapes_of = shapes_of  # None: names only

    def open(self, name, args=(), kwargs=None, annotation=False):
        if self._shapes_of is not None and not annotation:
            name = f"{name}, sizes = {self._shapes_of(args, kwargs)}"
        self._nvtx.RangePush(name)
        return name

    def close(self, event):
        self._nvtx.RangePop()


def _cuda_synchronize():
    from ..device import backend_of, device
    backend_of(device("cuda")).xp.cuda.runtime.deviceSynchronize()


class emit_nvtx:
    """Every op (and autograd node) inside `with` is an NVTX range, named as PyTorch names
    them (with the input sizes when `record_shapes`), for Nsight Systems and nvprof. Needs
    CUDA (CuPy); not reentrant."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes
        self._ranges = None

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        from ..device import backend_of, device
        from ..profiler import _recorder
        cupy = backend_of(device("cuda")).xp  # PyTorch's error when there is no CUDA
        self.entered = True
        cupy.cuda.runtime.deviceSynchronize()
        self._ranges = _NvtxRanges(cupy.cuda.nvtx,
                                   _recorder.input_shapes if self.record_shapes else None)
        _recorder.start(self._ranges)
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        from ..profiler import _recorder
        _cuda_synchronize()
        _recorder.stop(self._ranges)
        self._ranges = None
        return False


class emit_itt:
    """Intel VTune's ITT annotations of each op. ember has no binding to the ITT collector,
    so the block runs unannotated: what PyTorch's does when VTune is not attached. Kept for
    scripts that wrap their loop in it; not reentrant, as PyTorch's."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("ITT annotation context manager is not reentrant")
        self.entered = True
        return self

    def __exit__(self, *exc):
        return False


# ---- nvprof traces ----------------------------------------------------------------------------

class EnforceUnique:
    """Raises if a key is seen twice."""

    def __init__(self):
        self.seen = set()

    def see(self, *key):
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


def _demangler():
    """C++'s demangler (libstdc++'s __cxa_demangle), or None where it cannot be loaded."""
    try:
        library = ctypes.CDLL(ctypes.util.find_library("stdc++") or "libstdc++.so.6")
        demangle = library.__cxa_demangle
    except (OSError, AttributeError):
        return None
    demangle.restype = ctypes.c_void_p
    demangle.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.POINTER(ctypes.c_int)]
    free = ctypes.CDLL(None).free
    free.argtypes = [ctypes.c_void_p]

    def run(name):
        status = ctypes.c_int()
        result = demangle(name.encode(), None, None, ctypes.byref(status))
        if status.value != 0 or not result:
            return name
        try:
            return ctypes.string_at(result).decode(errors="replace")
        finally:
            free(result)
    return run


# An nvprof database: markers (emit_nvtx's ranges: a row with the name at the start, one with
# name 0 at the end, sharing an id), runtime API calls, and kernels joined to the calls that
# launched them by correlation id.
_RANGES = """
    SELECT opened.id AS range_id, opened.name AS name, opened.timestamp AS start_ns,
           closed.timestamp AS end_ns
    FROM CUPTI_ACTIVITY_KIND_MARKER AS opened
    JOIN CUPTI_ACTIVITY_KIND_MARKER AS closed ON closed.id = opened.id
    WHERE opened.name != 0 AND closed.name = 0"""
_LAUNCHES = """
    SELECT opened.id AS range_id, call._id_ AS call_id, call.cbid AS cbid,
           kernel.name AS kernel_name, kernel.start AS kernel_start, kernel.end AS kernel_end
    FROM CUPTI_ACTIVITY_KIND_MARKER AS opened
    JOIN CUPTI_ACTIVITY_KIND_MARKER AS closed ON closed.id = opened.id
    JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS call
        ON opened.timestamp < call.start AND call.end < closed.timestamp
    JOIN CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL AS kernel
        ON kernel.correlationId = call.correlationId"""
_CUDA_LAUNCH_KERNEL = 211  # the runtime's callback id of cudaLaunchKernel (CUDA >= 9.2)


def parse_nvprof_trace(path):
    """The ranges of an nvprof database (`nvprof -o trace.prof` around `emit_nvtx`) as
    FunctionEvents, each with the kernels launched inside it; sorted by start."""
    import sqlite3
    connection = sqlite3.connect(path)
    connection.row_factory = sqlite3.Row
    demangle = _demangler() or (lambda name: name)
    try:
        strings = {row["id"]: demangle(row["value"]) for row in
                   connection.execute("SELECT _id_ AS id, value FROM StringTable")}
        events, by_id, unique = [], {}, EnforceUnique()
        for row in connection.execute(_RANGES):
            unique.see(row["range_id"])
            event = FunctionEvent(row["range_id"], strings[row["name"]], 0, row["start_ns"],
                                  row["end_ns"], [], False)
            events.append(event)
            by_id[event.id] = event
        unique = EnforceUnique()
        for row in connection.execute(_LAUNCHES):
            unique.see(row["range_id"], row["call_id"])
            if row["cbid"] != _CUDA_LAUNCH_KERNEL:
                raise AssertionError(f"Expected cbid to be 211, but got {row['cbid']}")
            by_id[row["range_id"]].append_kernel(strings.get(row["kernel_name"],
                                                             row["kernel_name"]), 0,
                                                 row["kernel_end"] - row["kernel_start"])
    finally:
        connection.close()
    events.sort(key=lambda event: event.time_range.start)
    return events


def load_nvprof(path):
    """An nvprof database's ranges as an EventList."""
    return EventList(parse_nvprof_trace(path))


class KinetoStepTracker:
    """One global step count, advanced by several requesters (the profiler's step(), each
    optimizer's step hook ...) each counting its own steps: the global count is the largest,
    so two requesters stepping once each advance it once."""

    _current_step = 0
    _step_dict = {}

    @classmethod
    def init_step_count(cls, requester):
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester):
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester):
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        new_step = max(cls._step_dict.values())
        if new_step > cls._current_step:
            if new_step - cls._current_step > 1:
                warnings.warn(f"Profiler step count has increased more than 1 - current_step = "
                              f"{cls._current_step} step dict =  {cls._step_dict}",
                              stacklevel=2)
            cls._current_step = new_step
        return cls._current_step

    @classmethod
    def current_step(cls):
        return cls._current_step
