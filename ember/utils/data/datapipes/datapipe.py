"""IterDataPipe, MapDataPipe, DFIterDataPipe and DataChunk (torch.utils.data.datapipes.datapipe):
composable datasets whose registered functional forms chain them (`dp.map(f).batch(4)`)."""
import functools
import pickle

from ..dataset import Dataset, IterableDataset
from ._typing import _DataPipeMeta, _IterDataPipeMeta

__all__ = ["DataChunk", "DFIterDataPipe", "IterDataPipe", "MapDataPipe"]


class DataChunk(list):
    """A batch made by `.batch()`: a list that also keeps its items as `.items`."""

    def __init__(self, items):
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent=""):
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self):
        yield from super().__iter__()

    def raw_iterator(self):
        yield from self.items


def _functional_form(datapipe_cls, source_dp, *args, **kwargs):
    return datapipe_cls(source_dp, *args, **kwargs)


class _DataPipeBase:
    """What both DataPipe kinds share: functional forms, pickling hooks and printing."""
    getstate_hook = None
    reduce_ex_hook = None
    repr_hook = None
    str_hook = None

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register,
                                      enable_df_api_tracing=False):
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is "
                            "already taken")
        # (dataframe tracing, enable_df_api_tracing, belongs to torchdata's dataframes, which
        # ember does not have; the flag is accepted and ignored)
        function = functools.partial(_functional_form, cls_to_register)
        functools.update_wrapper(wrapper=function, wrapped=cls_to_register, assigned=("__doc__",))
        cls.functions[function_name] = function

    def __getattr__(self, attribute_name):
        functions = type(self)._functions_of_kind()
        if attribute_name in functions:
            function = functools.partial(functions[attribute_name], self)
            functools.update_wrapper(wrapper=function, wrapped=functions[attribute_name].func,
                                     assigned=("__doc__",))
            return function
        # torch's message lacks the closing quote; kept so both read the same
        raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                             f"'{attribute_name}")

    def __getstate__(self):
        if type(self).getstate_hook is not None:
            return type(self).getstate_hook(self)
        return self.__dict__

    def __reduce_ex__(self, *args, **kwargs):
        if type(self).reduce_ex_hook is not None:
            try:
                return type(self).reduce_ex_hook(self)
            except NotImplementedError:
                pass
        return super().__reduce_ex__(*args, **kwargs)

    @classmethod
    def set_getstate_hook(cls, hook_fn):
        if cls.getstate_hook is not None and hook_fn is not None:
            raise RuntimeError("Attempt to override existing getstate_hook")
        cls.getstate_hook = hook_fn

    @classmethod
    def set_reduce_ex_hook(cls, hook_fn):
        if cls.reduce_ex_hook is not None and hook_fn is not None:
            raise RuntimeError("Attempt to override existing reduce_ex_hook")
        cls.reduce_ex_hook = hook_fn

    def __repr__(self):
        if self.repr_hook is not None:
            return self.repr_hook(self)
        return str(type(self).__qualname__)

    def __str__(self):
        if self.str_hook is not None:
            return self.str_hook(self)
        return str(type(self).__qualname__)

    def __dir__(self):
        return list(super().__dir__()) + list(type(self)._functions_of_kind().keys())


class IterDataPipe(_DataPipeBase, IterableDataset, metaclass=_IterDataPipeMeta):
    """An iterable-style DataPipe: subclasses define `__iter__` (and `__len__` when known).
    Only one iterator per instance is valid at a time; `reset()` runs when one starts."""
    functions = {}
    _valid_iterator_id = None
    _number_of_samples_yielded = 0
    _snapshot_state = None
    _fast_forward_iterator = None

    @classmethod
    def _functions_of_kind(cls):
        return IterDataPipe.functions

    def __iter__(self):
        return self

    def reset(self):
        """Called when a new iterator starts; DataPipes with per-epoch state override it."""


class DFIterDataPipe(IterDataPipe):
    def _is_dfpipe(self):
        return True


class MapDataPipe(_DataPipeBase, Dataset, metaclass=_DataPipeMeta):
    """A map-style DataPipe: subclasses define `__getitem__` and `__len__`."""
    functions = {}

    @classmethod
    def _functions_of_kind(cls):
        return MapDataPipe.functions


class _DataPipeSerializationWrapper:
    """What the DataLoader hands to workers: the DataPipe pickled whole (with dill when a
    lambda needs it and dill is installed)."""

    def __init__(self, datapipe):
        self._datapipe = datapipe

    def __getstate__(self):
        try:
            return pickle.dumps(self._datapipe), False
        except (pickle.PicklingError, AttributeError, TypeError) as error:  # a lambda ...
            try:
                import dill
            except ImportError:
                raise error from None
            return dill.dumps(self._datapipe), True

    def __setstate__(self, state):
        value, use_dill = state
        if use_dill:
            import dill
            self._datapipe = dill.loads(value)
        else:
            self._datapipe = pickle.loads(value)

    def __len__(self):
        try:
            return len(self._datapipe)
        except Exception as e:
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length") from e


class _IterDataPipeSerializationWrapper(_DataPipeSerializationWrapper, IterDataPipe):
    def __init__(self, datapipe):
        super().__init__(datapipe)
        self._datapipe_iter = None

    def __iter__(self):
        self._datapipe_iter = iter(self._datapipe)
        return self

    def __next__(self):
        return next(self._datapipe_iter)


class _MapDataPipeSerializationWrapper(_DataPipeSerializationWrapper, MapDataPipe):
    def __getitem__(self, idx):
        return self._datapipe[idx]
