"""nn.Module's parameter replacement under torch.__future__'s switches, against PyTorch:
conversions keep, overwrite or swap the parameter objects (and their grads), and
load_state_dict swaps the values Tensor.module_load makes into the existing parameters."""
import pytest

import ember


def _conversions(lib):
    future = lib.__future__
    out = [future.get_overwrite_module_params_on_conversion(),
           future.get_swap_module_params_on_conversion()]
    try:
        for mode in ("keep", "overwrite", "swap"):
            future.set_overwrite_module_params_on_conversion(mode == "overwrite")
            future.set_swap_module_params_on_conversion(mode == "swap")
            m = lib.nn.Linear(2, 3)
            m(lib.ones(1, 2)).sum().backward()
            w, g = m.weight, m.weight.grad
            m.double()
            out.append((mode, m.weight is w, w.dtype == lib.float64, type(m.weight).__name__,
                        m.weight.grad is g, m.weight.grad.dtype == lib.float64,
                        m.weight.requires_grad, m.weight.is_leaf))
            sd = {k: v.detach() * 2 for k, v in m.state_dict().items()}
            w = m.weight
            m.load_state_dict(sd)
            out.append((m.weight is w, m.weight.requires_grad,
                        m.weight.tolist() == sd["weight"].tolist()))
            meta = lib.nn.Linear(2, 3, device="meta")
            w = meta.weight
            meta.load_state_dict({k: v.float() for k, v in sd.items()}, assign=True)
            out.append((meta.weight is w, str(meta.weight.device), type(meta.weight).__name__,
                        meta.weight.requires_grad))
        future.set_swap_module_params_on_conversion(True)

        class Returns(lib.nn.Parameter):
            def module_load(self, other, assign=False):
                return other
        bad = lib.nn.Linear(1, 1)
        bad.weight = Returns(lib.zeros(1, 1))
        with pytest.raises(RuntimeError, match="module_load returned one of self or other"):
            bad.load_state_dict({"weight": lib.ones(1, 1), "bias": lib.ones(1)})
    finally:
        future.set_overwrite_module_params_on_conversion(False)
        future.set_swap_module_params_on_conversion(False)
    return out


def test_future_switches_match_torch(torch):
    import torch.__future__  # noqa: F401
    assert _conversions(ember) == _conversions(torch)
