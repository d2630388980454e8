"""The fuser's switches. ember runs op by op and fuses nothing; the settings are kept and
validated as PyTorch's, so code that sets and reads them behaves the same."""
_settings = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled):
    if not isinstance(enabled, bool):
        raise TypeError(f"enable_onednn_fusion(): argument 'enabled' must be bool, not "
                        f"{type(enabled).__name__}")
    _settings["onednn"] = enabled


def onednn_fusion_enabled():
    return _settings["onednn"]


def set_fusion_strategy(strategy):
    """Sets [(kind, depth), ...] ("STATIC" or "DYNAMIC" specializations); returns the previous."""
    checked = []
    for kind, depth in strategy:
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {kind}")
        checked.append((kind, int(depth)))
    previous, _settings["strategy"] = _settings["strategy"], checked
    return previous


class strict_fusion:
    """Asserts, in TorchScript, that the enclosed code fused; outside it (and in ember) a no-op."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False, recompile_limit=None, isolate_recompiles=False,
            name=None, shapes_spec=None):
    """`torch.compile` with the eager backend's semantics: a function unchanged, a module
    wrapped as PyTorch wraps it (an OptimizedModule: `_orig_mod.` in its state_dict keys)."""
    if model is None:
        return lambda m: compile(m, disable=disable)
    from ..nn.modules.module import Module
    if isinstance(model, Module) and not disable:
        from .._dynamo.eval_frame import OptimizedModule
        return OptimizedModule(model)
    return model
