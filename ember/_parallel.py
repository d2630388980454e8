"""ember's intra-op threads: the cores `set_num_threads` gives ember's CPU kernels.

NumPy runs every elementwise pass in the calling thread, so threads inside BLAS alone leave
most of a convolution net's step on one core. Kernels that cut their work into independent
parts with long NumPy calls (a convolution's batch chunks) run them here on `intra_threads()`
threads; NumPy releases the GIL inside its loops and BLAS calls, so the parts run at once.
Short calls do not pay: two threads of calls of a few microseconds pass the GIL back and forth
and run slower than one (a Winograd layer of 0.5-1.5 MB of tiles took 1.35-2.25x its one-thread
time on two threads; `/work/notes/s13/wino_min.py`).

- While the pool runs parts on several threads, it holds the cores: the BLAS runs one thread
  per caller, and `matmul` below splits large products across the pool itself. An OpenBLAS
  worker spins for 0.1-0.2 s after each multi-threaded product, and while it spins the pool's
  threads share the cores with it (measured on 2 cores: parallel NumPy work right after a
  2-thread product took 1.7-2x its time; `/work/notes/s13/spinner.py`). The pool takes the
  cores when it first runs parts, and gives them back to the BLAS once it has run none for
  RELEASE_AFTER_S (seen by `matmul`): work of products alone (an MLP, an LSTM, a transformer)
  keeps the BLAS's own threads, whose spinning workers hand products over faster than this
  pool can (16-45 us a round trip here), so mid-sized products are faster with them.
- A hand-over costs most where a core has gone idle: on this project's 2-core VM a lock
  passed back and forth between two threads took 15 us a round trip, but 145 us after 0.5 ms
  of idling (the idle core halts and is woken through the host; `/work/notes/s23/
  pingpong.py`). So a pool thread pays ~0.1 ms to start each parallel region: a transformer's
  products split here took 1.3-2.3x their time on the BLAS's two threads, and its attention
  stacks of 64 small products (0.5 ms) 1.45x their one-thread time; GELU's passes over a
  GPT's 2 MB activations, split beside the BLAS's threads, left the step as it was (1.01-1.03x;
  `/work/notes/s23/mm_gpt2.py`, `batch_split.py`, `m_gelu.py`). Only long parts pay.
- Where GNU OpenMP's libgomp loads, the parts run on its team (`_Team`): the threads MKL's
  products and oneDNN's kernels run on, whose workers busy-wait for milliseconds after each
  region, so that threads of ember's own found a core taken, and a part started on a spinning
  worker starts at once. Where MKL's products run on that team too (`_gemm.threaded()`), the
  pool takes nothing from the BLAS: OpenBLAS keeps one thread, and products stay whole on
  MKL's threads. Threads of the pool's own remain where libgomp does not load, and in a
  forked child.
- `map_parts` lets each thread take the next item when it is free and returns the results in
  the items' order: a caller that sums them in that order gets the same bits whichever thread
  computed which (`run_parts`, below it, gives thread t the parts t, t + threads, ...).
- One op at a time uses the pool: a call from another thread while it is busy, or from inside
  a part, runs its parts in the calling thread, as does everything at one thread.
- A forked child (a DataLoader worker) starts with no pool and makes its own on first use.
"""
import _thread  # (not `threading`, which `import ember` does not load)
import ctypes
import itertools
import os
import time

import ml_dtypes
import numpy as np

from ._blas import blas, warm_up
from ._gemm import product, threaded


