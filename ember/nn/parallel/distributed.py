"""`DistributedDataParallel`: one model replica per process; the replicas start from rank
0's parameters and buffers and, after every backward, hold the gradient averaged over all
ranks, so equal optimiser steps keep them equal.

A post-accumulate-grad hook on each parameter marks it ready. Buckets (at most
`bucket_cap_mb`, same dtype and device, in reverse registration order as PyTorch builds them)
are reduced by one flat asynchronous all_reduce each, started as soon as a bucket's gradients
are all ready and every earlier bucket has started (the same order on every rank), so the
communication overlaps the rest of the backward pass; when the last parameter is ready, the
reductions are waited for and copied back into `.grad`. A parameter the backward pass does
not reach (`find_unused_parameters=True`) counts as ready with a zero gradient.

With `static_graph=True` the first iteration only counts how often each parameter's hook
fires (reentrant checkpointing fires it once per recomputation) and reduces everything when
the whole backward ends; later iterations take a parameter as ready at its counted firing,
and the parameters that first iteration found unused on every rank keep their `.grad`.
`ember.distributed` (a floor above) is imported when a DDP is made, never at import."""
import contextlib
import functools

from ... import dtypes as _dt
from ... import ops as _ops
from ..._state import grad as _grad_state
from ..._tensor import Tensor
from ...autograd import engine as _engine
from ...autograd.grad_mode import no_grad
from ..modules.module import Module

__all__ = ["DistributedDataParallel", "GradBucket"]

_UNUSED_MESSAGE = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \nIf you "
    "already have done the above, then the distributed data parallel module wasn't able to "
    "locate the output tensors in the return value of your module's `forward` function. "
    "Please include the loss function and the structure of the return value of `forward` of "
    "your module when reporting this issue (e.g. list, dict, iterable).\nParameter indices "
    "which did not receive grad for rank {rank}: {indices}\n In addition, you can set the "
    "environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out "
    "information about which particular parameters did not receive gradient on this rank as "
    "part of this error")

_MARKED_TWICE = (
    "Expected to mark a variable ready only once. This error is caused by one of the following "
    "reasons: 1) Use of a module parameter outside the `forward` function. Please make sure "
    "model parameters are not shared across multiple concurrent forward-backward passes. or "
    "try to use _set_static_graph() as a workaround if this module graph does not change "
    "during training loop.2) Reused parameters in multiple reentrant backward passes. For "
    "example, if you use multiple `checkpoint` functions to wrap the same part of your model, "
    "it would result in the same set of parameters been used by different reentrant backward "
    "passes multiple times, and hence marking a variable ready multiple times. DDP does not "
    "support such use cases in default. You can try to use _set_static_graph() as a workaround "
    "if your module graph does not change over iterations.\nParameter at index {index} with "
    "name {name} has been marked as ready twice. This means that multiple autograd engine  "
    "hooks have fired for this particular parameter during this iteration.")
_UNUSED_DETECTION = (
    "3) Incorrect unused parameter detection. The return value of the `forward` function is "
    "inspected by the distributed data parallel wrapper to figure out if any of the module's "
    "parameters went unused. For unused parameters, DDP would not expect gradients from then. "
    "However, if an unused parameter becomes part of the autograd graph at a later point in "
    "time (e.g., in a reentrant backward when using `checkpoint`), the gradient will show up "
    "unexpectedly. If all parameters in the model participate in the backward pass, you can "
    "disable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=False` to `torch.nn.parallel.DistributedDataParallel`. If unused "
    "parameters in the model do not change over iterations, You can try to use "
    "_set_static_graph() as a workaround if this module graph does not change during training "
    "loop.")


def _tensors_in(obj, out):
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors_in(o, out)
    return out


def _reached_leaves(outputs):
    """ids of the leaves the autograd graph of `outputs` reaches."""
    seen, leaves = set(), set()
    stack = []
    for t in _tensors_in(outputs, []):
        if t.requires_grad:
            if t.grad_fn is None:
                leaves.add(id(t))
            else:
                stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.add(id(variable))
        for child, _ in node._next:
            if child is not None and child not in seen:
                stack.append(child)
    return leaves


