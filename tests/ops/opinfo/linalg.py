"""Op-table entries for `ember/ops/linalg/matmul.py`: matmul in every rank combination, mm,
bmm, mv, dot, vdot, inner, addmm, and `nn.functional.linear`."""
import numpy as np

from . import OpInfo, Sample, integers, randn, register


def _matmul_samples(rng):
    return [
        Sample((randn(rng, 4), randn(rng, 4))),                     # 1-D . 1-D
        Sample((randn(rng, 3, 4), randn(rng, 4))),                  # matrix . vector
        Sample((randn(rng, 4), randn(rng, 4, 3))),                  # vector . matrix
        Sample((randn(rng, 3, 4), randn(rng, 4, 2))),
        Sample((randn(rng, 2, 3, 4), randn(rng, 4, 2))),            # batch . matrix
        Sample((randn(rng, 3, 4), randn(rng, 2, 4, 2))),            # matrix . batch
        Sample((randn(rng, 2, 1, 3, 4), randn(rng, 3, 4, 2))),      # broadcast batch dims
        Sample((randn(rng, 2, 3, 4), randn(rng, 4))),               # batch . vector
        Sample((randn(rng, 4), randn(rng, 2, 4, 3))),               # vector . batch
        Sample((randn(rng, 3, 4), randn(rng, 4, 2)), noncontig=(0, 1)),
        Sample((randn(rng, 4), randn(rng, 4)), noncontig=(0, 1)),
        Sample((randn(rng, 3, 0), randn(rng, 0, 2))),               # empty inner dim: zeros
        Sample((randn(rng, 0, 4), randn(rng, 4, 2))),
        Sample((randn(rng, 3, 4), randn(rng, 4, 2)), grad=(1,)),
        Sample((randn(rng, 2, 4, 3), randn(rng, 3, 2)), noncontig=(0,)),   # not folded
        Sample((randn(rng, 2, 3, 4), randn(rng, 2, 4, 3)), noncontig=(1,)),
    ]


def _matmul_int(rng):
    return [Sample((integers(rng, 3, 4), integers(rng, 4, 2))),
            Sample((integers(rng, 4), integers(rng, 4))),
            Sample((integers(rng, 2, 3, 4), integers(rng, 4)))]


def _matmul_errors(rng):
    return [
        Sample((randn(rng), randn(rng, 3)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), randn(rng, 3, 4)), raises=RuntimeError),
        Sample((randn(rng, 3), randn(rng, 4)), raises=RuntimeError),
        Sample((randn(rng, 2, 3, 4), randn(rng, 3, 5, 2)), raises=RuntimeError),
        Sample((randn(rng, 2, 3, 4), randn(rng, 2, 5, 2)), raises=RuntimeError),
        Sample((randn(rng, 2, 3, 4), randn(rng, 5, 2)), raises=RuntimeError),      # folded: mm
        Sample((randn(rng, 2, 3, 4), randn(rng, 5)), raises=RuntimeError),         # folded: mv
        Sample((randn(rng, 5), randn(rng, 2, 4, 3)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), randn(rng, 2, 5, 2)), raises=RuntimeError),
        Sample((randn(rng, 4), randn(rng, 5, 3)), raises=RuntimeError),
        Sample((randn(rng, 2, 1, 3, 4), randn(rng, 3, 5, 2)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), randn(rng, 4, 2).astype(np.float32)), grad=(), raises=RuntimeError),
        Sample((randn(rng, 3, 4), integers(rng, 4, 2)), grad=(), raises=RuntimeError),
    ]


def _mm_samples(rng):
    return [Sample((randn(rng, 3, 4), randn(rng, 4, 2))),
            Sample((randn(rng, 1, 4), randn(rng, 4, 1))),
            Sample((randn(rng, 3, 4), randn(rng, 4, 2)), noncontig=(0, 1)),
            Sample((randn(rng, 3, 0), randn(rng, 0, 2))),
            Sample((integers(rng, 3, 4), integers(rng, 4, 2))),
            Sample((randn(rng, 3, 4), randn(rng, 3, 4)), raises=RuntimeError),
            Sample((randn(rng, 3), randn(rng, 3, 4)), raises=RuntimeError),
            Sample((randn(rng, 3, 4), randn(rng, 4).astype(np.float32)), grad=(), raises=RuntimeError)]


