"""`ember.autograd.profiler_util`, as torch.autograd.profiler_util: the profiler's results.
`FunctionEvent` (one recorded call), `FunctionEventAvg` (calls grouped by name), `EventList`
with `table()`, and the chrome trace. Times are in microseconds."""
import bisect
import gzip
import json
import os

__all__ = ["EventList", "Interval", "FunctionEvent", "FunctionEventAvg", "Kernel",
           "MemRecordsAcc"]


def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_share(us, total):
    if total == 0:
        return "NaN"
    return f"{us * 100.0 / total:.2f}%"


class Interval:
    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class _Times:
    """The derived timing properties shared by single and averaged events."""

    device_time_total = self_device_time_total = 0
    cpu_memory_usage = self_cpu_memory_usage = 0
    device_memory_usage = self_device_memory_usage = 0
    flops = 0
    is_async = False
    is_legacy = False
    is_remote = False
    node_id = -1
    use_device = None
    overload_name = ""
    stack = None
    scope = 0

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0

    cuda_time = device_time

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)


class FunctionEvent(_Times):
    def __init__(self, id, name, thread, start_us, end_us, input_shapes, is_user_annotation):
        self.id = id
        self.name = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes
        self.is_user_annotation = is_user_annotation
        self.kernels = []  # the GPU kernels the op launched (from an nvprof trace)
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time="
                f"{self.cpu_time_total_str} start_us={self.time_range.start:.3f} end_us="
                f"{self.time_range.end:.3f} cpu_children={[c.id for c in self.cpu_children]} "
                f"input_shapes={self.input_shapes} thread={self.thread}>")


    def append_kernel(self, name, device, duration):
        """A GPU kernel this op launched, which ran `duration` microseconds on `device`."""
        self.kernels.append(Kernel(name, device, duration))


class Kernel:
    __slots__ = ("name", "device", "duration")

    def __init__(self, name, device, duration):
        self.name, self.device, self.duration = name, device, duration

    def __repr__(self):
        return f"Kernel(name={self.name!r}, device={self.device}, duration={self.duration})"


class MemRecordsAcc:
    """Memory records, sorted once by start time, for finding those in an interval fast.
    Each record is a sequence whose first item has `start_ns()`."""

    def __init__(self, mem_records):
        self._mem_records = mem_records
        order = sorted(range(len(mem_records)), key=lambda i: mem_records[i][0].start_ns())
        self._indices = order
        self._start_nses = [mem_records[i][0].start_ns() for i in order]

    def in_interval(self, start_ns, end_ns):
        """The records that start between `start_ns` and `end_ns` (both included)."""
        first = bisect.bisect_left(self._start_nses, start_ns)
        last = bisect.bisect_right(self._start_nses, end_ns)
        for position in range(first, last):
            yield self._mem_records[self._indices[position]]


class FunctionEventAvg(_Times):
    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes = None
        self.cpu_parent = None
        self.cpu_children = None
        self.is_user_annotation = False

    def add(self, other):
        if self.count == 0:
            if self.key is None:
                self.key = other.key
            self.input_shapes = other.input_shapes
            self.is_user_annotation = other.is_user_annotation
            self.cpu_parent = other.cpu_parent
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        shapes = "" if self.input_shapes is None else self.input_shapes
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str}"
                f" cpu_time={self.cpu_time_total_str}  self_cuda_time=0.000us cuda_time=0.000us"
                f" input_shapes={shapes} cpu_memory_usage=0 cuda_memory_usage=0>")


class EventList(list):
    def __init__(self, *args, **kwargs):
        kwargs.pop("use_device", None)
        kwargs.pop("profile_memory", None)
        kwargs.pop("with_flops", None)
        super().__init__(*args, **kwargs)

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        groups = {}
        for event in self:
            name = event.key
            if name.startswith("ProfilerStep#"):
                name = "ProfilerStep*"  # every step under one row, as PyTorch groups them
            key = (name, str(event.input_shapes)) if group_by_input_shape else name
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg()
                avg.key = name
            avg.add(event)
        averaged = EventList(groups.values())
        if not group_by_input_shape:
            for avg in averaged:
                avg.input_shapes = None
        return averaged

    def total_average(self):
        total = FunctionEventAvg()
        for event in self:
            total.add(event)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        return _build_table(self, sort_by, row_limit, max_name_column_width,
                            max_shapes_column_width, header, top_level_events_only, time_unit)

    def export_chrome_trace(self, path):
        trace = {"traceEvents": [], "displayTimeUnit": "ms"}
        pid = os.getpid()
        for i, e in enumerate(self):
            if not isinstance(e, FunctionEvent):
                continue
            trace["traceEvents"].append({
                "ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                "name": e.name, "pid": pid, "tid": e.thread, "ts": e.time_range.start,
                "dur": e.cpu_time_total,
                "args": {"External id": e.id, "Ev Idx": i,
                         **({"Input Dims": e.input_shapes} if e.input_shapes else {})}})
        opener = gzip.open if str(path).endswith(".gz") else open  # a .gz path is compressed
        with opener(path, "wt") as f:
            json.dump(trace, f)
        return path

    def __str__(self):
        return self.table()


def _build_table(events, sort_by, row_limit, max_name_width, max_shapes_width, header,
                 top_level_only, time_unit):
    if len(events) == 0:
        return ""
    if sort_by is not None:
        key = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, key), reverse=True)
    has_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_width is not None:
        name_width = min(name_width, max_name_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_width is not None:
        shapes_width = min(shapes_width, max_shapes_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
               "# of Calls"]
    widths = [name_width] + [12] * 6
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2
    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [sep, row_format.format(*headers), sep]

    def fmt(us):
        if time_unit == "s":
            return f"{us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{us:.3f}us"
        return _format_time(us)
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_width is not None and len(name) >= max_name_width - 3:
            name = name[:max_name_width - 3] + "..."
        row = [name, _format_share(e.self_cpu_time_total, total), fmt(e.self_cpu_time_total),
               _format_share(e.cpu_time_total, total), fmt(e.cpu_time_total), fmt(e.cpu_time),
               e.count]
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        lines.append(row_format.format(*row))
    lines += [sep, f"Self CPU time total: {fmt(total)}"]
    return "".join(line + "\n" for line in lines)


def build_events(raw_events, base_ns, wall_base_us):
    """FunctionEvents (with parents and children) from the recorder's raw events."""
    made = {}
    out = EventList()
    for i, raw in enumerate(raw_events):
        if raw.end_ns is None:
            continue
        start = wall_base_us + (raw.start_ns - base_ns) / 1e3
        end = wall_base_us + (raw.end_ns - base_ns) / 1e3
        event = FunctionEvent(i + 1, raw.name, raw.thread, start, end, raw.shapes,
                              raw.annotation)
        made[id(raw)] = event
        out.append(event)
    for raw in raw_events:
        event = made.get(id(raw))
        if event is None or raw.parent is None:
            continue
        parent = made.get(id(raw.parent))
        if parent is not None:
            event.cpu_parent = parent
            parent.cpu_children.append(event)
    return out

