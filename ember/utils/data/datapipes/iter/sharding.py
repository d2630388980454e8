"""ShardingFilter (`sharding_filter`): every n-th item from an offset, n and offset set by
`apply_sharding` (the DataLoader's workers and distributed ranks call it through
graph_settings). Sharding groups combine: distributed ranks first, then workers."""
from enum import IntEnum

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ._common import _len_of

__all__ = ["SHARDING_PRIORITIES", "ShardingFilterIterDataPipe"]


class SHARDING_PRIORITIES(IntEnum):
    DEFAULT = 1
    DISTRIBUTED = 2
    MULTIPROCESSING = 3


class _ShardingIterDataPipe(IterDataPipe):
    def apply_sharding(self, num_of_instances, instance_id, sharding_group):
        raise NotImplementedError


@functional_datapipe("sharding_filter")
class ShardingFilterIterDataPipe(_ShardingIterDataPipe):
    def __init__(self, source_datapipe, sharding_group_filter=None):
        self.source_datapipe = source_datapipe
        self.sharding_group_filter = sharding_group_filter
        self.groups = {}
        self.num_of_instances = 1
        self.instance_id = 0
        self._update_num_of_instances()

    def apply_sharding(self, num_of_instances, instance_id,
                       sharding_group=SHARDING_PRIORITIES.DEFAULT):
        if instance_id >= num_of_instances:
            raise ValueError(f"instance_id({instance_id}) should be smaller than "
                             f"num_of_instances({num_of_instances})")
        if sharding_group == SHARDING_PRIORITIES.DEFAULT:
            if len(self.groups) and SHARDING_PRIORITIES.DEFAULT not in self.groups:
                raise RuntimeError("ShardingFilter cannot mix DEFAULT and non DEFAULT groups")
        elif SHARDING_PRIORITIES.DEFAULT in self.groups:
            raise RuntimeError("ShardingFilter cannot mix DEFAULT and non DEFAULT groups")
        self.groups[sharding_group] = (num_of_instances, instance_id)
        self._update_num_of_instances()

    def _update_num_of_instances(self):
        # the lowest priority group varies fastest within the combined instance id
        groups = [self.groups[key] for key in sorted(self.groups)
                  if self.sharding_group_filter is None or key == self.sharding_group_filter]
        self.num_of_instances, self.instance_id = 1, 0
        for group_instances, group_id in reversed(groups):
            self.instance_id += self.num_of_instances * group_id
            self.num_of_instances *= group_instances

    def __iter__(self):
        for i, item in enumerate(self.source_datapipe):
            if i % self.num_of_instances == self.instance_id:
                yield item

    def __len__(self):
        n = _len_of(self, self.source_datapipe)
        return n // self.num_of_instances + (
            1 if self.instance_id < n % self.num_of_instances else 0)
