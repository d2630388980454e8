"""Op-table entries for `ember/ops/linalg.py`: matmul in every rank combination, mm, bmm, mv,
dot, vdot, inner, addmm, and `nn.functional.linear`."""
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
