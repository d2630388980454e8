"""Forward AD over the whole op table: every differentiable sample run on dual tensors
must give the tangents ember.func.jvp gives (the Jacobian-vector product of the whole
call, by differentiating its backward graph), so each op's tangent rule, which forward AD
takes from that op's backward node alone, is checked op by op."""
import numpy as np
import pytest

import ember
from ember.autograd import forward_ad as fwAD

from ..ops.test_ops import (Materialized, _checked_function, _context, _differentiable, _params,
                            _sample_of)

# forward AD takes each op's tangent from its backward, so it needs what gradgradcheck needs:
# a backward that is itself differentiable (entries with gradgrad=False are left out). The
# first two samples of every entry: every op, in about half the time of all samples
FORWARD_AD = _params("forward_ad", lambda c: c.op.gradgrad and _differentiable(c)
                     and c.index < 2)


def _tangents_like(leaves, seed):
    rng = np.random.default_rng(seed)
    out = []
    for t in leaves:
        arr = rng.standard_normal(tuple(t.shape))
        if t.dtype.is_complex:
            arr = arr + 1j * rng.standard_normal(tuple(t.shape))
        out.append(ember.tensor(arr, dtype=t.dtype))
    return out


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", FORWARD_AD)
def test_forward_ad_matches_jvp(case):
    sample = _sample_of(case)
    with _context(case, ember):
        mat = Materialized(ember, sample, case.op.grad_dtype, views_inside=True)
        positions = [i for i, (_, rg) in enumerate(mat.slots) if rg]
        primals = [mat.leaves[i].detach() for i in positions]
        tangents = _tangents_like(primals, len(case.id))
        f_all = _checked_function(case, mat)
        fixed = [t.detach() for t in mat.leaves]

        def f(*moving):
            leaves = list(fixed)
            for i, t in zip(positions, moving):
                leaves[i] = t
            return f_all(*leaves)
        _, expected = ember.func.jvp(f, tuple(primals), tuple(tangents))
        with fwAD.dual_level():
            duals = [fwAD.make_dual(p, t) for p, t in zip(primals, tangents)]
            outputs = f(*duals)
            got = [fwAD.unpack_dual(o).tangent for o in outputs]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if g is None:  # only an output that does not depend on the inputs may have none
            assert not e.detach().numpy().any(), "an output of the op carries no tangent"
            continue
        np.testing.assert_allclose(g.detach().numpy(), e.detach().numpy(), rtol=1e-7,
                                   atol=1e-9)