def _default_threads():
    """PyTorch's default: OMP_NUM_THREADS when set to a positive number, else the cores this
    process may run on."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)


class _Pool:
    def __init__(self):
        self.threads = None      # the configured count; None until first asked
        self._executor = None
        self._size = 0
        self._busy = _thread.allocate_lock()
        self.blas_claimed = False
        self._blas_threads = None  # the BLAS's count when the pool took the cores
        self.last_parallel = 0.0
        self._team = False       # GNU OpenMP's team (`team`), once looked for

    def count(self):
        if self.threads is None:
            self.threads = _default_threads()
        return self.threads

    def _workers(self, count):
        if self._executor is None or self._size != count:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
            from concurrent.futures import ThreadPoolExecutor  # only once parts run in threads
            self._executor = ThreadPoolExecutor(count, thread_name_prefix="ember-intraop")
            self._size = count
        return self._executor

    def run(self, count, body, threads, holds=True):
        """[body(share of thread t) for t in range(threads)], thread 0 being the caller.
        `holds`: the parts are NumPy work that needs the cores (see above), not a split
        product, which only uses the cores while the pool holds them."""
        shares = [range(t, count, threads) for t in range(threads)]
        if threads < 2 or not self._busy.acquire(blocking=False):
            return [body(share) for share in shares]
        try:
            if holds and not threaded():  # (MKL on OpenMP: its threads are the team's)
                self.claim_blas()
            team = self.team()
            if team is not None:
                return team.run(body, shares)
            executor = self._workers(threads - 1)
            futures = [executor.submit(_warmed, body, share) for share in shares[1:]]
            try:
                first = body(shares[0])
            finally:  # never return (or raise) while a part may still write its arrays
                for future in futures:
                    future.exception()
            return [first] + [future.result() for future in futures]
        finally:
            if holds:
                self.last_parallel = time.monotonic()
            self._busy.release()

    def team(self):
        """GNU OpenMP's team, or None (no libgomp, or a forked child: see `forget`)."""
        if self._team is False:
            self._team = _Team.load()
        return self._team

    def claim_blas(self):
        if not self.blas_claimed:
            if self._blas_threads is None:  # OPENBLAS_NUM_THREADS's count, read once: later
                self._blas_threads = blas.get()  # set_num_threads calls keep it here
            blas.set(1)
            self.blas_claimed = True

    def holds_cores(self):
        """Whether the pool holds the cores now, giving them back to the BLAS (its thread
        count as it was) if it has run no parts for RELEASE_AFTER_S. Never while parts run
        (a product inside a part asks): the parts hold the cores, and `last_parallel` is
        only stamped when they end."""
        if self.blas_claimed and time.monotonic() - self.last_parallel > RELEASE_AFTER_S \
                and not self._busy.locked():
            self.blas_claimed = False
            blas.set(_blas_count(self._blas_threads or self.count()))
        return self.blas_claimed

    def forget(self):
        """In a forked child: the parent's worker threads do not exist here."""
        self._executor, self._size = None, 0
        self._busy = _thread.allocate_lock()
        self._team = None  # GNU OpenMP's threads do not survive a fork (a region can hang)


_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Team:
    """GNU OpenMP's threads running the pool's parts: the threads MKL's products and oneDNN's
    kernels run on (and PyTorch's, in the same process). After each parallel region its
    workers busy-wait for milliseconds, so a pool of threads of ember's own found the other
    core taken by a spinning worker, and ran its parts at half speed or worse (GPT's attention
    split over its heads in ember's threads: 1.2x its one-thread time; on the team's, 0.75x).
    Each part is a ctypes callback: the worker takes the GIL for the part's Python and gives
    it back inside NumPy's loops, as the pool's own threads do, and keeps its Python thread
    state from part to part (`_resident`)."""

    def __init__(self, gomp):
        self._parallel = gomp.GOMP_parallel
        self._parallel.argtypes = [_ENTRY, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint]
        self._parallel.restype = None
        self._member, self._size = gomp.omp_get_thread_num, gomp.omp_get_num_threads
        for f in (self._member, self._size):
            f.argtypes, f.restype = [], ctypes.c_int
        self._jobs = {}
        self._keys = itertools.count(1)
        self._workers = set()  # OpenMP's workers whose Python thread state stays
        self._entry = _ENTRY(self._part)  # (kept: the library calls it)

    def _resident(self):
        """Keep this worker's Python thread state for good: a callback from a thread Python
        does not know makes a state for the call and drops it after, and with it the
        thread's threading.local data (the convolutions' scratch buffers, relu's zeros,
        oneDNN's stream), which each part would then make again. One more hold on the state
        than the callback's own keeps it."""
        ensure = ctypes.pythonapi.PyGILState_Ensure
        ensure.restype = ctypes.c_int
        ensure()  # (never released: the worker lives as long as the process)
        self._workers.add(_thread.get_ident())

    @classmethod
    def load(cls):
        try:
            return cls(ctypes.CDLL("libgomp.so.1"))
        except (OSError, AttributeError):
            return None

    def run(self, body, shares):
        """[body(share) for share in shares] on a parallel region of len(shares) threads, the
        caller being thread 0; the first exception a part raised is raised after all end."""
        key = next(self._keys)
        results, errors = [None] * len(shares), []
        self._jobs[key] = (body, shares, results, errors)
        try:
            self._parallel(self._entry, key, len(shares), 0)
        finally:
            del self._jobs[key]
        if errors:
            raise errors[0]
        return results

    def _part(self, key):
        member = self._member()  # (0: the caller, a thread of Python's own)
        if member and _thread.get_ident() not in self._workers:
            self._resident()
        body, shares, results, errors = self._jobs[key]
        # (OpenMP may give a region fewer threads than asked: each takes every size-th share)
        for k in range(member, len(shares), self._size()):
            try:
                results[k] = body(shares[k])
            except BaseException as e:  # (an exception must not cross the C library)
                errors.append(e)


def _warmed(body, share):
    warm_up()  # a thread's BLAS runs at a third of its speed until its first large product
    return body(share)


