"""`FullyShardedDataParallel` (FSDP1): a wrapper module whose unit, the wrapped module's
parameters outside nested FSDP instances, is one flat parameter (`_flat_param`) sharded
over the process group and run by the engine FSDP2 runs on (`_fsdp_state`): gathered before
forward and backward, gradients averaged and scattered after backward. Names carry the
wrapper's `_fsdp_wrapped_module.`; full state dicts and `summon_full_params` show the
original names. State dicts live in `_state_dict_utils`, optimizer state in `_optim_utils`."""
import contextlib
import warnings
from enum import Enum, auto

from ...autograd.grad_mode import no_grad
from ...nn.modules.module import Module
from .. import distributed_c10d as _c10d
from . import _init_utils as _init
from . import _optim_utils, _state_dict_utils
from . import _unshard_param_utils as _unshard
from ._api import MixedPrecisionPolicy
from ._flat_param import FlatParam
from ._fsdp_state import _FSDPState, cast_floating
from ._unshard_param_utils import TrainingState
from .api import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig, FullStateDictConfig,
                  LocalOptimStateDictConfig, LocalStateDictConfig, MixedPrecision,
                  OptimStateDictConfig, ShardedOptimStateDictConfig, ShardedStateDictConfig,
                  ShardingStrategy, StateDictConfig, StateDictSettings, StateDictType)

__all__ = ["FullyShardedDataParallel", "OptimStateKeyType"]

_WRAPPED = _init.WRAPPED


class OptimStateKeyType(Enum):
    PARAM_NAME = auto()
    PARAM_ID = auto()


