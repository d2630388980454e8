"""The graph of a DataPipe pipeline (torch.utils.data.graph): which DataPipes feed which.
traverse_dps gives {id(dp): (dp, {its sources' entries})}, found through the DataPipes (and
lists, tuples, dicts of them) held in each DataPipe's attributes."""
from .datapipes.datapipe import IterDataPipe, MapDataPipe

__all__ = ["traverse_dps", "traverse"]


def _sources(datapipe):
    found = []

    def visit(value):
        if isinstance(value, (IterDataPipe, MapDataPipe)):
            found.append(value)
        elif isinstance(value, (list, tuple, set)):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)
        elif hasattr(value, "main_datapipe") and not isinstance(value, type):
            visit(value.main_datapipe)  # the shared main pipe of fork/demux children
    for name, value in vars(datapipe).items():
        if value is not datapipe:
            visit(value)
    return found


def traverse_dps(datapipe):
    return _traverse(datapipe, set())


def _traverse(datapipe, seen):
    key = id(datapipe)
    if key in seen:
        return {key: (datapipe, {})}
    seen = seen | {key}
    children = {}
    for source in _sources(datapipe):
        children.update(_traverse(source, seen))
    return {key: (datapipe, children)}


def traverse(datapipe, only_datapipe=None):
    import warnings
    warnings.warn("`traverse` function and will be removed after 1.13. Please use "
                  "`traverse_dps` instead.")
    return traverse_dps(datapipe)
