"""Engine corners found while building forward AD: several outputs of one node as the
roots of one backward, and a captured leaf's tensor hooks in autograd.grad."""
import numpy as np
import pytest

import ember


@pytest.mark.parametrize("split", ["unbind", "var_mean"])
def test_outputs_of_one_node_as_roots(torch, split):
    def run(lib):
        x = lib.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], requires_grad=True)
        outs = x.unbind(0) if split == "unbind" else lib.var_mean(x, 1)
        grads = [lib.ones_like(o) * (i + 1) for i, o in enumerate(outs)]
        (g,) = lib.autograd.grad(outs, [x], grads, retain_graph=True)
        lib.autograd.backward(outs, grads)
        return np.array(g.tolist()), np.array(x.grad.tolist())
    for mine, theirs in zip(run(ember), run(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6)


def test_grad_runs_a_captured_leafs_hooks(torch):
    for lib in (ember, torch):
        seen = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
        (g,) = lib.autograd.grad((x * 3).sum(), x)
        assert seen == [[3.0, 3.0]] and g.tolist() == [30.0, 30.0]
