"""`torch.quasirandom`: `SobolEngine`, the Sobol' low-discrepancy sequence of PyTorch, point
for point: the same direction numbers (Joe and Kuo's, for up to 21201 dimensions, in 30 bits),
the same Gray-code order starting at the zero point, and with `scramble=True` the same
scrambling for a given seed (PyTorch's: a random lower-triangular binary matrix applied to
each dimension's direction numbers and a random digital shift, drawn from the Mersenne
Twister that PyTorch's CPU generator is, seeded with `seed`).

The direction numbers are SciPy's (`scipy.stats.qmc.Sobol`, the same table): SciPy must be
installed to make a SobolEngine, and ember does not carry the table itself."""
import numpy as np

from . import dtypes as _dt
from ._tensor import make_tensor
from .device import device as _device
from .random import torch_mt19937

__all__ = ["SobolEngine"]

_CPU = _device("cpu")


def _direction_numbers(dimension, bits):
    """(dimension, bits) int64: the direction numbers of each dimension, scaled to `bits`
    bits (SciPy's unscrambled engine's, whose sequence is PyTorch's)."""
    try:
        from scipy.stats import qmc
    except ImportError:
        raise ImportError("torch.quasirandom.SobolEngine needs SciPy (scipy.stats.qmc) for the "
                          "Sobol' direction numbers; install it with `pip install scipy`") \
            from None
    try:
        engine = qmc.Sobol(dimension, scramble=False, bits=bits)
    except TypeError:  # a SciPy without `bits` (always 30 there)
        engine = qmc.Sobol(dimension, scramble=False)
    table = getattr(engine, "_sv", None)
    if table is not None and table.shape == (dimension, bits):
        return np.asarray(table, dtype=np.int64)
    # From the sequence itself: the point after 2^j - 1 steps flips direction number j.
    table = np.zeros((dimension, bits), dtype=np.int64)
    for j in range(bits):
        engine.reset()
        engine.fast_forward(2 ** j - 1)
        before, after = np.rint(engine.random(2) * 2.0 ** bits).astype(np.int64)
        table[:, j] = before ^ after
    return table


def _mt19937_words(seed, count):
    """The first `count` 32-bit outputs of the Mersenne Twister seeded with `seed` as
    PyTorch's CPU generator seeds it (its low 32 bits)."""
    return torch_mt19937(seed).random_raw(count)


def _trailing_ones(k):
    """The number of trailing one bits of each of the integers `k` (int64 array): the
    direction number the Gray-code step after point k flips."""
    k = np.asarray(k, dtype=np.int64)
    return np.log2((~k & (k + 1)).astype(np.float64)).astype(np.int64)


