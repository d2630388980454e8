"""What the tests of ember.distributions (test_distributions.py, test_families.py) share: the
continuous methods compared, makers of parameter values, the parameters as tensors, and the
outcome of one call in ember or in torch."""
# the methods compared for a continuous distribution
CONT = ("log_prob", "cdf", "icdf", "entropy", "mean", "mode", "variance", "stddev")


def draws(rng):
    """Makers of parameter values drawn from `rng` (each test module keeps its own stream):
    (positive, real, in (0, 1), points of the simplex)."""
    def pos(*shape):
        return rng.uniform(0.5, 2.0, shape)

    def real(*shape):
        return rng.normal(size=shape)

    def unit(*shape):
        return rng.uniform(0.1, 0.9, shape)

    def simplex(*shape):
        p = rng.uniform(0.1, 1.0, shape)
        return p / p.sum(-1, keepdims=True)
    return pos, real, unit, simplex


def tensors(lib, params, requires_grad=True):
    """The NumPy parameters as float64 tensors of `lib`."""
    return {k: lib.tensor(v, dtype=lib.float64, requires_grad=requires_grad)
            for k, v in params.items()}


def outcome(lib, src):
    """Evaluates `src` with `D` = lib.distributions and `t` = lib: ("ok", repr of the result)
    or (exception type name, message), library names made alike."""
    try:
        out = eval(src, {"D": lib.distributions, "t": lib})
    except Exception as e:  # noqa: BLE001  (the type and message are what is compared)
        return type(e).__name__, str(e).replace("torch.distributions", "D.").replace(
            "ember.distributions", "D.")
    return "ok", repr(out)
