"""RoutedDecoder (`routed_decode`, deprecated in torch since 1.12): (name, stream) samples
decoded by their extension through a Decoder's handlers."""
import warnings

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ..utils.decoder import Decoder, basichandlers, extension_extract_fn, imagehandler
from ._common import _len_of

__all__ = ["RoutedDecoderIterDataPipe"]


@functional_datapipe("routed_decode")
class RoutedDecoderIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, *handlers, key_fn=extension_extract_fn):
        super().__init__()
        self.datapipe = datapipe
        if not handlers:
            handlers = (basichandlers, imagehandler("torch"))
        self.decoder = Decoder(*handlers, key_fn=key_fn)
        warnings.warn("`RoutedDecoderIterDataPipe()` and its functional API `.routed_decode()` "
                      "are deprecated since 1.12 and will be removed in 1.13.\nSee "
                      "https://github.com/pytorch/data/issues/163 for details.", FutureWarning,
                      stacklevel=2)

    def add_handler(self, *handler):
        self.decoder.add_handler(*handler)

    def __iter__(self):
        for data in self.datapipe:
            pathname = data[0]
            yield pathname, self.decoder(data)[pathname]

    def __len__(self):
        return _len_of(self, self.datapipe)
