"""FSDP1's flat parameter: the parameters of one FSDP unit laid end to end in one 1-d tensor
(with `use_orig_params`, each starting on a 16-byte boundary), padded to a multiple of the
shard world and split evenly: rank r holds elements [r * rows, (r + 1) * rows).

To the engine (`_fsdp_state`) it is one 1-d parameter; what differs is what the modules see:
- gathered (forward, backward): each original parameter is a leaf tensor viewing its part of
  the gathered flat tensor (leaves made once and refilled, so ops that saved them in forward
  find the data again after a reshard), registered as a plain attribute or, with
  `use_orig_params`, as the module's Parameter;
- sharded (between iterations): without `use_orig_params` the flat shard is the module's
  one Parameter, `_flat_param`, and the original names hold placeholders; with it, the
  original Parameter objects stay registered, each viewing its part of this rank's shard
  (1-d, possibly empty; its own shape when nothing is sharded), and their gradients view
  the flat gradient's shard. The optimizer steps them in place, so the shard follows."""
import math
from collections import OrderedDict

from ... import ops as _ops
from ...autograd.grad_mode import no_grad
from ...nn.parameter import Parameter

__all__ = []


class _Entry:
    """One original parameter: where it lies in the flat tensor and where it is used."""

    def __init__(self, param, places, offset):
        self.param, self.places, self.offset = param, places, offset
        self.shape, self.numel = tuple(param.shape), param.numel()
        self.requires_grad = param.requires_grad
        self.leaf = None  # the gathered view, made at the first gather