class FullyShardedDataParallel(Module):
    """Shards `module`'s parameters over `process_group` (or `device_mesh`'s one dimension);
    `auto_wrap_policy` first wraps the submodules it picks in FSDP instances of their own."""

    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None,
                 auto_wrap_policy=None, backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
                 mixed_precision=None, ignored_modules=None, param_init_fn=None,
                 device_id=None, sync_module_states=False, forward_prefetch=False,
                 limit_all_gathers=True, use_orig_params=False, ignored_states=None,
                 device_mesh=None):
        super().__init__()
        ignored_mods, ignored_params = _init.ignored(module, ignored_modules, ignored_states)
        chosen = ShardingStrategy.FULL_SHARD if sharding_strategy is None else sharding_strategy
        group = _init.process_group(process_group, device_mesh, chosen)
        world = _c10d.get_world_size(group)
        device = _init.compute_device(module, ignored_params, device_id)
        if auto_wrap_policy is not None:
            kwargs = dict(process_group=process_group, sharding_strategy=sharding_strategy,
                          cpu_offload=cpu_offload, backward_prefetch=backward_prefetch,
                          mixed_precision=mixed_precision, param_init_fn=param_init_fn,
                          device_id=device_id, sync_module_states=sync_module_states,
                          forward_prefetch=forward_prefetch,
                          limit_all_gathers=limit_all_gathers, use_orig_params=use_orig_params,
                          ignored_states=None, device_mesh=device_mesh)
            _init.auto_wrap(module, auto_wrap_policy, ignored_mods, ignored_params, kwargs,
                            type(self))
        self.sharding_strategy = _init.strategy(chosen, world)
        if mixed_precision is not None and mixed_precision.keep_low_precision_grads:
            raise NotImplementedError("ember: MixedPrecision(keep_low_precision_grads=True) "
                                      "is not supported: gradients end in full precision")
        if cpu_offload is not None and cpu_offload.offload_params and device.type != "cpu":
            raise NotImplementedError("ember: CPUOffload(offload_params=True) with an "
                                      "accelerator is not supported")
        self._fsdp_wrapped_module = module
        self.process_group, self.rank, self.world_size = group, _c10d.get_rank(group), world
        self.compute_device, self._use_orig_params = device, use_orig_params
        self.mixed_precision = mixed_precision or MixedPrecision()
        self.cpu_offload = cpu_offload or CPUOffload()
        self.backward_prefetch, self.forward_prefetch = backward_prefetch, forward_prefetch
        self.limit_all_gathers = limit_all_gathers
        self._ignored_modules, self._ignored_params = ignored_mods, ignored_params
        self.training_state = TrainingState.IDLE
        self._state_dict_type = StateDictType.FULL_STATE_DICT
        self._state_dict_config = FullStateDictConfig()
        self._optim_state_dict_config = FullOptimStateDictConfig()
        self._buffers_cast = False
        _init.materialize(module, param_init_fn, device, ignored_params)
        params = _init.unit_params(module, ignored_params)
        _init.move_and_sync(module, params, device, sync_module_states, group)
        self._unit_fqns = [fqns for _, _, fqns in params]
        sharded = self.sharding_strategy is not ShardingStrategy.NO_SHARD
        n, rank = (world, self.rank) if sharded else (1, 0)
        self._flat = FlatParam([(p, places) for p, places, _ in params], module, n, rank,
                               device, use_orig_params) if params else None
        mp = self.mixed_precision
        policy = MixedPrecisionPolicy(param_dtype=mp.param_dtype, reduce_dtype=mp.reduce_dtype,
                                      cast_forward_inputs=False)
        reshard = None if self.sharding_strategy is ShardingStrategy.FULL_SHARD else False
        self._fsdp_state = _FSDPState(self, [self._flat] if self._flat else [],
                                      group if sharded else None, n, reshard, policy,
                                      None if sharded else group, 1 if sharded else world)
        _state_dict_utils.register_hooks(self)

    # ---- the wrapped module ------------------------------------------------------------------
    @property
    def module(self):
        """The wrapped module."""
        return self._fsdp_wrapped_module

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == _WRAPPED:
                raise
            return getattr(self._fsdp_wrapped_module, name)

    def __getitem__(self, key):
        return self._fsdp_wrapped_module.__getitem__(key)

    def named_parameters(self, *args, **kwargs):
        yield from self._clean_names(super().named_parameters(*args, **kwargs))

    def named_buffers(self, *args, **kwargs):
        yield from self._clean_names(super().named_buffers(*args, **kwargs))

    def _clean_names(self, items):
        """Inside `summon_full_params`, the names are the original module's."""
        summoned = self.training_state is TrainingState.SUMMON_FULL_PARAMS
        for name, value in items:
            yield (name.replace(_WRAPPED + ".", "") if summoned else name), value

    # ---- forward -----------------------------------------------------------------------------
    def _lazy_init(self):
        """Settle the root (the first FSDP instance to run); the root casts every unit's
        buffers to its `buffer_dtype`, once."""
        state = self._fsdp_state
        state.lazy_init()
        if state.is_root and not self._buffers_cast:
            for unit in self.fsdp_modules(self):
                unit._buffers_cast = True
                dtype = unit.mixed_precision.buffer_dtype
                if dtype is not None:
                    with no_grad():
                        for b in _init.unit_buffers(unit._fsdp_wrapped_module):
                            if b.is_floating_point():
                                b.data = b.to(dtype)

    def forward(self, *args, **kwargs):
        self._lazy_init()
        state, mp = self._fsdp_state, self.mixed_precision
        if mp.param_dtype is not None and (mp.cast_forward_inputs or (
                state.is_root and mp.cast_root_forward_inputs)):
            args, kwargs = cast_floating((args, kwargs), mp.param_dtype)
        args, kwargs = state.pre_forward(self, args, kwargs)
        output = self._fsdp_wrapped_module(*args, **kwargs)
        return state.post_forward(self, args, output)

    def check_is_root(self):
        self._lazy_init()
        return self._fsdp_state.is_root

    def _require_root(self, what):
        if not self.check_is_root():
            raise RuntimeError(what)

    # ---- gradients ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def no_sync(self):
        """Backward inside accumulates the gathered gradients without reducing them; the
        first backward outside reduces the sum."""
        self._require_root("`no_sync()` on inner FSDP instances is not supported. Please call "
                           "`no_sync()` on root FSDP module.")
        states = self._fsdp_state.states
        previous = [s.requires_gradient_sync for s in states]
        for s in states:
            s.requires_gradient_sync = False
        try:
            yield
        finally:
            for s, value in zip(states, previous):
                s.requires_gradient_sync = value

    @no_grad()
    def clip_grad_norm_(self, max_norm, norm_type=2.0):
        """Scale every gradient by min(1, max_norm / total norm): the norm over all ranks'
        shards (and the replicated gradients once). Returns the total norm."""
        from .._clip_grad import reduced_norm
        self._require_root("`clip_grad_norm_()` should only be called on the root FSDP "
                           "instance")
        parts, grads, managed = {}, [], set()
        for unit in self.fsdp_modules(self):
            flat = unit._flat
            if flat is None:
                continue
            managed.update([id(flat.sharded)] + [id(e.param) for e in flat.entries])
            g = flat.local_grad()
            if g is not None:
                group = unit._fsdp_state.group if flat.shard_size > 1 else None
                parts.setdefault(id(group), (group, []))[1].append(g)
                grads.append((flat, g))
        plain = [p.grad for p in self.parameters() if id(p) not in managed and
                 p.grad is not None]
        total = reduced_norm([*parts.values(), (None, plain)], norm_type)
        if not grads and not plain:
            return total
        coef = (float(max_norm) / (total + 1e-6)).clamp(max=1.0)
        for flat, g in grads:
            flat.set_local_grad(g.mul_(coef.to(g.dtype)))
        for g in plain:
            g.mul_(coef.to(g.dtype))
        dtypes = {g.dtype for _, g in grads} | {g.dtype for g in plain}
        return total.to(dtypes.pop()) if len(dtypes) == 1 else total

    # ---- whole parameters --------------------------------------------------------------------
    @staticmethod
    def fsdp_modules(module, root_only=False):
        """The FSDP instances under `module` (itself included); with `root_only`, those
        inside no other one."""
        found = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        if not root_only:
            return found
        inner = {id(n) for m in found for n in m._fsdp_wrapped_module.modules()
                 if isinstance(n, FullyShardedDataParallel)}
        return [m for m in found if id(m) not in inner]

    def _gather_as_params(self, offload_to_cpu=False):
        return _unshard.gather_as_params(self, offload_to_cpu)

    def _release(self, saved, writeback):
        _unshard.release(self, saved, writeback)

    @staticmethod
    def summon_full_params(module, recurse=True, writeback=True, rank0_only=False,
                           offload_to_cpu=False, with_grads=False):
        """Inside, the FSDP instances of `module` (all, or only the outermost ones without
        `recurse`) hold their original parameters, whole; with `writeback`, changes to them
        are kept."""
        return _unshard.summon(FullyShardedDataParallel.fsdp_modules(module,
                                                                     root_only=not recurse),
                               writeback, rank0_only, offload_to_cpu, with_grads)

    def apply(self, fn):
        """`fn` on every module, with the parameters whole (so that initialisers see them)."""
        if self.training_state is TrainingState.SUMMON_FULL_PARAMS:
            return super().apply(fn)
        with self.summon_full_params(self, recurse=False, writeback=True):
            return super().apply(fn)

    # ---- state dicts -------------------------------------------------------------------------
    @staticmethod
    def set_state_dict_type(module, state_dict_type, state_dict_config=None,
                            optim_state_dict_config=None):
        """Which state dict every FSDP instance of `module` gives and takes; returns the
        previous settings."""
        return _state_dict_utils.set_type(module, state_dict_type, state_dict_config,
                                          optim_state_dict_config)

    @staticmethod
    def get_state_dict_type(module):
        return _state_dict_utils.get_type(module)

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module, state_dict_type, state_dict_config=None,
                        optim_state_dict_config=None):
        previous = FullyShardedDataParallel.set_state_dict_type(
            module, state_dict_type, state_dict_config, optim_state_dict_config)
        try:
            yield
        finally:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                FullyShardedDataParallel.set_state_dict_type(
                    module, previous.state_dict_type, previous.state_dict_config,
                    previous.optim_state_dict_config)

    @staticmethod
    def optim_state_dict(model, optim, optim_state_dict=None, group=None):
        """The optimizer's state under the parameters' original names, each state tensor
        whole (or, with SHARDED_STATE_DICT, a DTensor sharded on dim 0)."""
        return _optim_utils.optim_state_dict(model, optim, optim_state_dict)

    @staticmethod
    def optim_state_dict_to_load(model, optim, optim_state_dict, is_named_optimizer=False,
                                 load_directly=False, group=None):
        """`optim_state_dict()`'s form turned back into what `optim.load_state_dict` takes
        on this rank (loaded at once with `load_directly`)."""
        result = _optim_utils.to_load(model, optim, optim_state_dict)
        if load_directly:
            optim.load_state_dict(result)
        return result

    def register_comm_hook(self, state, hook):
        raise NotImplementedError("ember: FSDP communication hooks are not supported")


# importable from this module too, as from PyTorch's (accelerate imports them from here)
_REEXPORTED = (LocalOptimStateDictConfig, LocalStateDictConfig, OptimStateDictConfig,
               ShardedOptimStateDictConfig, ShardedStateDictConfig, StateDictConfig,
               StateDictSettings)