_WITHOUT_BLAS = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))

# A training step of a convolution net runs parts many times a second; a second without any
# means the work has moved on (another model, an evaluation of products alone).
RELEASE_AFTER_S = 1.0

_pool = _Pool()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pool.forget)


def intra_threads():
    """The intra-op thread count (`ember.get_num_threads()`)."""
    return _pool.count()


def set_intra_threads(n):
    """Set by `ember.set_num_threads`: the pool's count, and the BLAS's (at once while it has
    its own threads, else when the pool gives them back)."""
    _pool.threads = n
    _pool._blas_threads = n
    if not _pool.blas_claimed:
        blas.set(_blas_count(n))


def threads_for(parts):
    """How many threads `run_parts` uses for `parts` parts now."""
    return max(1, min(parts, _pool.count()))


def run_parts(count, body, threads=None, holds=True):
    """Run `body(share)` once per thread, where the shares split range(count) by k % threads,
    and return the results in thread order. `threads` defaults to `threads_for(count)`;
    `holds` as `_Pool.run`'s."""
    return _pool.run(count, body, threads_for(count) if threads is None else threads, holds)


def map_parts(fn, items, holds=True):
    """[fn(item) for item in items], each thread taking the next item as it is free (one
    core can be slower than another on a shared machine; measured on ResNet-18 at 2 threads,
    the caller waited for the other thread 10% of the step with fixed shares). The results
    come in the items' order, whichever thread computed them."""
    results = [None] * len(items)
    order = iter(range(len(items)))  # shared: next() of a range iterator holds the GIL

    def take(_):
        for k in order:
            results[k] = fn(items[k])
    run_parts(threads_for(len(items)), take, holds=holds)
    return results


