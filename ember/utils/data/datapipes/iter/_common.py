"""Helpers the iterable DataPipes share."""


def _len_of(datapipe, source):
    """len(source), or torch's TypeError naming `datapipe` when the source has no length."""
    if hasattr(source, "__len__"):
        try:
            return len(source)
        except TypeError:
            pass
    raise TypeError(f"{type(datapipe).__name__} instance doesn't have valid length")


def _check_unpickable_fn(fn):
    """Lambdas and local functions cannot reach DataLoader workers; torch warns about them."""
    import functools
    import inspect
    import warnings
    if not callable(fn):
        raise TypeError(f"A callable function is expected, but {type(fn)} is provided.")
    while isinstance(fn, functools.partial):
        fn = fn.func
    if getattr(fn, "__name__", "") == "<lambda>" or "<locals>" in getattr(fn, "__qualname__", ""):
        if inspect.isfunction(fn):
            kind = "Lambda function" if fn.__name__ == "<lambda>" else "Local function"
            warnings.warn(f"{kind} is not supported by pickle, please use regular python "
                          "function or functools.partial instead.")
