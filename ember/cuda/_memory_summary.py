"""memory_summary's table: the allocator's statistics, one row per metric and pool, in the
layout PyTorch prints (sizes scaled to B/KiB/MiB..., counts to K/M by the row's first value)."""

_SIZE_UNITS = ("B  ", "KiB", "MiB", "GiB", "TiB", "PiB")
_COUNT_UNITS = (" ", "K", "M")
_WIDTH = 75


def _size(value, scale_by):
    unit = _SIZE_UNITS[0]
    for next_unit in _SIZE_UNITS[1:]:
        if scale_by < 768 * 1024:
            break
        unit, value, scale_by = next_unit, value // 1024, scale_by / 1024
    return f"{value:6d} {unit}"


def _count(value, scale_by):
    unit = _COUNT_UNITS[0]
    for next_unit in _COUNT_UNITS[1:]:
        if scale_by < 750 * 1000:
            break
        unit, value, scale_by = next_unit, value // 1000, scale_by / 1000
    return f"{value:7d} {unit} "


_PER_POOL_ROWS = (("allocated_bytes", "Allocated memory", _size),
                  ("active_bytes", "Active memory", _size),
                  ("requested_bytes", "Requested memory", _size),
                  ("reserved_bytes", "GPU reserved memory", _size),
                  ("inactive_split_bytes", "Non-releasable memory", _size),
                  ("allocation", "Allocations", _count),
                  ("active", "Active allocs", _count),
                  ("segment", "GPU reserved segments", _count),
                  ("inactive_split", "Non-releasable allocs", _count))
_WHOLE_ROWS = (("oversize_allocations", "Oversize allocations"),
               ("oversize_segments", "Oversize GPU segments"))
_FIELDS = ("current", "peak", "allocated", "freed")


def _row(label, values, scales, formatter):
    cells = " | ".join(formatter(v, s) for v, s in zip(values, scales))
    return f" {label:<21} | {cells} "


def format_summary(stats, device, abbreviated):
    """`stats` (memory_stats' flat dict; without CUDA it is empty, and the first statistic
    looked up raises KeyError, as PyTorch's does)."""
    lines = []
    for key, label, formatter in _PER_POOL_ROWS:
        lines.append("-" * _WIDTH)
        pools = [("all", label)]
        if not abbreviated:
            pools += [("large_pool", "      from large pool"), ("small_pool",
                                                                "      from small pool")]
        scales = None
        for pool, pool_label in pools:
            values = [stats[f"{key}.{pool}.{field}"] for field in _FIELDS]
            scales = scales or values  # the pools' rows scale as the "all" row does
            lines.append(_row(pool_label, values, scales, formatter))
    for key, label in _WHOLE_ROWS:
        lines.append("-" * _WIDTH)
        values = [stats[f"{key}.{field}"] for field in _FIELDS]
        lines.append(_row(label, values, values, _count))
    lines.append("=" * _WIDTH)
    header = ["=" * _WIDTH,
              f" {'':16} PyTorch CUDA memory summary, device ID {device:<17d} ",
              "-" * _WIDTH,
              f"  {'':9} CUDA OOMs: {stats['num_ooms']:<12d} | {'':6} cudaMalloc retries: "
              f"{stats['num_alloc_retries']:<8d}  ",
              "=" * _WIDTH,
              "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  "]
    lines = header + lines
    return "|" + "|\n|".join(lines) + "|\n"