def by_first_dim(body, a, min_bytes, group=1):
    """body(s) for slices s of a's first dim, one a thread, where `a` is a NumPy array of
    `min_bytes` or more (independent work along that dim: rows of a softmax, the heads of an
    attention); else body(None) once, for the whole arrays (`parts`: no slicing, which on a
    device is a call each). The cuts fall on multiples of `group`."""
    cuts = thread_cuts(a.shape[0] // group, a.nbytes, min_bytes) \
        if isinstance(a, np.ndarray) and a.ndim else None
    if cuts is None:
        body(None)
        return
    cuts = [slice(c.start * group, c.stop * group) for c in cuts]
    cuts[-1] = slice(cuts[-1].start, a.shape[0])  # (the last part takes the rows past a group)
    map_parts(body, cuts)


def parts(c, *arrays):
    """Each of `arrays` sliced by c along its first dim (None stays None), or the arrays
    themselves where c is None (by_first_dim's whole)."""
    if c is None:
        return arrays
    return tuple(None if a is None else a[c] for a in arrays)


def thread_cuts(n, nbytes, min_bytes, part_bytes=None):
    """Slices of range(n) (places along an axis of independent work of `nbytes` in all) for
    the intra-op threads: one a thread, or with `part_bytes` as many more (a multiple of the
    threads, at most n) as keep parts of about that size, for `map_parts` to balance. None
    at one thread, under `min_bytes`, or with fewer places than threads."""
    threads = _pool.count()
    if threads < 2 or n < threads or nbytes < min_bytes:
        return None
    count = threads if part_bytes is None else \
        threads * max(1, nbytes // (threads * max(1, part_bytes)))
    return even_cuts(n, count)


# A product is split across the threads when it has at least this many multiply-adds (M*N*K):
# handing a part to a thread and back costs ~50 us here, so products under ~0.3 ms are faster
# whole (measured at 1 BLAS thread, float32: (128,128)@(128,128) split takes 1.5x its whole
# time, (2048,144)@(144,16) 0.93x, (320,128)@(128,512) 0.57x, (128,784)@(784,512) 0.56x;
# `/work/notes/s13/mm_split.py`).
SPLIT_PRODUCT_MIN = 1 << 23
# Each part's product packs the operand all parts share (BLAS copies it into its blocked
# layout): from this size that copy outweighs the balance a second part a thread gives.
# Measured at 2 threads, one part a thread against two (`/work/notes/s17/parts_layers.py`):
# ResNet-18's 512-channel layers on 7x7 (a 9.4 MB weight matrix) 0.83x the layer's time,
# its stride-2 layers 0.93-0.98x.
SHARED_REPACK_BYTES = 4 << 20
_SPLIT_TYPES = frozenset("fdFD")


def matmul(xp, a, b, out=None):
    """xp.matmul(a, b, out=out); for NumPy arrays, once the pool has taken the cores from the
    BLAS, a large product's rows (or columns, or batch) are split across them, each part a
    product of the operands' slices. Each element is still one thread's whole sum, so a
    result is the same on every run at a thread count, but not always the bits of the whole
    product at one thread: OpenBLAS picks its kernels by the matrices' sizes (as PyTorch's
    results, too, depend on the thread count)."""
    if xp is not np:
        return xp.matmul(a, b) if out is None else xp.matmul(a, b, out=out)
    if a.dtype in _WITHOUT_BLAS and b.dtype == a.dtype:
        # NumPy multiplies float16, and ml_dtypes bfloat16, in loops of their own, without
        # BLAS: hundreds of times slower than float32 (a bfloat16 LM head's (1, 64) @ (64,
        # 50257) took 50 ms). Those loops sum in float32, so the float32 product through BLAS,
        # rounded once, is the same result (as PyTorch's CPU half and bfloat16 products,
        # accumulated in float32, are), up to the order of the sums. (bfloat16's loop answers
        # in float32, which its callers round: so does this.)
        res = matmul(np, a.astype(np.float32), b.astype(np.float32))
        if out is None:
            return res.astype(np.float16) if a.dtype == np.float16 else res
        np.copyto(out, res, casting="same_kind")
        return out
    threads = _pool.count()
    if threads < 2 or not _pool.holds_cores() or a.ndim < 2 or b.ndim < 2 or \
            a.dtype.char not in _SPLIT_TYPES or b.dtype != a.dtype or \
            (out is not None and out.dtype != a.dtype):
        return one_product(a, b, out)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = a.shape[:-2] if a.ndim >= b.ndim else b.shape[:-2]
    size = m * n * k
    for d in batch:
        size *= d
    if size < SPLIT_PRODUCT_MIN or b.shape[-2] != k or \
            (a.ndim > 2 and b.ndim > 2 and a.shape[:-2] != b.shape[:-2]):
        return one_product(a, b, out)
    if out is None:
        out = np.empty(batch + (m, n), a.dtype)
    # two parts a thread, where there are places enough, for `map_parts` to balance; one
    # where every part would pack a large shared operand again (see SHARED_REPACK_BYTES)
    if batch and batch[0] >= threads:  # whole matrices of the batch per part
        pick_a = (lambda s: a[s]) if a.ndim > 2 else (lambda s: a)
        pick_b = (lambda s: b[s]) if b.ndim > 2 else (lambda s: b)
        map_parts(lambda s: one_product(pick_a(s), pick_b(s), out[s]),
                  even_cuts(batch[0], 2 * threads), holds=False)
    elif m >= n or m >= 8 * threads:  # rows of a
        parts = threads if b.nbytes >= SHARED_REPACK_BYTES else 2 * threads
        map_parts(lambda s: one_product(a[..., s, :], b, out[..., s, :]),
                  even_cuts(m, parts), holds=False)
    else:  # columns of b
        parts = threads if a.nbytes >= SHARED_REPACK_BYTES else 2 * threads
        map_parts(lambda s: one_product(a, b[..., s], out[..., s]), even_cuts(n, parts),
                  holds=False)
    return out


def one_product(a, b, out=None, accumulate=False):
    """np.matmul(a, b, out=out) in one call (`accumulate`: out += a @ b). MKL takes it where
    it is installed (`_gemm`): on one thread at one intra-op thread, or while the pool holds
    the cores (its parts), else on MKL's OpenMP threads where it has them; one on the BLAS's
    own threads stays NumPy's."""
    count = _pool.count()
    if count < 2 or _pool.blas_claimed:
        res = product(a, b, out, accumulate=accumulate)
    else:
        res = product(a, b, out, threads=count, accumulate=accumulate) if threaded() else None
    if res is not None:
        return res
    if accumulate:
        return np.add(out, np.matmul(a, b), out=out)
    return np.matmul(a, b, out=out)


def add_product(xp, a, b, c):
    """c += a @ b for matrices, c holding what the product adds to (addmm's bias): for NumPy
    arrays MKL's ?gemm with beta = 1 where it takes the product, which is PyTorch's addmm
    to the bit (a product and then an add rounds differently where MKL splits the inner
    dim: a Linear of 512 inputs gave other bits), and saves the add's pass."""
    if xp is not np or (_pool.count() > 1 and _pool.holds_cores()):
        c += matmul(xp, a, b)  # (a split product: its own parts)
        return c
    return one_product(a, b, c, accumulate=True)


def _blas_count(n):
    """The thread count NumPy's BLAS gets for n intra-op threads: one while MKL's products
    run on OpenMP threads (see `_gemm`)."""
    return 1 if n > 1 and threaded() else n


def even_cuts(n, parts):
    """min(n, `parts`) slices of range(n), as even as can be."""
    parts = min(n, parts)
    if parts <= 0:  # (an empty batch)
        return []
    edges = [n * i // parts for i in range(parts + 1)]
    return [slice(edges[i], edges[i + 1]) for i in range(parts)]
