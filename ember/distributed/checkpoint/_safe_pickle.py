"""How checkpoint records become bytes and back, for the `.metadata` file and for the plans
and results ranks send each other: pickled with PyTorch's names for ember's classes (so
PyTorch reads the file), read by the weights-only unpickler allowing only the checkpoint's
own record classes and a few builtin exceptions. Neither a file nor a peer can make a
rank run code (DESIGN.md: nothing crossing a process boundary is unpickled unless the
user asked for pickle)."""
import builtins
import pickle

__all__ = ["dumps", "loads", "sendable"]

# the exceptions one rank's failure may reach the others as; any other is sent as a
# RuntimeError naming it
_EXCEPTIONS = (ValueError, RuntimeError, KeyError, TypeError, IndexError, AssertionError,
               NotImplementedError, OSError, FileNotFoundError, FileExistsError,
               PermissionError, IsADirectoryError, EOFError, pickle.UnpicklingError)


def _allowed():
    import pathlib

    from . import filesystem, hf_storage, metadata, planner, storage
    return [metadata.Metadata, metadata.TensorStorageMetadata, metadata.BytesStorageMetadata,
            metadata.ChunkStorageMetadata, metadata.TensorProperties, metadata.StorageMeta,
            metadata.MetadataIndex, metadata._MEM_FORMAT_ENCODING, filesystem._StorageInfo,
            filesystem._StoragePrefix, hf_storage._HFStorageInfo, planner.WriteItemType,
            planner.LoadItemType, planner.WriteItem, planner.ReadItem, planner.SavePlan,
            planner.LoadPlan, planner.TensorWriteData, storage.WriteResult,
            # PyTorch records the checkpoint_id it was given, often a path object
            pathlib.PosixPath, pathlib.PurePosixPath, pathlib.WindowsPath,
            pathlib.PureWindowsPath,
            *[(e, f"builtins.{e.__name__}") for e in _EXCEPTIONS
              if getattr(builtins, e.__name__, None) is e],
            (pickle.UnpicklingError, "_pickle.UnpicklingError")]


def dumps(obj):
    import io

    from ...serialization.checkpoint import _Writer
    out = io.BytesIO()
    _Writer(out, 4).dump(obj)
    return out.getvalue()


def loads(data, what):
    """The record pickled in `data`; a damaged or disallowed one is a ValueError naming
    `what` it was read from."""
    from ...serialization import safe_globals
    from ...serialization.loading import _unpickle
    try:
        with safe_globals(_allowed()):
            return _unpickle(data, weights_only=True)
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError,
            IndexError) as exc:
        raise ValueError(f"{what} is not a readable checkpoint record: {exc}") from exc


def sendable(exc):
    """`exc` as another rank can receive it: without its traceback, and as a RuntimeError
    naming it where its class is not one of the allowed ones (or its arguments do not
    pickle)."""
    exc.__traceback__ = None
    if type(exc) in _EXCEPTIONS:
        try:
            dumps(exc)
            return exc
        except Exception:  # noqa: BLE001 (its arguments are not records)
            pass
    return RuntimeError(f"{type(exc).__name__}: {exc}")
