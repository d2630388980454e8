"""`torch.cuda.comm`: PyTorch's second address for the collectives of `torch.nn.parallel.comm`
(broadcast, scatter, gather, reduce_add ...), which is where they are defined."""
from ..nn.parallel.comm import (broadcast, broadcast_coalesced, gather, reduce_add,
                                reduce_add_coalesced, scatter)

__all__ = ["broadcast", "broadcast_coalesced", "reduce_add", "reduce_add_coalesced", "scatter",
           "gather"]
