"""`torch.jit.annotations`: the type names TorchScript code annotates with. `BroadcastingListN[T]`
is T or a list of N of them (a kernel size given as 3 or as (3, 3))."""
from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: F401 (re-exported)

from .._tensor import Tensor  # noqa: F401


class _BroadcastingList:
    def __init__(self, n):
        self.n = n

    def __getitem__(self, element_type):
        return Union[element_type, Tuple[(element_type,) * self.n], List[element_type]]


BroadcastingList1 = _BroadcastingList(1)
BroadcastingList2 = _BroadcastingList(2)
BroadcastingList3 = _BroadcastingList(3)

__all__ = ["Any", "Dict", "List", "Optional", "Tuple", "Union", "Tensor", "BroadcastingList1",
           "BroadcastingList2", "BroadcastingList3"]