def _bmm_samples(rng):
    return [Sample((randn(rng, 2, 3, 4), randn(rng, 2, 4, 2))),
            Sample((randn(rng, 2, 3, 4), randn(rng, 2, 4, 2)), noncontig=(0, 1)),
            Sample((randn(rng, 0, 3, 4), randn(rng, 0, 4, 2))),
            Sample((integers(rng, 2, 3, 4), integers(rng, 2, 4, 2))),
            Sample((randn(rng, 2, 3, 4), randn(rng, 3, 4, 2)), raises=RuntimeError),
            Sample((randn(rng, 3, 4), randn(rng, 4, 2)), raises=RuntimeError)]


def _mv_samples(rng):
    return [Sample((randn(rng, 3, 4), randn(rng, 4))),
            Sample((randn(rng, 3, 4), randn(rng, 4)), noncontig=(0, 1)),
            Sample((randn(rng, 0, 4), randn(rng, 4))),
            Sample((randn(rng, 3, 0), randn(rng, 0))),
            Sample((integers(rng, 3, 4), integers(rng, 4))),
            Sample((randn(rng, 3, 4), randn(rng, 3)), raises=RuntimeError),
            Sample((randn(rng, 4), randn(rng, 4)), raises=RuntimeError)]


def _dot_samples(rng):
    return [Sample((randn(rng, 4), randn(rng, 4))),
            Sample((randn(rng, 4), randn(rng, 4)), noncontig=(0, 1)),
            Sample((randn(rng, 0), randn(rng, 0))),
            Sample((integers(rng, 4), integers(rng, 4))),
            Sample((randn(rng, 4), randn(rng, 3)), raises=RuntimeError),
            Sample((randn(rng, 2, 2), randn(rng, 4)), raises=RuntimeError),
            Sample((randn(rng, 4), integers(rng, 4)), grad=(), raises=RuntimeError)]


def _complex(rng, *shape):
    return np.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape))


def _inner_samples(rng):
    return [Sample((randn(rng, 4), randn(rng, 4))),
            Sample((randn(rng, 3, 4), randn(rng, 4))),
            Sample((randn(rng, 3, 4), randn(rng, 2, 4))),
            Sample((randn(rng, 2, 3, 4), randn(rng, 2, 4))),
            Sample((randn(rng, 3, 4), randn(rng, 2, 2, 4))),
            Sample((randn(rng), randn(rng, 2, 3))),                 # a 0-dim operand scales
            Sample((randn(rng, 3, 4), randn(rng, 2, 4)), noncontig=(0, 1)),
            Sample((integers(rng, 3, 4), integers(rng, 4))),
            Sample((randn(rng, 3, 4), randn(rng, 3)), raises=RuntimeError)]


def _addmm_samples(rng):
    return [
        Sample((randn(rng, 3, 2), randn(rng, 3, 4), randn(rng, 4, 2))),
        Sample((randn(rng, 2), randn(rng, 3, 4), randn(rng, 4, 2))),             # broadcast bias
        Sample((randn(rng), randn(rng, 3, 4), randn(rng, 4, 2))),
        Sample((randn(rng, 3, 2), randn(rng, 3, 4), randn(rng, 4, 2)), {"beta": 0.5, "alpha": 2}),
        Sample((randn(rng, 3, 2), randn(rng, 3, 4), randn(rng, 4, 2)), {"beta": 0}),
        Sample((np.full((3, 2), np.nan), randn(rng, 3, 4), randn(rng, 4, 2)), {"beta": 0},
               grad=(1, 2)),                                                     # nan ignored
        Sample((randn(rng, 3, 2), randn(rng, 3, 4), randn(rng, 4, 2)), noncontig=(0, 1, 2)),
        Sample((randn(rng, 3, 2), randn(rng, 3, 0), randn(rng, 0, 2))),
        Sample((integers(rng, 3, 2), integers(rng, 3, 4), integers(rng, 4, 2)), {"alpha": 2}),
        Sample((randn(rng, 3, 2), randn(rng, 3, 4), randn(rng, 3, 2)), raises=RuntimeError),
        Sample((randn(rng, 5), randn(rng, 3, 4), randn(rng, 4, 2)), raises=RuntimeError),
    ]


