"""`ember.profiler`, as torch.profiler on a CPU: `profile` records the wall-clock time of every
ember op (and of each autograd node's backward) run inside it, grouped under
`record_function` regions; `key_averages().table()` prints PyTorch's table and
`export_chrome_trace` writes a trace chrome://tracing and Perfetto read.

Only CPU activity exists: asking for CUDA activity without a GPU warns as PyTorch does.
Memory, FLOPs, stacks and modules are not measured (those options are accepted).
The names live where PyTorch defines them: `profiler.py` (profile, schedule, the enums),
ember.autograd.profiler (record_function and the recording span) and
ember.autograd.profiler_util (the events).
"""
from ..autograd.profiler import record_function
from ..autograd.profiler_util import EventList, FunctionEvent, FunctionEventAvg
from .profiler import (DeviceType, ExecutionTraceObserver, ProfilerAction, ProfilerActivity,
                       kineto_available, profile, schedule, supported_activities,
                       tensorboard_trace_handler)

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "supported_activities", "tensorboard_trace_handler", "EventList", "FunctionEvent",
           "FunctionEventAvg", "DeviceType", "ExecutionTraceObserver", "kineto_available"]
