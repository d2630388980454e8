"""torch.sparse.check_sparse_tensor_invariants: the switch for checking the indices of sparse
tensors that constructors are not told to check (`check_invariants=None`), process-wide."""
import functools

from .. import _state


class check_sparse_tensor_invariants:
    """A tool to control checking sparse tensor invariants: `enable()` / `disable()` /
    `is_enabled()` set and read the default of the constructors' `check_invariants`; an
    instance is a context manager (`with check_sparse_tensor_invariants(enable=False):`) and a
    decorator, restoring the setting it found on the way out. While disabled (the default)
    a constructor not told either way warns once a process that it does not check."""

    @staticmethod
    def is_enabled():
        return _state.sparse_invariants.enabled

    @staticmethod
    def enable():
        _state.sparse_invariants.enabled = True

    @staticmethod
    def disable():
        _state.sparse_invariants.enabled = False

    def __init__(self, enable=True):
        self.state = enable
        self.saved_state = None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a "
                               "different context manager instance for context nesting.")
        self.saved_state = self.is_enabled()
        _state.sparse_invariants.enabled = self.state

    def __exit__(self, exc_type, exc_value, traceback):
        _state.sparse_invariants.enabled = self.saved_state
        self.saved_state = None

    def __call__(self, mth):
        @functools.wraps(mth)
        def test_mth(*args, **kwargs):
            with type(self)(self.state):
                return mth(*args, **kwargs)
        return test_mth
