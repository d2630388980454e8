"""`flags(...)`: the context manager each flag module offers, setting some of its module-level
flags for a block and putting the old values back after it (also after an exception)."""
import contextlib


@contextlib.contextmanager
def set_flags(module, **new):
    old = {name: getattr(module, name) for name in new}
    for name, value in new.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in old.items():
            setattr(module, name, value)