def _linear_samples(rng):
    return [
        Sample((randn(rng, 3, 4), randn(rng, 2, 4), randn(rng, 2))),      # addmm path
        Sample((randn(rng, 3, 4), randn(rng, 2, 4))),                      # no bias
        Sample((randn(rng, 2, 3, 4), randn(rng, 2, 4), randn(rng, 2))),
        Sample((randn(rng, 4), randn(rng, 2, 4), randn(rng, 2))),
        Sample((randn(rng, 3, 4), randn(rng, 2, 4), randn(rng, 2)), noncontig=(0, 1)),
        Sample((randn(rng, 0, 4), randn(rng, 2, 4), randn(rng, 2))),
        Sample((randn(rng, 3, 4), randn(rng, 2, 4), randn(rng))),
        Sample((randn(rng, 3, 4), randn(rng, 2, 3), randn(rng, 2)), raises=RuntimeError),
    ]


def _with_out(name, n_args):
    def call(lib, *args):
        out = lib.empty(0, dtype=args[0].dtype)
        res = getattr(lib, name)(*args, out=out)
        return res, out, res is out
    return call


register(
    OpInfo("matmul", lambda lib, a, b: lib.matmul(a, b), _matmul_samples),
    OpInfo("matmul", lambda lib, a, b: a.matmul(b), lambda rng: _matmul_samples(rng)[:4],
           variant="method"),
    OpInfo("matmul", lambda lib, a, b: a @ b, lambda rng: _matmul_samples(rng)[3:7],
           variant="operator"),
    OpInfo("matmul", lambda lib, a, b: lib.matmul(a, b), _matmul_int, variant="int", grad=False),
    OpInfo("matmul", lambda lib, a, b: lib.matmul(a, b), _matmul_errors, variant="errors",
           grad=False),
    OpInfo("matmul", lambda lib, a, b: lib.matmul(a, b),
           lambda rng: [Sample((_complex(rng, 3, 4), _complex(rng, 4, 2)), grad=())],
           variant="complex", grad=False),
    OpInfo("matmul", _with_out("matmul", 2),
           lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 4, 2)), grad=()),
                        Sample((randn(rng, 2, 3, 4), randn(rng, 4)), grad=()),
                        Sample((randn(rng, 3, 4), randn(rng, 4, 2)), raises=RuntimeError)],
           variant="out", grad=False),
    OpInfo("mm", lambda lib, a, b: lib.mm(a, b), _mm_samples),
    OpInfo("mm", lambda lib, a, b: a.mm(b), lambda rng: _mm_samples(rng)[:1], variant="method"),
    OpInfo("mm", _with_out("mm", 2), lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 4, 2)), grad=())],
           variant="out", grad=False),
    OpInfo("bmm", lambda lib, a, b: lib.bmm(a, b), _bmm_samples),
    OpInfo("bmm", lambda lib, a, b: a.bmm(b), lambda rng: _bmm_samples(rng)[:1], variant="method"),
    OpInfo("mv", lambda lib, a, b: lib.mv(a, b), _mv_samples),
    OpInfo("mv", lambda lib, a, b: a.mv(b), lambda rng: _mv_samples(rng)[:1], variant="method"),
    OpInfo("dot", lambda lib, a, b: lib.dot(a, b), _dot_samples),
    OpInfo("dot", lambda lib, a, b: a.dot(b), lambda rng: _dot_samples(rng)[:1], variant="method"),
    OpInfo("vdot", lambda lib, a, b: lib.vdot(a, b), lambda rng: _dot_samples(rng)[:5]),
    OpInfo("vdot", lambda lib, a, b: a.vdot(b), lambda rng: _dot_samples(rng)[:1], variant="method"),
    OpInfo("vdot", lambda lib, a, b: lib.vdot(a, b),
           lambda rng: [Sample((_complex(rng, 4), _complex(rng, 4)), grad=())], variant="complex",
           grad=False),
    OpInfo("inner", lambda lib, a, b: lib.inner(a, b), _inner_samples),
    OpInfo("inner", lambda lib, a, b: a.inner(b), lambda rng: _inner_samples(rng)[:3],
           variant="method"),
    OpInfo("addmm", lambda lib, c, a, b, **k: lib.addmm(c, a, b, **k), _addmm_samples),
    OpInfo("addmm", lambda lib, c, a, b, **k: c.addmm(a, b, **k), lambda rng: _addmm_samples(rng)[:4],
           variant="method"),
    OpInfo("addmm", _with_out("addmm", 3),
           lambda rng: [Sample((randn(rng, 3, 2), randn(rng, 3, 4), randn(rng, 4, 2)), grad=())],
           variant="out", grad=False),
    OpInfo("linear", lambda lib, x, w, *b: lib.nn.functional.linear(x, w, *b), _linear_samples),
    OpInfo("linear", lambda lib, x, w, b: lib.nn.functional.linear(x, w, bias=b),
           lambda rng: _linear_samples(rng)[:1], variant="keyword"),
)


