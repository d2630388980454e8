"""`torch.distributed.tensor.parallel`: tensor parallelism. `parallelize_module` lays a
module's parameters out on a 1-d device mesh by a plan of parallel styles (`style`), and
`loss_parallel` computes the cross-entropy of class-sharded logits (`loss`)."""
from .api import parallelize_module
from .loss import loss_parallel
from .style import (ColwiseParallel, ParallelStyle, PrepareModuleInput,
                    PrepareModuleInputOutput, PrepareModuleOutput, RowwiseParallel,
                    SequenceParallel)

__all__ = ["ColwiseParallel", "ParallelStyle", "PrepareModuleInput", "PrepareModuleInputOutput",
           "PrepareModuleOutput", "RowwiseParallel", "SequenceParallel", "parallelize_module",
           "loss_parallel"]
