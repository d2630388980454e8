"""The whole wrong-call table, run on one library: what each call raises ("ok" for nothing)."""
import warnings

from .table import CASES as _CORE
from .table_nn import CASES as _NN

CASES = _CORE + _NN


def outcome(call, lib):
    """The name of the exception type `call(lib)` raises, or "ok"."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call(lib)
        except Exception as e:  # the type is the datum: any exception is an outcome
            return type(e).__name__
    return "ok"
