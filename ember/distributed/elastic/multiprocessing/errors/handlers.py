"""`get_error_handler`: the error handler `record` uses when it is given none."""
from .error_handler import ErrorHandler

__all__ = ["get_error_handler"]


def get_error_handler() -> ErrorHandler:
    return ErrorHandler()
