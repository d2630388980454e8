"""`Compare`: measurements printed as tables, one per label, a row per sub_label (or stmt)
grouped by thread count, a column per description; each cell is the median in one shared
unit, optionally trimmed to its significant figures and coloured against the best."""
import collections
import enum

import numpy as np

from . import common

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(value):
    return int(np.ceil(np.log10(np.float32(value))))


class _Column:
    """One description's cells: a number format wide enough for all of them."""

    def __init__(self, grouped_results, time_scale, trim_significant_figures,
                 highlight_warnings):
        self._grouped_results = grouped_results
        flat = [m for group in grouped_results for m in group]
        self._trim = trim_significant_figures
        self._highlight = highlight_warnings and any(m.has_warnings for m in flat if m)
        digits = [(m, _leading_digits(m.median / time_scale)) for m in flat if m is not None]
        unit_digits = max(d for _, d in digits)
        decimals = (min(max(m.significant_figures - d, 0) for m, d in digits)
                    if self._trim else 1)
        width = unit_digits + decimals + (1 if decimals else 0)
        self._template = f"{{:>{width}.{decimals}f}}{{:>{7 if self._highlight else 0}}}"

    def get_results_for(self, group):
        return self._grouped_results[group]

    def num_to_str(self, value, estimated_sigfigs, spread):
        if value is None:
            return " " * len(self.num_to_str(1, estimated_sigfigs, None))
        if self._trim:
            value = common.trim_sigfig(value, estimated_sigfigs)
        flag = f" (! {spread * 100:.0f}%)" if self._highlight and spread is not None else ""
        return self._template.format(value, flag)


def _color(segment, value, best):
    if value <= best * 1.01 or value <= best + 1e-7:
        return BEST + BOLD + segment + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + segment + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + segment + TERMINATE * 2
    if value >= best * 2:
        return BAD + segment + TERMINATE * 2
    return segment


class _Row:
    def __init__(self, results, row_group, render_env, env_str_len, time_scale, colorize,
                 num_threads):
        self._results = results
        self._row_group = row_group
        self._render_env = render_env
        self._env_str_len = env_str_len
        self._time_scale = time_scale
        self._colorize = colorize
        self._num_threads = num_threads  # set on the first row of a thread group
        self._columns = ()

    def as_column_strings(self):
        first = next(r for r in self._results if r is not None)
        env = (f"({first.env})" if self._render_env else "").ljust(self._env_str_len + 4)
        cells = ["  " + env + first.as_row_name]
        for m, column in zip(self._results, self._columns):
            if m is None:
                cells.append(column.num_to_str(None, 1, None))
            else:
                cells.append(column.num_to_str(m.median / self._time_scale,
                                               m.significant_figures,
                                               m.iqr / m.median if m.has_warnings else None))
        return cells

    def row_separator(self, overall_width):
        if self._num_threads is None:
            return []
        return [f"{self._num_threads} threads: ".ljust(overall_width, "-")]

    def _best_values(self, count):
        if self._colorize == Colorize.ROWWISE:
            return [min(r.median for r in self._results if r is not None)] * count
        if self._colorize == Colorize.COLUMNWISE:
            return [min((r.median for r in c.get_results_for(self._row_group) if r is not None),
                        default=None) for c in self._columns]
        return [None] * count

    def finalize_column_strings(self, cells, widths):
        out = [cells[0].ljust(widths[0])]
        for cell, width, result, best in zip(cells[1:], widths[1:], self._results,
                                             self._best_values(len(cells))):
            cell = cell.center(width)
            if result is not None and best is not None:
                cell = _color(cell, result.median, best)
            out.append(cell)
        return out


class Table:
    """The table of one label's measurements."""

    def __init__(self, results, colorize, trim_significant_figures, highlight_warnings):
        if len({r.label for r in results}) != 1:
            raise AssertionError("All results must share the same label")
        self.results = results
        self._colorize = colorize
        self._trim = trim_significant_figures
        self._highlight = highlight_warnings
        self.label = results[0].label
        self.time_unit, self.time_scale = common.select_unit(min(r.median for r in results))
        self.row_keys = common.ordered_unique(self.row_fn(r) for r in results)
        self.row_keys.sort(key=lambda key: key[:2])  # by threads, then env; stable otherwise
        self.column_keys = common.ordered_unique(self.col_fn(r) for r in results)
        self.rows, self.columns = self.populate_rows_and_columns()

    @staticmethod
    def row_fn(m):
        return m.num_threads, m.env, m.as_row_name

    @staticmethod
    def col_fn(m):
        return m.description

    def populate_rows_and_columns(self):
        row_at = {key: i for i, key in enumerate(self.row_keys)}
        col_at = {key: j for j, key in enumerate(self.column_keys)}
        grid = [[None] * len(self.column_keys) for _ in self.row_keys]
        for r in self.results:
            grid[row_at[self.row_fn(r)]][col_at[self.col_fn(r)]] = r
        envs = {r.env for r in self.results}
        render_env = len(envs) > 1
        env_str_len = max(len(e) for e in envs) if render_env else 0
        rows, groups = [], []
        prior_threads, prior_env = -1, ""
        for (threads, env, _), cells in zip(self.row_keys, grid):
            new_group = threads != prior_threads
            if new_group:
                prior_threads, prior_env = threads, ""
                groups.append([])
            rows.append(_Row(cells, len(groups) - 1, render_env and env != prior_env,
                             env_str_len, self.time_scale, self._colorize,
                             threads if new_group else None))
            groups[-1].append(cells)
            prior_env = env
        columns = tuple(
            _Column([tuple(cells[j] for cells in group) for group in groups], self.time_scale,
                    self._trim, self._highlight)
            for j in range(len(self.column_keys)))
        for row in rows:
            row._columns = columns
        return tuple(rows), columns

    def render(self):
        string_rows = [[""] + self.column_keys] + [r.as_column_strings() for r in self.rows]
        count = max(len(r) for r in string_rows)
        for r in string_rows:
            r.extend([""] * (count - len(r)))
        widths = [max(len(cell) for cell in column) for column in zip(*string_rows)]
        lines = ["  |  ".join(c.center(w) for c, w in zip(string_rows[0], widths))]
        overall = len(lines[0])
        for cells, row in zip(string_rows[1:], self.rows):
            lines.extend(row.row_separator(overall))
            lines.append("  |  ".join(row.finalize_column_strings(cells, widths)))
        title = (" " + (self.label or "") + " ").center(overall - 2, "-")
        text = (f"[{title}]\n" + "\n".join(lines) + "\n\nTimes are in "
                f"{common.unit_to_english(self.time_unit)}s ({self.time_unit}).\n")
        if self._highlight and any(r.has_warnings for r in self.results):
            text += ("(! XX%) Measurement has high variance, where XX is the IQR / median "
                     "* 100.\n")
        return text


class Compare:
    """Collects Measurements and prints them, one table per label."""

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self):
        return "\n".join(self._render())

    def extend_results(self, results):
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} "
                                 "instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def _render(self):
        by_label = collections.defaultdict(list)
        for m in common.Measurement.merge(self._results):
            by_label[m.label].append(m)
        return [Table(group, self._colorize, self._trim_significant_figures,
                      self._highlight_warnings).render() for group in by_label.values()]
