"""Mapper (`map`) and Collator (`collate`): a function applied to every item, or to chosen
columns of it."""
from ..._collate import default_collate
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ._common import _check_unpickable_fn, _len_of

__all__ = ["CollatorIterDataPipe", "MapperIterDataPipe"]


@functional_datapipe("map")
class MapperIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, fn, input_col=None, output_col=None):
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(fn)
        self.fn = fn
        self.input_col = input_col
        if input_col is None and output_col is not None:
            raise ValueError("`output_col` must be None when `input_col` is None.")
        if isinstance(output_col, (list, tuple)):
            if len(output_col) > 1:
                raise ValueError("`output_col` must be a single-element list or tuple")
            output_col = output_col[0]
        self.output_col = output_col

    def _apply_fn(self, data):
        if self.input_col is None and self.output_col is None:
            return self.fn(data)
        if isinstance(self.input_col, (list, tuple)):
            res = self.fn(*(data[col] for col in self.input_col))
        else:
            res = self.fn(data[self.input_col])
        # tuples are rebuilt as lists for the assignment, then turned back
        is_tuple = isinstance(data, tuple)
        if is_tuple:
            data = list(data)
        if self.output_col is None:
            if isinstance(self.input_col, (list, tuple)):
                # the result replaces the first input column; the others are removed
                data[self.input_col[0]] = res
                for idx in sorted(self.input_col[1:], reverse=True):
                    del data[idx]
            else:
                data[self.input_col] = res
        elif self.output_col == -1:
            data.append(res)
        else:
            data[self.output_col] = res
        return tuple(data) if is_tuple else data

    def __iter__(self):
        for data in self.datapipe:
            yield self._apply_fn(data)

    def __len__(self):
        return _len_of(self, self.datapipe)


def _collate_by_keys(conversion):
    def collate(batch):
        return {key: conversion[key](value) if key in conversion else value
                for key, value in batch.items()}
    return collate


@functional_datapipe("collate")
class CollatorIterDataPipe(MapperIterDataPipe):
    def __init__(self, datapipe, conversion=default_collate, collate_fn=None):
        if collate_fn is not None:
            fn = collate_fn
        elif callable(conversion):
            fn = conversion
        elif isinstance(conversion, dict):
            fn = _collate_by_keys(conversion)
        else:
            raise ValueError("conversion must be a callable or a dict of callables")
        super().__init__(datapipe, fn=fn)