# ---- products with an added term -----------------------------------------------------------------
def _addmv_samples(rng):
    return [
        Sample((randn(rng, 3), randn(rng, 3, 4), randn(rng, 4))),
        Sample((randn(rng), randn(rng, 3, 4), randn(rng, 4))),                   # broadcast input
        Sample((randn(rng, 3), randn(rng, 3, 4), randn(rng, 4)), {"beta": 0.5, "alpha": -2}),
        Sample((np.full(3, np.nan), randn(rng, 3, 4), randn(rng, 4)), {"beta": 0}, grad=(1, 2)),
        Sample((randn(rng, 3), randn(rng, 3, 4), randn(rng, 4)), noncontig=(1, 2)),
        Sample((randn(rng, 3), randn(rng, 3, 0), randn(rng, 0))),
        Sample((integers(rng, 3), integers(rng, 3, 4), integers(rng, 4)), {"alpha": 2}),
        Sample((randn(rng, 3), randn(rng, 3, 4), randn(rng, 3)), raises=RuntimeError),
        Sample((randn(rng, 2), randn(rng, 3, 4), randn(rng, 4)), raises=RuntimeError),
    ]


def _addr_samples(rng):
    return [
        Sample((randn(rng, 3, 4), randn(rng, 3), randn(rng, 4))),
        Sample((randn(rng, 4), randn(rng, 3), randn(rng, 4))),
        Sample((randn(rng, 3, 4), randn(rng, 3), randn(rng, 4)), {"beta": 2, "alpha": 0.5}),
        Sample((randn(rng, 3, 4), randn(rng, 3), randn(rng, 4)), noncontig=(0, 1, 2)),
        Sample((integers(rng, 3, 4), integers(rng, 3), integers(rng, 4))),
        Sample((randn(rng, 3, 4), randn(rng, 3, 1), randn(rng, 4)), raises=RuntimeError),
        Sample((randn(rng, 2, 4), randn(rng, 3), randn(rng, 4)), raises=RuntimeError),
    ]