def _flat_buckets(tensors, cap_bytes):
    """Consecutive runs of same dtype and device, each at most `cap_bytes` (or one tensor)."""
    buckets, current, size = [], [], 0
    for t in tensors:
        nbytes = t.numel() * t.element_size()
        if current and (t.dtype != current[0].dtype or t.device != current[0].device
                        or size + nbytes > cap_bytes):
            buckets.append(current)
            current, size = [], 0
        current.append(t)
        size += nbytes
    if current:
        buckets.append(current)
    return buckets


class GradBucket:
    """One bucket of gradients as a communication hook sees it: `buffer()` the flat tensor of
    the bucket's gradients (its parameters' in order), `gradients()` views of it, one per
    parameter."""

    def __init__(self, index, buffer, parameters, is_last):
        self._index, self._buffer, self._parameters = index, buffer, list(parameters)
        self._is_last = is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer):
        self._buffer = buffer

    def parameters(self):
        return list(self._parameters)

    def gradients(self):
        out, offset = [], 0
        for p in self._parameters:
            n = p.numel()
            out.append(self._buffer[offset:offset + n].view(p.shape))
            offset += n
        return out

    def is_last(self):
        return self._is_last


class DistributedDataParallel(Module):
    _join_divide_by_initial = True

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        super().__init__()
        dist = self._dist
        self.process_group = (dist.distributed_c10d._default_group() if process_group is None
                              else process_group)
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        devices = {p.device for p in module.parameters()}
        if (device_ids is not None or output_device is not None) and \
                all(d.type == "cpu" for d in devices):
            raise ValueError("DistributedDataParallel device_ids and output_device arguments "
                             "only work with single-device/multiple-device GPU modules or CPU "
                             f"modules, but got device_ids {device_ids}, output_device "
                             f"{output_device}, and module parameters {devices}.")
        self.module = module
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.broadcast_buffers = True if broadcast_buffers is None else broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view, self.static_graph = gradient_as_bucket_view, static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._params = params
        self._index = {id(p): i for i, p in enumerate(params)}
        self._buckets = _flat_buckets(list(reversed(params)), self.bucket_bytes_cap)
        self._bucket_of = {id(p): i for i, b in enumerate(self._buckets) for p in b}
        self._ready, self._expected = set(), None
        self._fired = {}  # id(param) -> how often its hook fired this iteration
        # static_graph: {id(param): firings per iteration} and the parameters some rank
        # used, learnt in the first iteration; None until then
        self._static_uses = self._static_used = None
        self._learning = False  # the first static iteration's backward is running
        self._launched = []  # (bucket, future of its reduced flat gradient), in bucket order
        self._comm_hook = None
        from ...distributed.algorithms.join import _JoinConfig
        self._join_config = _JoinConfig(enable=False)  # (a Joinable, by what Join asks of one)
        self._divisor = None  # with join(divide_by_initial_world_size=False): ranks training
        if init_sync:
            self._verify_shapes()
            self._broadcast(list(module.parameters()) + list(module.buffers()))
        self._handles = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]

    @property
    def _dist(self):
        from ... import distributed
        return distributed

    # ---- setup -----------------------------------------------------------------------------
    def _verify_shapes(self):
        shapes = [tuple(p.shape) for p in self.module.parameters()]
        everyone = [None] * self._dist.get_world_size(self.process_group)
        self._dist.all_gather_object(everyone, shapes, group=self.process_group)
        for rank, theirs in enumerate(everyone):
            if len(theirs) != len(shapes):
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank "
                                   f"{self._dist.get_rank(self.process_group)} has "
                                   f"{len(shapes)} params, while rank {rank} has inconsistent "
                                   f"{len(theirs)} params.")
            for i, (a, b) in enumerate(zip(shapes, theirs)):
                if a != b:
                    raise RuntimeError(f"DDP expects same model across all ranks, but Rank "
                                       f"{self._dist.get_rank(self.process_group)} has "
                                       f"parameter {i} of shape {list(a)}, while rank {rank} "
                                       f"has inconsistent shape {list(b)}.")

    def _broadcast(self, tensors, group_src=0):
        """Give every rank the values of `tensors` on the group's rank `group_src`, one flat
        message a bucket."""
        if self._dist.get_world_size(self.process_group) == 1 or not tensors:
            return
        src = self._dist.get_global_rank(self.process_group, group_src)
        with no_grad():
            for bucket in _flat_buckets(tensors, self.bucket_bytes_cap):
                flat = _ops.cat([t.detach().reshape(-1) for t in bucket])
                self._dist.broadcast(flat, src=src, group=self.process_group)
                offset = 0
                for t in bucket:
                    n = t.numel()
                    t.detach().copy_(flat[offset:offset + n].view(t.shape))
                    offset += n

    # ---- forward -----------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self._join_config.enable:
            from ...distributed.algorithms.join import Join
            work = Join.notify_join_context(self)
            if work is not None and not self._join_divide_by_initial:
                work.wait()
                self._divisor = int(work.result()[0].item())
        if self._expected is not None and self._ready:
            missing = [i for i, p in enumerate(self._params) if id(p) in self._expected
                       and id(p) not in self._ready]
            raise RuntimeError(_UNUSED_MESSAGE.format(
                rank=self._dist.get_rank(self.process_group),
                indices=" ".join(map(str, missing))))
        if self.broadcast_buffers and self.require_forward_param_sync:
            self._broadcast(list(self.module.buffers()))
        output = self.module(*inputs, **kwargs)
        self._ready, self._launched, self._fired = set(), [], {}
        self._waiting = [0] * len(self._buckets)
        self._learning = False
        if _grad_state.enabled and self.require_backward_grad_sync:
            if self.static_graph and self._static_uses is None:
                self._learning = True
                self._expected = {id(p) for p in self._params}
            elif self.static_graph:
                self._expected = set(self._static_uses)
            elif self.find_unused_parameters:
                reached = _reached_leaves(output)
                self._expected = {id(p) for p in self._params if id(p) in reached}
            else:
                self._expected = {id(p) for p in self._params}
            if not self._expected:
                self._expected = None
        else:
            self._expected = None
        if self._expected is not None:
            for p in self._params:
                if id(p) in self._expected:
                    self._waiting[self._bucket_of[id(p)]] += 1
        return output

    # ---- backward ----------------------------------------------------------------------
    def _set_static_graph(self):
        """PyTorch's older spelling of `static_graph=True`, before the first iteration."""
        self.static_graph = True

    def _grad_ready(self, param):
        key = id(param)
        if self._expected is None or key not in self._expected:
            return
        fired = self._fired[key] = self._fired.get(key, 0) + 1
        if self._learning:
            if len(self._fired) == 1 and fired == 1:
                _engine.queue_callback(self._end_first_static_iteration, outermost=True)
            return
        due = self._static_uses[key] if self._static_uses is not None else 1
        if fired < due:
            return
        if fired > due:
            name = next(n for n, p in self.module.named_parameters() if p is param)
            message = _MARKED_TWICE.format(index=self._index[key], name=name)
            if len(self._expected) < len(self._params):  # some were found unused
                message += _UNUSED_DETECTION
            raise RuntimeError(message)
        self._ready.add(key)
        self._waiting[self._bucket_of[id(param)]] -= 1
        with no_grad():
            self._launch_ready_buckets()
        if len(self._ready) == len(self._expected):
            expected, self._expected, self._ready = self._expected, None, set()
            self._finish(expected)

    def _end_first_static_iteration(self):
        """The first static iteration's backward is over: keep how often each parameter's
        hook fired, then reduce every bucket at once."""
        self._learning = False
        self._static_uses = dict(self._fired)
        expected = set(self._fired)
        self._expected = expected
        self._ready = set(expected)
        self._waiting = [0] * len(self._buckets)
        with no_grad():
            self._launch_ready_buckets()
        self._expected, self._ready = None, set()
        self._finish(expected)

    def _launch_ready_buckets(self):
        """Start the all_reduce of each next bucket whose gradients are all in."""
        dist, group = self._dist, self.process_group
        world = dist.get_world_size(group)
        while len(self._launched) < len(self._buckets) and \
                self._waiting[len(self._launched)] == 0:
            bucket = self._buckets[len(self._launched)]
            # an unreached parameter adds zeros (its .grad may hold an earlier step's)
            flat = _ops.cat([(p.grad if p.grad is not None and id(p) in self._expected
                              else _ops.zeros_like(p)).reshape(-1) for p in bucket])
            if self._comm_hook is not None:
                state, hook = self._comm_hook
                index = len(self._launched)
                future = hook(state, GradBucket(index, flat, bucket,
                                                index == len(self._buckets) - 1))
                self._launched.append((bucket, future.wait))
                continue
            flat.div_(world if self._divisor is None else self._divisor)
            work = dist.all_reduce(flat, group=group, async_op=True)
            self._launched.append((bucket, functools.partial(_waited, work, flat)))

    def _finish(self, expected):
        dist, group = self._dist, self.process_group
        with no_grad():
            used = self._static_used
            if used is None and (self.find_unused_parameters or self.static_graph):
                # a parameter no rank used keeps its .grad (None stays None), as PyTorch's
                used = _ops.tensor([id(p) in expected for p in self._params], dtype=_dt.int32,
                                   device=self.join_device)  # (nccl: a cuda tensor)
                dist.all_reduce(used, group=group)
                used = used.tolist()
                if self.static_graph:
                    self._static_used = used
            launched, self._launched = self._launched, []
            for bucket, result in launched:
                flat = result()
                offset = 0
                for p in bucket:
                    n = p.numel()
                    value = flat[offset:offset + n].view(p.shape)
                    offset += n
                    if used is not None and not used[self._index[id(p)]]:
                        continue
                    if p.grad is None:
                        p.grad = value.clone()
                    else:
                        p.grad.copy_(value)

    # ---- uneven inputs -------------------------------------------------------------------
    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        """The context for training with uneven inputs: a rank out of batches shadows the
        others' collectives until all are out (see distributed.algorithms.join)."""
        from ...distributed.algorithms.join import Join
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        self._join_divide_by_initial = kwargs.get("divide_by_initial_world_size", True)
        if self._join_divide_by_initial:
            self._divisor = None
        return _DDPJoinHook(self)

    @property
    def join_device(self):
        return self._params[0].device

    @property
    def join_process_group(self):
        return self.process_group

    def register_comm_hook(self, state, hook):
        """Reduce each bucket with `hook(state, bucket)`, which returns a future of the
        bucket's reduced flat gradient (see distributed.algorithms.ddp_comm_hooks)."""
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        if not callable(hook):
            raise TypeError(f"Communication hook must be callable, got {type(hook).__name__}")
        self._comm_hook = (state, hook)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside; the first backward after it reduces them."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous


