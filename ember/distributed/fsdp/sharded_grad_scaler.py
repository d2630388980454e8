"""`ShardedGradScaler`: the GradScaler for sharded training (FSDP). Each rank sees only its
shards of the gradients, so one rank may find an inf or NaN the others do not: the found-inf
flags are summed over the process group before `step` decides, so every rank skips the
same steps and backs its scale off alike. It also unscales float16 gradients (FSDP keeps
them in the parameters' dtype, which may be float16)."""
from ...amp.grad_scaler import GradScaler
from .. import distributed_c10d as _c10d

__all__ = ["ShardedGradScaler"]


class ShardedGradScaler(GradScaler):
    _allow_fp16 = True

    def __init__(self, device="cuda", init_scale=2.0 ** 16, backoff_factor=0.5,
                 growth_factor=2.0, growth_interval=2000, enabled=True, process_group=None):
        super().__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
        if self._enabled:
            self.process_group = process_group

    def unscale_(self, optimizer):
        """Unscale as GradScaler does, then sum each device's found-inf over the ranks."""
        if not self._enabled:
            return
        super().unscale_(optimizer)
        for flag in self._state(optimizer)["found_inf"].values():
            _c10d.all_reduce(flag, group=self.process_group)
