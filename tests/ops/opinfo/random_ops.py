"""Op-table entries for ember/ops/random_ops.py. Random values differ from PyTorch's by
design (ember draws from NumPy/CuPy generators), so parity is "meta": shapes, dtypes,
requires_grad and errors. Distributions and seeding are tested in tests/test_random.py."""
import numpy as np

from . import OpInfo, Sample, register

S = Sample
P = np.array([0.2, 0.5, 0.9])


def _kw(lib, k):
    return {key: getattr(lib, v) if key == "dtype" else v for key, v in k.items()}


def _fn(name):
    return lambda lib, *a, **k: getattr(lib, name)(*a, **_kw(lib, k))


def _inplace(name):
    return lambda lib, x, *a, **k: getattr(x.clone(), name)(*a, **_kw(lib, k))


def _const(*samples):
    return lambda rng: list(samples)


def _meta(name, call, samples, **kw):
    return OpInfo(name, call, _const(*samples), parity="meta", grad=False, **kw)


register(
    _meta("rand", _fn("rand"), [
        S((2, 3)), S(((2, 3),)), S((2,), {"dtype": "float64"}), S((2,), {"dtype": "float16"}),
        S((2,), {"dtype": "bfloat16"}), S((2,), {"dtype": "complex64"}), S((), {"size": (2,)}),
        S((2,), {"requires_grad": True}), S((-1,), raises=RuntimeError),
        S((2,), {"dtype": "int64"}, raises=NotImplementedError)]),
    _meta("randn", _fn("randn"), [
        S((2, 3)), S(([4],)), S((2,), {"dtype": "float64"}), S((2,), {"dtype": "complex128"}),
        S((2,), {"dtype": "int64"}, raises=NotImplementedError)]),
    _meta("randint", _fn("randint"), [
        S((5, (3,))), S((2, 5, (3, 2))), S((5, (3,)), {"dtype": "float32"}),
        S((), {"high": 5, "size": (3,)}), S((), {"low": 1, "high": 5, "size": (3,)}),
        S((5, 2, (3,)), raises=RuntimeError), S((5, 5, (3,)), raises=RuntimeError),
        S((5, (3,)), {"dtype": "bool"}, raises=RuntimeError),
        S((300, (3,)), {"dtype": "uint8"}, raises=RuntimeError),
        S((-1, 5, (3,)), {"dtype": "uint8"}, raises=RuntimeError),
        S((5, 3), raises=TypeError), S((2.5, (3,)), raises=TypeError),
        S((5, (3,)), {"requires_grad": True}, raises=RuntimeError)]),
    _meta("randperm", _fn("randperm"), [
        S((5,)), S((0,)), S((5,), {"dtype": "float32"}), S((-1,), raises=RuntimeError),
        S((300,), {"dtype": "uint8"}, raises=RuntimeError),
        S((5,), {"requires_grad": True}, raises=RuntimeError)]),
    _meta("normal", _fn("normal"), [
        S((np.zeros(3), np.ones(3))), S((np.zeros((3, 1)), np.ones(2))), S((np.zeros(3), 2.0)),
        S((np.zeros(3),)), S((1.0, np.ones(3))), S((0.0, 1.0, (2, 3))),
        S((0.0, 1.0, (2,)), {"dtype": "float64"}), S((0.0, 1.0, (2,)), {"requires_grad": True}),
        S((np.zeros(3), np.ones(2)), raises=RuntimeError), S((np.zeros(3), -1.0), raises=RuntimeError),
        S((np.zeros(3), -np.ones(3)), raises=RuntimeError), S((0.0, -1.0, (2,)), raises=RuntimeError),
        S((np.zeros(3, dtype=np.int64), 1.0), raises=NotImplementedError)]),
    _meta("bernoulli", _fn("bernoulli"), [
        S((P,)), S((np.ones(3), 0.3)), S((np.ones(3, dtype=np.int64), 0.3)),
        S((np.full(3, 1.5),), raises=RuntimeError), S((np.ones(3), 1.5), raises=RuntimeError),
        S((np.ones(3, dtype=np.int64),), raises=NotImplementedError)],
        variant="function"),
    _meta("bernoulli", lambda lib, x, *a: x.bernoulli(*a), [S((P,)), S((P, 0.3))], variant="method"),
    _meta("multinomial", _fn("multinomial"), [
        S((P, 2)), S((P, 6, True)), S((np.ones((2, 5)), 3)), S((np.ones((0, 5)), 2)),
        S((P, 4), raises=RuntimeError), S((np.ones((2, 2, 5)), 3), raises=RuntimeError),
        S((P, 0), raises=RuntimeError), S((-P, 1), raises=RuntimeError),
        S((np.zeros(5), 1), raises=RuntimeError), S((np.array([1.0, np.inf]), 1), raises=RuntimeError),
        S((np.ones(5, dtype=np.int64), 1), raises=RuntimeError)]),
    _meta("poisson", _fn("poisson"), [
        S((P,)), S((-P,), raises=RuntimeError),
        S((np.ones(3, dtype=np.int64),), raises=NotImplementedError)]),
    _meta("rand_like", _fn("rand_like"), [
        S((P,)), S((P,), {"dtype": "float16"}), S((np.ones(3, dtype=np.int64),), raises=NotImplementedError)]),
    _meta("randn_like", _fn("randn_like"), [S((P,)), S((P,), {"dtype": "float64"})]),
    _meta("randint_like", _fn("randint_like"), [
        S((P, 5)), S((P, 2, 5)), S((np.ones(3, dtype=np.int32), 5)), S((P,), {"high": 5}),
        S((P, 5), {"dtype": "int64"})]),
    _meta("uniform_", _inplace("uniform_"), [
        S((P,)), S((P, 2, 5)), S((P, 1, 0), raises=RuntimeError), S((P, 2), raises=RuntimeError),
        S((P, 0, float("inf")), raises=RuntimeError),
        S((np.ones(3, dtype=np.int64),), raises=NotImplementedError)]),
    _meta("normal_", _inplace("normal_"), [
        S((P,)), S((P,), {"mean": 2, "std": 3}), S((P, 0, -1), raises=RuntimeError),
        S((np.ones(3, dtype=np.int64),), raises=NotImplementedError)]),
    _meta("bernoulli_", _inplace("bernoulli_"), [
        S((P,)), S((P, 0.2)), S((np.ones(3, dtype=np.int64), 0.5)), S((np.ones(3, dtype=bool), 0.5)),
        S((P, P)), S((P, 1.5), raises=RuntimeError), S((P, np.full(2, 0.5)), raises=RuntimeError)]),
    _meta("random_", _inplace("random_"), [
        S((P,)), S((P, 5)), S((P, 2, 5)), S((np.ones(3, dtype=np.uint8),)),
        S((np.ones(3, dtype=bool),)), S((P, 5, 2), raises=RuntimeError),
        S((np.ones(3, dtype=np.uint8), 300), raises=RuntimeError)]),
    _meta("exponential_", _inplace("exponential_"), [
        S((P,)), S((P, 2.0)), S((P, -1), raises=RuntimeError), S((P, 0), raises=RuntimeError),
        S((np.ones(3, dtype=np.int64),), raises=RuntimeError)]),
    _meta("geometric_", _inplace("geometric_"), [
        S((P, 0.5)), S((np.ones(3, dtype=np.int64), 0.5)), S((P, 0), raises=RuntimeError),
        S((P, 1.5), raises=RuntimeError)]),
    _meta("log_normal_", _inplace("log_normal_"), [
        S((P,)), S((P, 0, 0.5)), S((P, 1, -1), raises=RuntimeError), S((P, 1, 0), raises=RuntimeError),
        S((np.ones(3, dtype=np.int64),), raises=NotImplementedError)]),
    _meta("cauchy_", _inplace("cauchy_"), [
        S((P,)), S((P, 1, 2)), S((P, 0, -1), raises=RuntimeError),
        S((np.ones(3, dtype=np.int64),), raises=RuntimeError)]),
)