class _DDPJoinHook:
    """What a rank out of inputs does each iteration the others still train: the collectives
    of their forward and backward, with nothing of its own in them (zeros)."""

    def __init__(self, ddp):
        self.ddp = ddp

    def main_hook(self):
        ddp, dist = self.ddp, self.ddp._dist
        if ddp.broadcast_buffers and ddp.require_forward_param_sync:
            ddp._broadcast(list(ddp.module.buffers()))
        works = [dist.all_reduce(_ops.zeros(sum(p.numel() for p in bucket), dtype=bucket[0].dtype,
                                            device=bucket[0].device),
                                 group=ddp.process_group, async_op=True)
                 for bucket in ddp._buckets]
        if ddp.find_unused_parameters:
            dist.all_reduce(_ops.zeros(len(ddp._params), dtype=_dt.int32,
                                       device=ddp.join_device), group=ddp.process_group)
        for work in works:
            work.wait()

    def post_hook(self, is_last_joiner):
        """The ranks that joined early stopped stepping: every rank takes the model of the
        last to join (the highest such rank), as PyTorch's DDP does."""
        ddp, dist = self.ddp, self.ddp._dist
        group = ddp.process_group
        last = _ops.tensor([dist.get_rank(group) if is_last_joiner else -1],
                           device=ddp.join_device)
        dist.all_reduce(last, op=dist.ReduceOp.MAX, group=group)
        ddp._broadcast(list(ddp.module.parameters()) + list(ddp.module.buffers()),
                       int(last.item()))


def _waited(work, flat):
    work.wait()
    return flat