class SobolEngine:
    """A generator of the (scrambled) Sobol' sequence of dimension `dimension`::

        engine = SobolEngine(dimension=5, scramble=True, seed=0)
        engine.draw(3)  # 3 x 5 points in [0, 1)

    Args: dimension (1 to 21201), scramble (digital shift and linear matrix scrambling),
    seed (of the scrambling; None: a random one)."""

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality for SobolEngine is "
                             f"[1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self._state = _direction_numbers(dimension, self.MAXBIT)
        self._shift = np.zeros(dimension, dtype=np.int64)
        if self.scramble:
            self._scramble()
        self.sobolstate = make_tensor(self._state, _CPU)
        self.shift = make_tensor(self._shift, _CPU)
        self._quasi = self._shift.copy()
        # (as PyTorch, in the default dtype: a later draw in float64 starts with it rounded)
        self._first_point = (make_tensor(self._quasi.copy(), _CPU) / 2 ** self.MAXBIT) \
            .reshape(1, -1)
        self.num_generated = 0

    @property
    def quasi(self):
        """The current point's integer coordinates (int64)."""
        return make_tensor(self._quasi.copy(), _CPU)

    def _scramble(self):
        seed = self.seed
        if seed is None:
            seed = int.from_bytes(np.random.SeedSequence().entropy.to_bytes(16, "little")[:8],
                                  "little")
        d, bits = self.dimension, self.MAXBIT
        # the random bits PyTorch draws: randint(2) of the shift, then of the matrices
        words = _mt19937_words(seed, d * bits + d * bits * bits) & 1
        shift_bits = words[:d * bits].reshape(d, bits).astype(np.int64)
        self._shift = shift_bits @ (np.int64(1) << np.arange(bits, dtype=np.int64))
        lower = np.tril(words[d * bits:].reshape(d, bits, bits).astype(np.uint8))
        # bit k of a scrambled direction number is the parity of its bits i selected by row
        # k of the matrix read from its far corner, with ones on the diagonal
        scrambler = lower[:, ::-1, ::-1].copy()
        scrambler[:, np.arange(bits), np.arange(bits)] = 1
        powers = np.arange(bits, dtype=np.int64)
        digits = ((self._state[:, :, None] >> powers) & 1).astype(np.uint8)  # (d, j, i)
        scrambled = np.einsum("dki,dji->djk", scrambler, digits)            # (d, j, k)
        state = np.zeros((d, bits), dtype=np.int64)
        for k in range(bits):
            state |= (scrambled[:, :, k] & 1).astype(np.int64) << k
        self._state = state

    def _steps(self, start, n):
        """Advance the current point by the Gray-code steps after points start ..
        start + n - 1: each point on the way, as int64 rows."""
        flips = self._state[:, _trailing_ones(np.arange(start, start + n, dtype=np.int64))]
        points = np.bitwise_xor.accumulate(flips.T, axis=0) ^ self._quasi
        if n:
            self._quasi = points[-1].copy()
        return points

    def _draw(self, start, n, dtype):
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"[{n}, {self.dimension}]")
        if dtype not in (_dt.float32, _dt.float64):
            raise NotImplementedError(f'"_sobol_engine_draw" not implemented for '
                                      f"'{dtype._scalar_name}'")
        points = self._steps(start, n).astype(np.float64) * 2.0 ** -self.MAXBIT
        return make_tensor(points.astype(dtype.np), _CPU)

    def draw(self, n=1, out=None, dtype=None):
        """The next `n` points of the sequence, as an n x dimension tensor (of `dtype`,
        the default dtype when None; written into `out` when given)."""
        if dtype is None:
            dtype = _dt.get_default_dtype()
        if self.num_generated == 0:
            if n == 1:
                result = self._first_point.to(dtype)
            else:
                rest = self._draw(0, n - 1, dtype)
                result = _cat(self._first_point.to(dtype), rest)
        else:
            result = self._draw(self.num_generated - 1, n, dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """The next 2^m points, keeping the sequence's balance: the points drawn so far
        and these must number a power of two."""
        n = 2 ** m
        total = self.num_generated + n
        if not (total & (total - 1) == 0):
            raise ValueError("The balance properties of Sobol' points require n to be a power "
                             f"of 2. {self.num_generated} points have been previously "
                             f"generated, then: n={self.num_generated}+2**{m}={total}. If you "
                             "still want to do this, please use 'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point."""
        self._quasi = self._shift.copy()
        self.num_generated = 0
        return self

    def _skip(self, start, n):
        """Advance the current point by the Gray-code steps after points start ..
        start + n - 1, without making them: direction number l is flipped once for each k
        in the range with k = 2^l - 1 (mod 2^(l+1)), so only the parity of that count
        matters."""
        if n <= 0:
            return
        for l in range(self.MAXBIT):
            period, first = 2 ** (l + 1), 2 ** l - 1

            def below(x):  # how many k < x are first (mod period)
                return max(0, (x - first + period - 1) // period)
            if (below(start + n) - below(start)) % 2:
                self._quasi ^= self._state[:, l]

    def fast_forward(self, n):
        """Skip the next `n` points."""
        if self.num_generated == 0:
            self._skip(0, n - 1)
        else:
            self._skip(self.num_generated - 1, n)
        self.num_generated += n
        return self

    def __repr__(self):
        fields = [f"dimension={self.dimension}"]
        if self.scramble:
            fields.append("scramble=True")
        if self.seed is not None:
            fields.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(fields)})"


def _cat(first, rest):
    from .ops import cat
    return cat((first, rest), dim=-2)
