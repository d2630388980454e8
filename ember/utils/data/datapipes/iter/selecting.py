"""Filter (`filter`): the items for which a predicate holds."""
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ._common import _check_unpickable_fn

__all__ = ["FilterIterDataPipe"]


@functional_datapipe("filter")
class FilterIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, filter_fn, input_col=None):
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(filter_fn)
        self.filter_fn = filter_fn
        self.input_col = input_col

    def _apply_filter_fn(self, data):
        if self.input_col is None:
            return self.filter_fn(data)
        if isinstance(self.input_col, (list, tuple)):
            return self.filter_fn(*(data[col] for col in self.input_col))
        return self.filter_fn(data[self.input_col])

    def __iter__(self):
        for data in self.datapipe:
            keep = self._apply_filter_fn(data)
            if not isinstance(keep, bool):
                raise ValueError("Boolean output is required for `filter_fn` of "
                                 f"FilterIterDataPipe, got {type(keep)}")
            if keep:
                yield data
