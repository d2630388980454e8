"""Products of vectors, matrices and tensors (`matmul`, `mm`, `einsum` ... and the products
in `torch.linalg`: `linalg.cross`, `linalg.multi_dot`, `linalg.vecdot`), with derivatives.

Forwards call the backend's BLAS-backed matmul on arrays; backwards are products again, so
second derivatives come for free. A gradient over broadcast batch dimensions is summed back
to the input's shape by the engine.

One op family (its `__all__`, `METHODS`, `FUNCTIONAL`) split by kind of product:
  matmul        matmul in every rank combination, mm, bmm, mv, dot, vdot, inner, addmm,
                linear
  add_products  beta * input + alpha * product: addmv, addr, baddbmm, addbmm and the
                in-place forms (addmm_ ...); outer, ger
  einsum        einsum
  contractions  tensordot, kron, cross and linalg.cross, multi_dot, chain_matmul, vecdot
  _common       operand checks, PyTorch's C type names, `out=`, pieces of backward formulas
The decompositions, solves and norms are the family `ember/ops/decompositions/`;
`ember.linalg` re-exports the `torch.linalg` names of both.
"""
from .add_products import (addbmm, addbmm_, addmm_, addmv, addmv_, addr, addr_,  # noqa: F401
                           baddbmm, baddbmm_, ger, outer)
from .contractions import (chain_matmul, cross, kron, linalg_cross, multi_dot,  # noqa: F401
                           tensordot, vecdot)
from .einsum import einsum  # noqa: F401
from .matmul import addmm, bmm, dot, inner, linear, matmul, mm, mv, vdot  # noqa: F401

# `torch.mm` itself comes from the sparse family (ops/sparse.py), which takes sparse operands
# and hands dense ones to `mm` here; Tensor.mm is this one
__all__ = ["matmul", "bmm", "mv", "dot", "inner", "vdot", "addmm", "outer", "ger", "addmv",
           "addmv_", "addr", "baddbmm", "addbmm", "einsum", "tensordot", "kron", "cross",
           "chain_matmul"]
METHODS = ["matmul", "mm", "bmm", "mv", "dot", "inner", "vdot", "addmm", "addmm_", "outer", "ger",
           "addmv", "addmv_", "addr", "addr_", "baddbmm", "baddbmm_", "addbmm", "addbmm_", "kron",
           "cross"]
FUNCTIONAL = ["linear"]
