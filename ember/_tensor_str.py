"""`torch._tensor_str`'s pieces that scripts reach for: PRINT_OPTS, the print options as
attributes (`PRINT_OPTS.precision`; assigning one changes printing, as set_printoptions
does), and `printoptions(**kwargs)`, a context manager that restores the options after."""
import contextlib

from . import _printing

__all__ = ["PRINT_OPTS", "printoptions"]


class _PrinterOptions:
    pass


PRINT_OPTS = _PrinterOptions()
PRINT_OPTS.__dict__ = _printing._OPTS  # the printer's own dict: reads and writes are live


@contextlib.contextmanager
def printoptions(**kwargs):
    old = _printing.get_printoptions()
    _printing.set_printoptions(**kwargs)
    try:
        yield
    finally:
        _printing.set_printoptions(**old)