class FlatParam:
    """The engine's parameter for one FSDP1 unit (see the module docstring)."""

    def __init__(self, params, owner, shard_size, shard_rank, device, use_orig_params):
        dtypes = {p.dtype for p, _ in params}
        if len(dtypes) > 1:
            first = params[0][0].dtype
            other = next(p.dtype for p, _ in params if p.dtype is not first)
            raise ValueError(f"Must flatten tensors with uniform dtype but got {first} and "
                             f"{other}")
        if not use_orig_params and len({p.requires_grad for p, _ in params}) > 1:
            raise ValueError("Must flatten tensors with uniform `requires_grad` when "
                             "`use_orig_params=False`")
        dtype = params[0][0].dtype
        align = max(1, 16 // dtype.itemsize) if use_orig_params else 1
        self.entries, offset = [], 0
        for p, places in params:
            offset = -(-offset // align) * align
            self.entries.append(_Entry(p, places, offset))
            offset += p.numel()
        self.rows = -(-offset // shard_size)
        self.global_shape = (self.rows * shard_size,)
        self.padded_numel = self.rows
        self.owner, self.use_orig_params = owner, use_orig_params
        self.shard_size, self.start = shard_size, shard_rank * self.rows
        with no_grad():
            flat = _ops.zeros(self.global_shape, dtype=dtype, device=device)
            for e in self.entries:
                flat.narrow(0, e.offset, e.numel).copy_(e.param.detach().reshape(-1))
            local = flat.narrow(0, self.start, self.rows).clone()
        self.sharded = Parameter(local, requires_grad=any(e.requires_grad for e in self.entries))
        self.sharded._fsdp_flattened = True
        self._orders = {id(m): (m, list(m._parameters)) for e in self.entries
                        for m, _ in e.places}
        self._orders.setdefault(id(owner), (owner, list(owner._parameters)))
        if use_orig_params:
            for e in self.entries:
                e.param.data = self.sharded_view(e, self.sharded)
                e.param._fsdp_flattened = True
        else:
            for e in self.entries:
                for m, name in e.places:
                    m._parameters.pop(name, None)
            owner.register_parameter("_flat_param", self.sharded)
        self.register_sharded()

    # ---- where an original parameter lies in this rank's shard ------------------------------
    def piece(self, e):
        """(start, length) of `e`'s elements within this rank's shard."""
        lo = max(e.offset, self.start)
        hi = min(e.offset + e.numel, self.start + self.rows)
        return min(lo - self.start, self.rows), max(0, hi - lo)

    def sharded_view(self, e, flat_local):
        """`e`'s part of a shard-shaped flat tensor: its own shape when nothing is sharded."""
        start, length = self.piece(e)
        view = flat_local.narrow(0, start, length)
        return view.view(e.shape) if self.shard_size == 1 else view

    def unflatten(self, full, e):
        """`e`'s part of a whole flat tensor, in its shape."""
        return full.narrow(0, e.offset, e.numel).view(e.shape)

    def flatten(self, values, dtype, device, numel=None):
        """The flat tensor (whole, or of `numel`) holding `values[i]` at entry i's place."""
        flat = _ops.zeros(numel or self.global_shape[0], dtype=dtype, device=device)
        for e, v in zip(self.entries, values):
            if v is not None:
                flat.narrow(0, e.offset, e.numel).copy_(v.detach().reshape(-1))
        return flat

    # ---- the engine's questions ------------------------------------------------------------------
    def gather_input(self, dtype):
        return self.sharded.detach().to(dtype)

    def set_unsharded(self, full):
        for e in self.entries:
            view = self.unflatten(full, e)
            if e.leaf is not None:
                e.leaf.data = view
            elif self.use_orig_params:
                e.leaf = Parameter(view, requires_grad=e.requires_grad)
            else:
                e.leaf = view.detach().requires_grad_(e.requires_grad)

    def free_unsharded(self):
        for e in self.entries:
            if e.leaf is not None:
                e.leaf.data = e.leaf.new_empty(0)

    def register_unsharded(self):
        for e in self.entries:
            for m, name in e.places:
                if self.use_orig_params:
                    m._parameters[name] = e.leaf
                else:
                    m.__dict__[name] = e.leaf

    def register_sharded(self):
        for e in self.entries:
            for m, name in e.places:
                if self.use_orig_params:
                    m._parameters[name] = e.param
                elif self.shard_size == 1:
                    m.__dict__[name] = self.sharded_view(e, self.sharded.detach())
                else:  # PyTorch's points at freed memory; this one has none behind it
                    m.__dict__[name] = self.sharded.new_zeros(()).expand(e.shape)

    def unsharded_grad(self):
        grads = [None if e.leaf is None else e.leaf.grad for e in self.entries]
        if all(g is None for g in grads):
            return None
        g = next(g for g in grads if g is not None)
        return self.flatten(grads, g.dtype, g.device)

    def clear_unsharded_grad(self):
        for e in self.entries:
            if e.leaf is not None:
                e.leaf.grad = None

    def accumulate_grad(self, piece):
        if not self.use_orig_params:
            if self.sharded.grad is None:
                self.sharded.grad = piece.contiguous()
            else:
                self.sharded.grad.add_(piece)
            return
        current = self.local_grad()
        self.set_local_grad(piece.clone() if current is None else current.add_(piece))

    # ---- with use_orig_params: the flat gradient is what the original parameters hold ----------
    def local_grad(self):
        """This rank's flat gradient (None when no parameter has one): the original
        parameters' gradients, which the user may have replaced or dropped."""
        if not self.use_orig_params:
            return self.sharded.grad
        if all(e.param.grad is None for e in self.entries):
            return None
        flat = _ops.zeros(self.rows, dtype=self.sharded.dtype, device=self.sharded.device)
        for e in self.entries:
            if e.param.grad is not None:
                start, length = self.piece(e)
                flat.narrow(0, start, length).copy_(e.param.grad.detach().reshape(-1))
        return flat

    def set_local_grad(self, flat):
        if not self.use_orig_params:
            self.sharded.grad = flat
            return
        for e in self.entries:
            if e.requires_grad and self.piece(e)[1]:
                e.param.grad = self.sharded_view(e, flat)

    # ---- the original parameters as Parameters, whole (summon_full_params, state dicts) --------
    def register_as_params(self):
        """Register the gathered leaves as the modules' Parameters, in their original
        order; returns what `restore` puts back."""
        saved = {k: (m, OrderedDict(m._parameters)) for k, (m, _) in self._orders.items()}
        if self.use_orig_params:
            self.register_unsharded()
            return saved
        mine = {}
        for e in self.entries:
            param = Parameter(e.leaf, requires_grad=e.requires_grad)
            for m, name in e.places:
                mine[(id(m), name)] = param
                m.__dict__.pop(name, None)
        for key, (m, order) in self._orders.items():
            current = OrderedDict(m._parameters)
            current.pop("_flat_param", None)
            new = OrderedDict((k, mine.get((key, k), current.get(k))) for k in order
                              if (key, k) in mine or k in current)
            new.update((k, v) for k, v in current.items() if k not in new)
            m._parameters.clear()
            m._parameters.update(new)
        return saved

    def registered(self, e):
        m, name = e.places[0]
        return m._parameters.get(name)

    def writeback(self):
        """Copy the registered whole parameters' values into this rank's shard."""
        values = [self.registered(e) for e in self.entries]
        with no_grad():
            full = self.flatten([v.to(self.sharded.device) for v in values],
                                self.sharded.dtype, self.sharded.device)
            self.sharded.copy_(full.narrow(0, self.start, self.rows))

    def restore(self, saved):
        for m, params in saved.values():
            m._parameters.clear()
            m._parameters.update(params)
        self.register_sharded()

    def numel(self):
        return math.prod(self.global_shape)
