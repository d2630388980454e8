"""F.grouped_mm's gradients against PyTorch's (the op table runs it without gradcheck: it
refuses float64)."""
import numpy as np
import pytest

import ember


@pytest.mark.parametrize("shapes", [((2, 4, 8), (2, 4, 8), None), ((8, 8), (2, 4, 8), [2, 8])])
def test_gradients_match_torch(torch, shapes):
    rng = np.random.default_rng(0)
    sa, sb, offs = shapes
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    results = []
    for lib in (torch, ember):
        ta = lib.tensor(a, requires_grad=True)
        tb = lib.tensor(b, requires_grad=True)
        kw = {} if offs is None else {"offs": lib.tensor(offs, dtype=lib.int32)}
        out = lib.nn.functional.grouped_mm(ta, tb.transpose(-2, -1), **kw)
        g = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(np.float32)
        grads = lib.autograd.grad(out, (ta, tb), lib.tensor(g))
        results.append([out.detach().numpy()] + [x.numpy() for x in grads])
    for t, e in zip(*results):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-5)
