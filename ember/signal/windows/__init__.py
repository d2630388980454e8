"""`torch.signal.windows`: SciPy-style window functions (`sym=` instead of the top-level
factories' `periodic=`)."""
from .windows import (bartlett, blackman, cosine, exponential, gaussian, general_cosine,
                      general_hamming, hamming, hann, kaiser, nuttall)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]
