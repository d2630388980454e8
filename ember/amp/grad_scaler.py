"""`GradScaler`: multiplies the loss by a scale so float16 gradients do not underflow,
unscales the gradients before the optimizer steps, skips steps whose gradients hold inf or
NaN, and grows or shrinks the scale as PyTorch's `_amp_update_scale_` does."""
import warnings
from enum import Enum

from .. import dtypes as _dt
from .._state import grad as _grad_state
from .._tensor import Tensor
from ..device import backend_of, device as _device
from ..ops.creation import full, zeros_like
from ..ops.pointwise import where
from ..ops.shape import stack

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    """Where an optimizer is in a step: untouched, its gradients unscaled, or stepped."""
    READY = 0
    UNSCALED = 1
    STEPPED = 2


_READY, _UNSCALED, _STEPPED = OptState.READY, OptState.UNSCALED, OptState.STEPPED


class GradScaler:
    """The scale, the growth tracker and each optimizer's found-inf flags are tensors on the
    scale's device, so scaling, unscaling and updating never wait for the device: as in
    PyTorch, the one host read is `step`'s look at found-inf (one per device) deciding
    whether the optimizer steps."""

    _allow_fp16 = False  # float16 gradients are refused (ShardedGradScaler takes them)

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if enabled and device == "cuda":
            if not backend_of(_device("cuda")).is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available. "
                              " Disabling.", UserWarning, stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer = {}

    # ---- scaling ------------------------------------------------------------------------
    def _scale_tensor(self, like):
        if self._scale is None:
            self._scale = full((), float(self._init_scale), dtype=_dt.float32,
                               device=like._device)
            self._growth_tracker = full((), int(self._init_growth_tracker), dtype=_dt.int32,
                                        device=like._device)
        return self._scale

    def scale(self, outputs):
        """outputs * scale (a tensor, or an iterable of tensors, scaled each)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale_tensor(outputs).to(outputs._device)
        if isinstance(outputs, (list, tuple)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, tuple) else scaled
        if hasattr(outputs, "__iter__"):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY,
                                                              "found_inf": {}})

    def unscale_(self, optimizer):
        """Divides the gradients of `optimizer`'s parameters by the scale, in place, and
        records per device (on it) whether any of them holds an inf or NaN."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] is _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        if self._scale is None:
            raise AssertionError("Attempted unscale_ but _scale is None.  This may indicate "
                                 "your script did not use scaler.scale(loss or outputs) earlier "
                                 "in the iteration.")
        previous = _grad_state.enabled
        _grad_state.enabled = False
        try:
            # the reciprocal in float64, as float32 division can be off by an ulp
            inv = self._scale.double().reciprocal().float()
            finite = {}  # device -> each gradient's 0-d "all finite" flag, on that device
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype is _dt.float16 and not self._allow_fp16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    finite.setdefault(g._device, []).append(g.isfinite().all())
                    g.mul_(inv.to(g._device))
            state["found_inf"] = {dev: stack(flags).logical_not().any().float()
                                  for dev, flags in finite.items()}
        finally:
            _grad_state.enabled = previous
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscales (unless done already) and steps, unless a gradient is inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        state = self._state(optimizer)
        if state["stage"] is _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _READY:
            self.unscale_(optimizer)
        if not state["found_inf"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        # the step's one host sync (per device), as in PyTorch: step or skip
        skip = sum(f.item() for f in state["found_inf"].values())
        result = None if skip else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None):
        """Backs the scale off after a skipped step, grows it after growth_interval clean ones
        (PyTorch's `_amp_update_scale_`), on the scale's device."""
        if not self._enabled:
            return
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                if not (isinstance(new_scale, Tensor) and new_scale.numel() == 1 and
                        new_scale.dtype.name == "float32" and not new_scale.requires_grad):
                    raise AssertionError("new_scale should be a float or a 1-element "
                                         "torch.cuda.FloatTensor or torch.FloatTensor with "
                                         "requires_grad=False.")
                self._scale.copy_(new_scale.reshape(()))
        else:
            found = [f.to(self._scale._device) for s in self._per_optimizer.values()
                     for f in s["found_inf"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            previous = _grad_state.enabled
            _grad_state.enabled = False
            try:
                self._update_scale(stack(found).sum() > 0)
            finally:
                _grad_state.enabled = previous
        self._per_optimizer = {}

    def _update_scale(self, skipped):
        scale, tracker = self._scale, self._growth_tracker
        successes = tracker + 1
        grow = successes == self._growth_interval
        grown = scale * self._growth_factor
        kept = where(grow & grown.isfinite(), grown, scale)
        scale.copy_(where(skipped, scale * self._backoff_factor, kept))
        tracker.copy_(where(skipped | grow, zeros_like(tracker), successes))

    # ---- queries and state ----------------------------------------------------------------
    def get_scale(self):
        if not self._enabled:
            return 1.0
        return float(self._init_scale) if self._scale is None else float(self._scale.item())

    def _get_growth_tracker(self):
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])
