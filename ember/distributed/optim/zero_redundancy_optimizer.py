"""`ZeroRedundancyOptimizer` (ZeRO stage 1): each rank keeps the optimizer state of only its
share of the parameters and steps only those, then every parameter is broadcast from the rank
that stepped it, so all ranks end a step with the same parameters (the gradients must already
agree, as DistributedDataParallel makes them). The shares are made as PyTorch makes them:
within each parameter group, the largest parameters first, each to the rank holding the
fewest elements so far."""
from ... import distributed as dist
from ...autograd.grad_mode import no_grad
from ...optim.optimizer import Optimizer

__all__ = ["ZeroRedundancyOptimizer"]

_NOT_CONSOLIDATED = ("Optimizer state has not been consolidated on this rank. Please call "
                     "`consolidate_state_dict(to=...)` on all ranks beforehand if you meant to "
                     "save the global state.")


class ZeroRedundancyOptimizer(Optimizer):
    def __init__(self, params, optimizer_class, process_group=None,
                 parameters_as_bucket_view=False, overlap_with_ddp=False, **defaults):
        if overlap_with_ddp:
            raise NotImplementedError("ember: ZeroRedundancyOptimizer(overlap_with_ddp=True) "
                                      "needs DDP's ZeRO communication hooks, which ember has "
                                      "not")
        super().__init__(params, defaults)
        self.process_group = process_group
        self.world_size = dist.get_world_size(process_group)
        self.rank = dist.get_rank(process_group)
        self.global_rank = dist.get_global_rank(process_group, self.rank) \
            if process_group is not None else self.rank
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._optim_constructor, self._optim_defaults = optimizer_class, defaults
        self._all_state_dicts = None
        self._build_local_optimizer()

    def _build_local_optimizer(self):
        """Share the parameters out among the ranks; make this rank's optimizer over its
        share, one group for each of ours (maybe empty), so group i is group i here too."""
        self._owner = {}
        sizes = [0] * self.world_size
        for group in self.param_groups:
            for p in sorted(group["params"], key=lambda p: -p.numel()):
                rank = sizes.index(min(sizes))
                self._owner[id(p)] = rank
                sizes[rank] += p.numel()
        local = [{**{k: v for k, v in g.items() if k != "params"},
                  "params": [p for p in g["params"] if self._owner[id(p)] == self.rank]}
                 for g in self.param_groups]
        self.optim = self._optim_constructor(local, **self._optim_defaults)
        # the local optimizer's own settings (betas, eps ...) show in ours, as in PyTorch
        self._sync_hyperparameters(self.optim.param_groups, self.param_groups)

    def add_param_group(self, param_group):
        super().add_param_group(param_group)
        if hasattr(self, "optim"):  # past construction: share everything out anew
            states = {id(p): s for p, s in self.optim.state.items()}
            self._build_local_optimizer()
            for group in self.optim.param_groups:
                for p in group["params"]:
                    if id(p) in states:
                        self.optim.state[p] = states[id(p)]

    def _sync_hyperparameters(self, source, target):
        for s, t in zip(source, target):
            for key, value in s.items():
                if key != "params":
                    t[key] = value

    def step(self, closure=None, **kwargs):
        """Step this rank's share, then broadcast every parameter from its owner."""
        self._sync_hyperparameters(self.param_groups, self.optim.param_groups)
        loss = self.optim.step(closure=closure, **kwargs) if closure is not None \
            else self.optim.step(**kwargs)
        self._sync_hyperparameters(self.optim.param_groups, self.param_groups)
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    owner = self._owner[id(p)]
                    src = dist.get_global_rank(self.process_group, owner) \
                        if self.process_group is not None else owner
                    dist.broadcast(p.data, src=src, group=self.process_group)
        return loss

    def consolidate_state_dict(self, to=0):
        """Gather every rank's optimizer state on rank `to` (every rank must call it), for
        `state_dict()` there."""
        self._sync_hyperparameters(self.param_groups, self.optim.param_groups)
        gathered = [None] * self.world_size
        dist.all_gather_object(gathered, self.optim.state_dict(), group=self.process_group)
        self._all_state_dicts = gathered if self.rank == to else None

    def state_dict(self):
        """The global state, in a plain optimizer's layout over all the parameters (on the
        rank `consolidate_state_dict` gathered to)."""
        if self._all_state_dicts is None:
            raise RuntimeError(_NOT_CONSOLIDATED)
        index, groups, start = {}, [], 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = list(range(start, start + len(group["params"])))
            index.update((id(p), i) for i, p in enumerate(group["params"], start))
            start += len(group["params"])
            groups.append(packed)
        state = {}
        for rank, local in enumerate(self._all_state_dicts):
            mine = [p for g in self.param_groups for p in g["params"]
                    if self._owner[id(p)] == rank]
            for local_index, value in local["state"].items():
                state[index[id(mine[local_index])]] = value
        return {"state": dict(sorted(state.items())), "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Take a global state (as `state_dict()` gives): the hyperparameters for every
        group, and for this rank's share its parameters' state."""
        for group, saved in zip(self.param_groups, state_dict["param_groups"]):
            for key, value in saved.items():
                if key != "params":
                    group[key] = value
        everything = [p for g in self.param_groups for p in g["params"]]
        mine = [p for p in everything if self._owner[id(p)] == self.rank]
        where = {id(p): i for i, p in enumerate(everything)}
        local = self.optim.state_dict()
        local["state"] = {i: state_dict["state"][where[id(p)]] for i, p in enumerate(mine)
                          if where[id(p)] in state_dict["state"]}
        self._sync_hyperparameters(self.param_groups, local["param_groups"])
        self.optim.load_state_dict(local)