def _baddbmm_samples(rng):
    return [
        Sample((randn(rng, 2, 3, 2), randn(rng, 2, 3, 4), randn(rng, 2, 4, 2))),
        Sample((randn(rng, 3, 2), randn(rng, 2, 3, 4), randn(rng, 2, 4, 2))),
        Sample((randn(rng, 2, 3, 2), randn(rng, 2, 3, 4), randn(rng, 2, 4, 2)),
               {"beta": -1, "alpha": 0.5}),
        Sample((randn(rng, 2, 3, 2), randn(rng, 2, 3, 4), randn(rng, 2, 4, 2)), noncontig=(1, 2)),
        Sample((integers(rng, 2, 3, 2), integers(rng, 2, 3, 4), integers(rng, 2, 4, 2))),
        Sample((randn(rng, 2, 3, 2), randn(rng, 2, 3, 4), randn(rng, 3, 4, 2)), raises=RuntimeError),
    ]


def _addbmm_samples(rng):
    return [
        Sample((randn(rng, 3, 2), randn(rng, 2, 3, 4), randn(rng, 2, 4, 2))),
        Sample((randn(rng, 2), randn(rng, 2, 3, 4), randn(rng, 2, 4, 2))),
        Sample((randn(rng, 3, 2), randn(rng, 2, 3, 4), randn(rng, 2, 4, 2)), {"beta": 0.5, "alpha": 3}),
        Sample((randn(rng, 3, 2), randn(rng, 2, 3, 4), randn(rng, 2, 4, 2)), noncontig=(0, 1, 2)),
        Sample((integers(rng, 3, 2), integers(rng, 2, 3, 4), integers(rng, 2, 4, 2))),
        Sample((randn(rng, 3, 2), randn(rng, 2, 3, 4), randn(rng, 3, 4, 2)), raises=RuntimeError),
        Sample((randn(rng, 3, 2), randn(rng, 2, 3, 4), randn(rng, 2, 5, 2)), raises=RuntimeError),
    ]


def _with_term(name):
    return lambda lib, c, a, b, **k: getattr(lib, name)(c, a, b, **k)


def _inplace_term(name):
    return lambda lib, c, a, b, **k: getattr(c.clone(), name + "_")(a, b, **k)


for _name, _samples in (("addmv", _addmv_samples), ("addr", _addr_samples),
                        ("baddbmm", _baddbmm_samples), ("addbmm", _addbmm_samples)):
    register(
        OpInfo(_name, _with_term(_name), _samples),
        OpInfo(_name, lambda lib, c, a, b, n=_name, **k: getattr(c, n)(a, b, **k),
               lambda rng, s=_samples: s(rng)[:1], variant="method"),
        OpInfo(_name + "_", _inplace_term(_name),
               # the in-place forms need an input of the result's shape
               lambda rng, s=_samples: [x for i, x in enumerate(s(rng)[:4]) if i not in (1, 3)]
               if _name != "addmv" else [s(rng)[0], s(rng)[2]]),
        OpInfo(_name, lambda lib, c, a, b, n=_name: (lambda o: (getattr(lib, n)(c, a, b, out=o), o))(
            lib.empty(0, dtype=c.dtype)), lambda rng, s=_samples: [
                Sample(s(rng)[0].args, grad=())], variant="out", grad=False),
    )

register(
    OpInfo("addmv_", lambda lib, c, a, b: lib.addmv_(c.clone(), a, b),
           lambda rng: _addmv_samples(rng)[:1], variant="function"),
    OpInfo("addmm_", _inplace_term("addmm"), lambda rng: [
        x for i, x in enumerate(_addmm_samples(rng)[:6]) if i not in (1, 2)]),
    OpInfo("addmm_", _inplace_term("addmm"),
           lambda rng: [Sample((randn(rng, 2), randn(rng, 3, 4), randn(rng, 4, 2)), raises=RuntimeError),
                        Sample((randn(rng, 1, 2), randn(rng, 3, 4), randn(rng, 4, 2)),
                               raises=RuntimeError)],
           variant="errors", grad=False),
    OpInfo("baddbmm_", _inplace_term("baddbmm"),
           lambda rng: [Sample((randn(rng, 3, 2), randn(rng, 2, 3, 4), randn(rng, 2, 4, 2)),
                               raises=RuntimeError)], variant="errors", grad=False),
    OpInfo("addr_", _inplace_term("addr"),
           lambda rng: [Sample((randn(rng, 4), randn(rng, 3), randn(rng, 4)), raises=RuntimeError)],
           variant="errors", grad=False),
    OpInfo("addmv_", _inplace_term("addmv"),
           lambda rng: [Sample((randn(rng, 2), randn(rng, 3, 4), randn(rng, 4)), raises=RuntimeError)],
           variant="errors", grad=False),
)


