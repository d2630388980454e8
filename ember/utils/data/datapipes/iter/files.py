"""FileLister (`list_files`), FileOpener (`open_files`) and StreamReader
(`read_from_stream`): file names under roots, (name, stream) pairs, and (name, chunk) reads."""
import fnmatch
import os

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from .utils import IterableWrapperIterDataPipe

__all__ = ["FileListerIterDataPipe", "FileOpenerIterDataPipe", "StreamReaderIterDataPipe",
           "StreamWrapper"]


def match_masks(name, masks):
    if not masks:
        return True
    if isinstance(masks, str):
        return fnmatch.fnmatch(name, masks)
    return any(fnmatch.fnmatch(name, mask) for mask in masks)


def get_file_pathnames_from_root(root, masks, recursive=False, abspath=False,
                                 non_deterministic=False):
    if os.path.isfile(root):
        path = os.path.abspath(root) if abspath else root
        if match_masks(os.path.basename(path), masks):
            yield path
        return
    for path, dirs, files in os.walk(root):
        if abspath:
            path = os.path.abspath(path)
        if not non_deterministic:
            files.sort()
        for f in files:
            if match_masks(f, masks):
                yield os.path.join(path, f)
        if not recursive:
            break
        if not non_deterministic:
            dirs.sort()


@functional_datapipe("list_files")
class FileListerIterDataPipe(IterDataPipe):
    def __init__(self, root=".", masks="", *, recursive=False, abspath=False,
                 non_deterministic=False, length=-1):
        super().__init__()
        if isinstance(root, str):
            root = [root]
        if not isinstance(root, IterDataPipe):
            root = IterableWrapperIterDataPipe(root)
        self.datapipe = root
        self.masks = masks
        self.recursive = recursive
        self.abspath = abspath
        self.non_deterministic = non_deterministic
        self.length = length

    def __iter__(self):
        for path in self.datapipe:
            yield from get_file_pathnames_from_root(path, self.masks, self.recursive,
                                                    self.abspath, self.non_deterministic)

    def __len__(self):
        if self.length == -1:
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
        return self.length


class StreamWrapper:
    """A file object that DataPipes hand on; attributes reach the file, closing is tracked."""

    def __init__(self, file_obj, parent_stream=None, name=None):
        self.file_obj = file_obj
        self.parent_stream = parent_stream
        self.name = name
        self.closed = False

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "file_obj"), name)

    def close(self, *args, **kwargs):
        if not self.closed:
            self.file_obj.close(*args, **kwargs)
            self.closed = True

    def __iter__(self):
        yield from self.file_obj

    def __next__(self):
        return next(self.file_obj)

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.close()

    def __del__(self):
        if not self.closed:
            self.close()

    def __repr__(self):
        return f"StreamWrapper<{self.file_obj!r}>" if self.name is None else \
            f"StreamWrapper<{self.name},{self.file_obj!r}>"


@functional_datapipe("open_files")
class FileOpenerIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, mode="r", encoding=None, length=-1):
        super().__init__()
        self.datapipe = datapipe
        self.mode = mode
        self.encoding = encoding
        if self.mode not in ("b", "t", "rb", "rt", "r"):
            raise ValueError(f"Invalid mode {mode}")
        if "b" in mode and encoding is not None:
            raise ValueError("binary mode doesn't take an encoding argument")
        self.length = length

    def __iter__(self):
        mode = {"b": "rb", "t": "rt"}.get(self.mode, self.mode)
        for pathname in self.datapipe:
            if not isinstance(pathname, str):
                raise TypeError(f"Expected string type for pathname, but got {type(pathname)}")
            yield pathname, StreamWrapper(open(pathname, mode, encoding=self.encoding))

    def __len__(self):
        if self.length == -1:
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
        return self.length


@functional_datapipe("read_from_stream")
class StreamReaderIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, chunk=None):
        self.datapipe = datapipe
        self.chunk = chunk

    def __iter__(self):
        for name, stream in self.datapipe:
            while True:
                data = stream.read(self.chunk) if self.chunk else stream.read()
                if not data:
                    stream.close()
                    break
                yield name, data
