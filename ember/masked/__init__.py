"""`torch.masked`: MaskedTensor (a tensor with a mask of the elements that exist) and the
reductions and normalizations that see only the kept elements (`mask=` on plain tensors).
Not here yet: `median` and `logaddexp`."""
from ._maskedtensor import (MaskedTensor, as_masked_tensor, is_masked_tensor,  # noqa: F401
                            masked_tensor)
from ._reductions import (amax, amin, argmax, argmin, cumprod, cumsum, log_softmax,  # noqa: F401
                          logsumexp, mean, norm, normalize, prod, softmax, softmin, std, sum,
                          var)

__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum",
           "is_masked_tensor", "log_softmax", "logsumexp", "masked_tensor", "MaskedTensor",
           "mean", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]