# ---- outer products, contractions ---------------------------------------------------------------
def _outer_samples(rng):
    return [Sample((randn(rng, 3), randn(rng, 4))),
            Sample((randn(rng, 3), randn(rng, 4)), noncontig=(0, 1)),
            Sample((randn(rng, 0), randn(rng, 4))),
            Sample((integers(rng, 3), randn(rng, 2))),
            Sample((integers(rng, 3), integers(rng, 2))),
            Sample((randn(rng, 3, 1), randn(rng, 4)), raises=RuntimeError)]


def _einsum_samples(rng):
    return [
        Sample(("ij,jk->ik", randn(rng, 3, 4), randn(rng, 4, 2))),
        Sample(("ij->ji", randn(rng, 3, 4))),
        Sample(("ii->i", randn(rng, 3, 3))),                              # a diagonal
        Sample(("ii", randn(rng, 3, 3))),                                 # the trace
        Sample(("bij,bjk->bik", randn(rng, 2, 3, 4), randn(rng, 2, 4, 2))),
        Sample(("i,j->ij", randn(rng, 3), randn(rng, 4))),
        Sample(("...ij,...jk", randn(rng, 2, 3, 4), randn(rng, 4, 2))),    # ellipsis, implicit out
        Sample(("ij,ij->", randn(rng, 3, 4), randn(rng, 3, 4))),
        Sample(("ij,jk,kl->il", randn(rng, 2, 3), randn(rng, 3, 4), randn(rng, 4, 2))),
        Sample(("ij,kj->ik", randn(rng, 3, 1), randn(rng, 2, 4))),          # size 1 broadcasts
        Sample(("ij,jk->ik", randn(rng, 3, 4), randn(rng, 4, 2)), noncontig=(1, 2)),
        Sample(("i,i->", integers(rng, 4), integers(rng, 4))),
        Sample(("ij,jk->ik", randn(rng, 3, 4), randn(rng, 3, 2)), raises=RuntimeError),
        Sample(("ij->k", randn(rng, 3, 4)), raises=RuntimeError),
        Sample(("ijk->ij", randn(rng, 3, 4)), raises=RuntimeError),
    ]


def _tensordot_samples(rng):
    return [
        Sample((randn(rng, 2, 3, 4), randn(rng, 3, 4, 2))),
        Sample((randn(rng, 2, 3, 4), randn(rng, 4, 2)), {"dims": 1}),
        Sample((randn(rng, 3, 4), randn(rng, 2, 2)), {"dims": 0}),
        Sample((randn(rng, 2, 3, 4), randn(rng, 4, 3, 2)), {"dims": ([1, 2], [1, 0])}),
        Sample((randn(rng, 2, 3), randn(rng, 3, 4)), {"dims": ([1], [0])}),
        Sample((randn(rng, 3, 4), randn(rng, 4, 3)), {"dims": 1}, noncontig=(0, 1)),
        Sample((integers(rng, 2, 3), integers(rng, 3, 2)), {"dims": 1}),
        Sample((randn(rng, 2, 3), randn(rng, 4, 2)), {"dims": 1}, raises=RuntimeError),
        Sample((randn(rng, 2, 3), randn(rng, 3, 2)), {"dims": ([0, 1], [0])}, raises=RuntimeError),
    ]


