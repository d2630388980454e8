"""`ember.utils.benchmark`, as torch.utils.benchmark: `Timer` times a Python statement with
`time.perf_counter` (synchronising the accelerator around each block), a `Measurement` holds
the times with their median, IQR and printout, and `Compare` prints many measurements as
PyTorch's table. The modules sit where PyTorch's do (`utils.common`, `utils.timer`,
`utils.compare`). Not here: the C++ timer, callgrind, and the fuzzers."""
from .utils.common import (Measurement, TaskSpec, ordered_unique, select_unit,
                           set_torch_threads, trim_sigfig, unit_to_english)
from .utils.compare import Colorize, Compare
from .utils.timer import Language, Timer, timer

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique", "set_torch_threads", "Timer", "timer", "Language", "Colorize",
           "Compare"]
