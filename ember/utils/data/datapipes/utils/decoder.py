"""Decoding (name, bytes) samples by file extension (torch.utils.data.datapipes.utils.decoder):
handlers are tried in order and the first non-None result wins; the raw bytes stay otherwise."""
import io
import json
import os
import pickle

from ..iter.files import StreamWrapper

__all__ = ["Decoder", "ImageHandler", "MatHandler", "basichandlers", "extension_extract_fn",
           "handle_extension", "imagehandler", "mathandler"]


def basichandlers(extension, data):
    # substring tests, as torch's ("t" counts as text)
    if extension in "txt text transcript":
        return data.decode("utf-8")
    if extension in ["cls", "cls2", "class", "count", "index", "inx", "id"]:
        try:
            return int(data)
        except ValueError:
            return None
    if extension in "json jsn":
        return json.loads(data)
    if extension in ["pyd", "pickle"]:
        return pickle.loads(data)
    if extension == "pt":
        from .....serialization import load
        return load(io.BytesIO(data))
    return None


# spec -> (array type, element type, PIL mode)
imagespecs = {
    "l8": ("numpy", "uint8", "l"), "rgb8": ("numpy", "uint8", "rgb"),
    "rgba8": ("numpy", "uint8", "rgba"), "l": ("numpy", "float", "l"),
    "rgb": ("numpy", "float", "rgb"), "rgba": ("numpy", "float", "rgba"),
    "torchl8": ("torch", "uint8", "l"), "torchrgb8": ("torch", "uint8", "rgb"),
    "torchrgba8": ("torch", "uint8", "rgba"), "torchl": ("torch", "float", "l"),
    "torchrgb": ("torch", "float", "rgb"), "torch": ("torch", "float", "rgb"),
    "torchrgba": ("torch", "float", "rgba"), "pill": ("pil", None, "l"),
    "pil": ("pil", None, "rgb"), "pilrgb": ("pil", None, "rgb"), "pilrgba": ("pil", None, "rgba"),
}


def handle_extension(extensions, f):
    """A handler applying f to samples whose name ends with one of the (dotted) extensions."""
    extensions = extensions.lower().split()

    def g(key, data):
        extension = key.lower().split(".")
        for target in extensions:
            target = target.split(".")
            if len(target) > len(extension):
                continue
            if extension[-len(target):] == target:
                return f(data)
            return None
    return g


class ImageHandler:
    def __init__(self, imagespec):
        if imagespec not in imagespecs:
            raise AssertionError(f"unknown image specification: {imagespec}")
        self.imagespec = imagespec.lower()

    def __call__(self, extension, data):
        if extension.lower() not in ["jpg", "jpeg", "png", "ppm", "pgm", "pbm", "pnm"]:
            return None
        import numpy as np
        import PIL.Image
        atype, etype, mode = imagespecs[self.imagespec]
        with io.BytesIO(data) as stream:
            img = PIL.Image.open(stream)
            img.load()
            img = img.convert(mode.upper())
        if atype == "pil":
            return img
        result = np.asarray(img)
        if result.dtype != np.uint8:
            raise AssertionError(f"numpy image array should be type uint8, but got "
                                 f"{result.dtype}")
        if atype == "numpy":
            return result if etype == "uint8" else result.astype("f") / 255.0
        from .....ops.creation import tensor
        # torch's own code transposes as if 3 channels; the "l" specs fail there too
        result = tensor(np.array(result.transpose(2, 0, 1)))
        return result if etype == "uint8" else result / 255.0


def imagehandler(imagespec):
    return ImageHandler(imagespec)


class MatHandler:
    def __init__(self, **loadmat_kwargs):
        try:
            import scipy.io as sio
        except ImportError as e:
            raise ModuleNotFoundError("Package `scipy` is required to be installed for mat "
                                      "file.Please use `pip install scipy`to install the "
                                      "package") from e
        self.sio = sio
        self.loadmat_kwargs = loadmat_kwargs

    def __call__(self, extension, data):
        if extension != "mat":
            return None
        with io.BytesIO(data) as stream:
            return self.sio.loadmat(stream, **self.loadmat_kwargs)


def mathandler(**loadmat_kwargs):
    return MatHandler(**loadmat_kwargs)


def extension_extract_fn(pathname):
    ext = os.path.splitext(pathname)[1]
    return ext[1:] if ext else ext


class Decoder:
    def __init__(self, *handler, key_fn=extension_extract_fn):
        self.handlers = list(handler) if handler else []
        self.key_fn = key_fn

    def add_handler(self, *handler):
        if handler:
            self.handlers = list(handler) + self.handlers

    @staticmethod
    def _is_stream_handle(data):
        obj = data.file_obj if isinstance(data, StreamWrapper) else data
        return isinstance(obj, (io.BufferedIOBase, io.RawIOBase))

    def decode1(self, key, data):
        if not data:
            return data
        if Decoder._is_stream_handle(data):
            stream = data
            data = b"".join(data)
            stream.close()
        for f in self.handlers:
            result = f(key, data)
            if result is not None:
                return result
        return data

    def decode(self, data):
        result = {}
        if isinstance(data, tuple):
            data = [data]
        for k, v in data or ():
            # names starting with "_" are metadata: bytes become text, nothing else runs
            if k[0] == "_" and isinstance(v, bytes):
                result[k] = v.decode("utf-8")
                continue
            result[k] = self.decode1(self.key_fn(k), v)
        return result

    def __call__(self, data):
        return self.decode(data)