def _kron_samples(rng):
    return [Sample((randn(rng, 2, 3), randn(rng, 2, 2))),
            Sample((randn(rng, 2), randn(rng, 3, 2))),
            Sample((randn(rng), randn(rng, 2))),
            Sample((randn(rng, 2, 3), randn(rng, 3, 2)), noncontig=(0, 1)),
            Sample((integers(rng, 2, 2), integers(rng, 2))),
            Sample((randn(rng, 0, 2), randn(rng, 2, 2)))]


def _cross_samples(rng):
    return [Sample((randn(rng, 4, 3), randn(rng, 4, 3)), {"dim": 1}),
            Sample((randn(rng, 3, 4), randn(rng, 3, 4)), {"dim": 0}),
            Sample((randn(rng, 2, 3), randn(rng, 1, 3)), {"dim": -1}),             # broadcast
            Sample((randn(rng, 2, 3), randn(rng, 3)), {"dim": -1}, raises=RuntimeError),
            Sample((randn(rng, 3, 4), randn(rng, 3, 4)), {"dim": 0}, noncontig=(0, 1)),
            Sample((integers(rng, 2, 3), integers(rng, 2, 3)), {"dim": 1}),
            Sample((randn(rng, 2, 4), randn(rng, 2, 4)), {"dim": 1}, raises=RuntimeError),
            Sample((randn(rng, 2, 3), randn(rng, 2, 3)), {"dim": 2}, raises=IndexError)]


def _quiet(fn):
    """Call fn with warnings silenced: PyTorch warns once per process (chain_matmul, cross
    without dim), so whether a given call warns depends on the tests that ran before."""
    import warnings

    def call(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)
    return call


def _chain_samples(rng):
    return [Sample(([randn(rng, 2, 3), randn(rng, 3, 4), randn(rng, 4, 2)],)),
            Sample(([randn(rng, 2, 3), randn(rng, 3, 2)],)),
            Sample(([randn(rng, 3, 3)],)),
            Sample(([randn(rng, 2, 3), randn(rng, 3, 4)],), noncontig=(0,)),
            Sample(([randn(rng, 2, 3), randn(rng, 2, 4)],), raises=RuntimeError),
            Sample(([randn(rng, 2, 3), randn(rng, 3)],), raises=RuntimeError)]


register(
    OpInfo("outer", lambda lib, a, b: lib.outer(a, b), _outer_samples),
    OpInfo("outer", lambda lib, a, b: a.outer(b), lambda rng: _outer_samples(rng)[:1], variant="method"),
    OpInfo("ger", lambda lib, a, b: lib.ger(a, b), lambda rng: _outer_samples(rng)[:2]),
    OpInfo("ger", lambda lib, a, b: a.ger(b), lambda rng: _outer_samples(rng)[:1], variant="method"),
    OpInfo("einsum", lambda lib, eq, *ops: lib.einsum(eq, *ops), _einsum_samples),
    OpInfo("einsum", lambda lib, eq, *ops: lib.einsum(eq, list(ops)), lambda rng: _einsum_samples(rng)[:1],
           variant="list"),
    OpInfo("tensordot", lambda lib, a, b, **k: lib.tensordot(a, b, **k), _tensordot_samples),
    OpInfo("kron", lambda lib, a, b: lib.kron(a, b), _kron_samples),
    OpInfo("kron", lambda lib, a, b: a.kron(b), lambda rng: _kron_samples(rng)[:1], variant="method"),
    OpInfo("cross", lambda lib, a, b, **k: lib.cross(a, b, **k), _cross_samples),
    OpInfo("cross", lambda lib, a, b, **k: a.cross(b, **k), lambda rng: _cross_samples(rng)[:1],
           variant="method"),
    OpInfo("cross", _quiet(lambda lib, a, b: lib.cross(a, b)),
           lambda rng: [Sample((randn(rng, 4, 3), randn(rng, 4, 3))),
                        Sample((randn(rng, 3, 3), randn(rng, 3, 3)))], variant="default_dim"),
    OpInfo("chain_matmul", _quiet(lambda lib, ms: lib.chain_matmul(*ms)), _chain_samples),
)
