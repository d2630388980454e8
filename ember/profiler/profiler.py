"""`ember.profiler.profiler`, as torch.profiler.profiler: `profile` with schedules (wait,
warm up, record, save; `step()` moves along), `on_trace_ready` handlers such as
`tensorboard_trace_handler`, and the activity and action enums. Each recorded span is an
`ember.autograd.profiler.profile`."""
import enum
import os
import warnings

from ..autograd import profiler as _autograd_profiler
from ..autograd.profiler import record_function

__all__ = ["supported_activities", "ProfilerAction", "schedule", "tensorboard_trace_handler",
           "profile", "ProfilerActivity", "DeviceType", "ExecutionTraceObserver",
           "kineto_available"]

from ._execution_trace import ExecutionTraceObserver  # noqa: E402


def kineto_available():
    """Whether the profiler is PyTorch's Kineto library: ember's is its own recorder."""
    return False


# c10's device types, as the profiler's events name them (numbers as PyTorch's)
DeviceType = enum.Enum("DeviceType", [
    ("CPU", 0), ("CUDA", 1), ("MKLDNN", 2), ("OPENGL", 3), ("OPENCL", 4), ("IDEEP", 5),
    ("HIP", 6), ("FPGA", 7), ("MAIA", 8), ("XLA", 9), ("Vulkan", 10), ("Metal", 11),
    ("XPU", 12), ("MPS", 13), ("MTIA", 19), ("Meta", 14), ("HPU", 15), ("VE", 16),
    ("Lazy", 17), ("IPU", 18), ("PrivateUse1", 20)], module=__name__)


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    from .. import cuda
    found = {ProfilerActivity.CPU}
    if cuda.is_available():
        found.add(ProfilerActivity.CUDA)
    return found


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The action for each step: after `skip_first` steps, cycles of `wait` idle, `warmup`
    warming and `active` recorded steps (the last one saved), `repeat` times (0: forever);
    `skip_first_wait` drops the first cycle's wait."""
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    return schedule_fn


def _always_record(_):
    return ProfilerAction.RECORD


class profile:
    """Records the ops run between start() and stop() (or inside `with`); `step()` moves a
    `schedule` along."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None):
        activities = set(activities) if activities else supported_activities()
        if use_cuda is not None:
            warnings.warn("The use_cuda parameter is deprecated, please use activities "
                          "argument instead.", FutureWarning, stacklevel=2)
            if use_cuda:
                activities.add(ProfilerActivity.CUDA)
        if ProfilerActivity.CUDA in activities and \
                ProfilerActivity.CUDA not in supported_activities():
            warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
            activities.discard(ProfilerActivity.CUDA)
        self.activities = activities
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.on_trace_ready = on_trace_ready
        self.acc_events = acc_events
        self.execution_trace_observer = execution_trace_observer
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else _always_record
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._span = None
        self._step_region = None
        self._results = None
        self.profiler = None  # the autograd profile of the current (or last) recorded span

    # ---- recording ------------------------------------------------------------------------
    def _recording(self, action):
        return action in (ProfilerAction.WARMUP, ProfilerAction.RECORD,
                          ProfilerAction.RECORD_AND_SAVE)

    def _begin(self):
        if self.profiler is not None and not self.acc_events:
            _warn_once("Warning: Profiler clears events at the end of each cycle. Only events "
                       "from the current cycle will be reported. To keep events across "
                       "cycles, set acc_events=True.")
        self._span = self.profiler = _autograd_profiler.profile(
            record_shapes=self.record_shapes)
        self._span.__enter__()

    def _end(self, save):
        span, self._span = self._span, None
        span.__exit__(None, None, None)
        if save:
            events = span.function_events
            if self.acc_events and self._results is not None:  # every saved cycle's events
                events = type(events)(list(self._results) + list(events))
            self._results = events
            observer = self.execution_trace_observer
            if observer is not None and observer.is_registered:
                observer._add(span.function_events)  # the recorded ops go to its trace
                observer._write()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def _open_step(self):
        if self.record_steps and self._span is not None:
            self._step_region = record_function(f"ProfilerStep#{self.step_num}")
            self._step_region.__enter__()

    def _close_step(self):
        if self._step_region is not None:
            self._step_region.__exit__(None, None, None)
            self._step_region = None

    def start(self):
        if self._recording(self.current_action):
            self._begin()
            self._open_step()

    def stop(self):
        self._close_step()
        if self._span is not None:
            self._end(save=self.current_action != ProfilerAction.WARMUP)

    def step(self):
        self._close_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if self._span is not None:
            if previous == ProfilerAction.RECORD_AND_SAVE:
                self._end(save=True)
            elif previous == ProfilerAction.WARMUP:
                self._end(save=False)  # warm-up steps are not part of the result
        if self._span is None and self._recording(self.current_action):
            self._begin()
        self._open_step()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- results --------------------------------------------------------------------------
    def _require(self):
        if self._results is None:
            raise AssertionError("Expected profiling results")
        return self._results

    def events(self):
        return self._require()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self._require().key_averages(group_by_input_shape, group_by_stack_n,
                                            group_by_overload_name)

    def export_chrome_trace(self, path):
        """The trace as JSON for chrome://tracing and Perfetto (gzip-compressed when `path`
        ends with .gz). Returns None, as PyTorch's."""
        self._require().export_chrome_trace(path)


_warnings_shown = set()


def _warn_once(message):
    """As PyTorch's profiler: each of these warnings once a process."""
    if message not in _warnings_shown:
        _warnings_shown.add(message)
        warnings.warn(message, UserWarning, stacklevel=4)


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """An `on_trace_ready` handler writing each saved trace into `dir_name` as
    <worker_name>.<time in ns>.pt.trace.json[.gz] (worker_name: <host>_<pid>), the files
    TensorBoard's profiler plugin reads."""
    import socket
    import time

    def handler_fn(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"  # ns: names never clash
        if use_gzip:
            file_name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))
    return handler_fn

