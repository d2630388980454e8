"""float32 convolutions, LSTM layers, layer norms and GELUs through Intel's oneDNN, where it is
installed (`pip install ember[onednn]`): the library PyTorch's own CPU convolutions run on.
Given NCHW arrays, PyTorch has oneDNN copy them into its blocked layouts (nChw16c on
AVX-512), convolve there with a JIT kernel, and copy the result back; this module asks oneDNN
for the same, so a convolution takes PyTorch's time and, where both pick the same kernel,
gives its bits (Sapphire Rapids, 1 thread, 3x3 pad 1: (32, 16, 32, 32) 1.64 ms against
PyTorch's 1.69 and ember's own NumPy route's 3.8; every value equal to PyTorch's;
`/work/notes/s31/proto2.py`).

Three routines answer for the three arrays a convolution's graph needs (`forward`,
`backward_data`, `backward_weights`), and two each for an LSTM layer's direction
(`lstm_forward`, `lstm_backward`: oneDNN's LSTM, which PyTorch's CPU LSTM runs too), a layer
norm over the last dim (`layer_norm_forward`, `layer_norm_backward`) and an elementwise
function (`eltwise`, `eltwise_backward`: GELU's two forms), each with arrays or None where
NumPy's routines should compute instead: another dtype, an empty dim, a library or a forked
process that cannot run oneDNN, a shape oneDNN refuses. Each shape's primitives (the kernel
and the reorders into and out of its layouts) are made once and kept in a bounded cache; a
plan runs one call at a time (oneDNN's primitives keep their scratch memory with them).

oneDNN runs on the GNU OpenMP threads of the `onednn-cpu-gomp` wheel, as many as the caller
asks for the call (oneDNN divides the work when it makes a primitive, so a plan is made for a
thread count). `EMBER_ONEDNN=0` in the environment turns oneDNN off."""
import contextlib
import ctypes
import os
import sys
import threading
from collections import OrderedDict

import numpy as np

from .backends import mkldnn as _mkldnn

_F32 = 3
_FORMAT_ANY = 1
_FORWARD_TRAINING, _BACKWARD_DATA, _BACKWARD_WEIGHTS = 64, 160, 192
_CONVOLUTION_DIRECT = 1
_CPU, _IN_ORDER = 1, 1
_QUERY_IMPL, _QUERY_EXEC_ARG_MD = 8, 255
_SCRATCHPAD_USER, SCRATCHPAD = 1, 80
SRC, DST, WEIGHTS, DIFF_SRC, DIFF_DST, DIFF_WEIGHTS = 1, 17, 33, 129, 145, 161
_Dims = ctypes.c_int64 * 12  # dnnl_dims_t
_ALIGN = 64  # the kernel-layout copies start on a cache line, as oneDNN's own buffers do
_handle = ctypes.c_void_p


class _Arg(ctypes.Structure):  # dnnl_exec_arg_t
    _fields_ = [("arg", ctypes.c_int), ("memory", _handle)]


class DnnlError(RuntimeError):
    pass


class Library:
    """libdnnl's entry points that ember calls, its CPU engine and stream, and the OpenMP
    runtime it runs on (`threads(n)` sets its thread count for a block)."""

    def __init__(self, lib, omp):
        self.lib = lib
        self._set_threads, self._get_threads = omp.omp_set_num_threads, omp.omp_get_max_threads
        self._set_threads.argtypes, self._set_threads.restype = [ctypes.c_int], None
        self._get_threads.argtypes, self._get_threads.restype = [], ctypes.c_int
        p, i = _handle, ctypes.c_int
        dims = ctypes.POINTER(ctypes.c_int64)
        for name, args in {
                "dnnl_engine_create": [ctypes.POINTER(p), i, ctypes.c_size_t],
                "dnnl_stream_create": [ctypes.POINTER(p), p, ctypes.c_uint],
                "dnnl_stream_wait": [p],
                "dnnl_memory_desc_create_with_strides": [ctypes.POINTER(p), i, dims, i, dims],
                "dnnl_memory_desc_create_with_tag": [ctypes.POINTER(p), i, dims, i, i],
                "dnnl_memory_desc_destroy": [p],
                "dnnl_memory_desc_clone": [ctypes.POINTER(p), p],
                "dnnl_memory_create": [ctypes.POINTER(p), p, p, p],
                "dnnl_memory_set_data_handle": [p, p],
                "dnnl_memory_destroy": [p],
                "dnnl_convolution_forward_primitive_desc_create":
                    [ctypes.POINTER(p), p, i, i, p, p, p, p, dims, dims, dims, dims, p],
                "dnnl_convolution_backward_data_primitive_desc_create":
                    [ctypes.POINTER(p), p, i, p, p, p, dims, dims, dims, dims, p, p],
                "dnnl_convolution_backward_weights_primitive_desc_create":
                    [ctypes.POINTER(p), p, i, p, p, p, p, dims, dims, dims, dims, p, p],
                "dnnl_lstm_forward_primitive_desc_create":
                    [ctypes.POINTER(p), p, i, i] + [p] * 11 + [ctypes.c_uint, p],
                "dnnl_lstm_backward_primitive_desc_create":
                    [ctypes.POINTER(p), p, i, i] + [p] * 22 + [ctypes.c_uint, p, p],
                "dnnl_eltwise_forward_primitive_desc_create":
                    [ctypes.POINTER(p), p, i, i, p, p, ctypes.c_float, ctypes.c_float, p],
                "dnnl_eltwise_backward_primitive_desc_create":
                    [ctypes.POINTER(p), p, i, p, p, p, ctypes.c_float, ctypes.c_float, p, p],
                "dnnl_layer_normalization_forward_primitive_desc_create":
                    [ctypes.POINTER(p), p, i, p, p, p, ctypes.c_float, ctypes.c_uint, p],
                "dnnl_layer_normalization_backward_primitive_desc_create":
                    [ctypes.POINTER(p), p, i, p, p, p, p, ctypes.c_float, ctypes.c_uint, p, p],
                "dnnl_reorder_primitive_desc_create": [ctypes.POINTER(p), p, p, p, p, p],
                "dnnl_primitive_desc_query": [p, i, i, p],
                "dnnl_primitive_attr_create": [ctypes.POINTER(p)],
                "dnnl_primitive_attr_set_scratchpad_mode": [p, i],
                "dnnl_primitive_desc_destroy": [p],
                "dnnl_primitive_create": [ctypes.POINTER(p), p],
                "dnnl_primitive_execute": [p, p, i, ctypes.POINTER(_Arg)],
                "dnnl_primitive_destroy": [p]}.items():
            f = getattr(lib, name)
            f.argtypes, f.restype = args, ctypes.c_int
        for name in ("dnnl_primitive_desc_query_md",):
            f = getattr(lib, name)
            f.argtypes, f.restype = [p, i, i], p
        lib.dnnl_memory_desc_get_size.argtypes = [p]
        lib.dnnl_memory_desc_get_size.restype = ctypes.c_size_t
        lib.dnnl_memory_desc_equal.argtypes = [p, p]
        lib.dnnl_memory_desc_equal.restype = ctypes.c_int
        self.engine = p()
        self.call("dnnl_engine_create", ctypes.byref(self.engine), _CPU, 0)
        self._streams = threading.local()
        # every primitive takes its scratch memory from its caller (`_Plan.run`), not from
        # the library's buffer, which primitives running at once on two threads shared (two
        # threads' LSTMs crashed the process)
        self.attr = p()
        self.call("dnnl_primitive_attr_create", ctypes.byref(self.attr))
        self.call("dnnl_primitive_attr_set_scratchpad_mode", self.attr, _SCRATCHPAD_USER)

    @property
    def stream(self):
        """The calling thread's stream (a stream is not to be shared between threads)."""
        stream = getattr(self._streams, "stream", None)
        if stream is None:
            stream = self._streams.stream = _handle()
            self.call("dnnl_stream_create", ctypes.byref(stream), self.engine, _IN_ORDER)
        return stream

    def call(self, name, *args):
        status = getattr(self.lib, name)(*args)
        if status:
            raise DnnlError(f"oneDNN's {name} failed with status {status}")

    @contextlib.contextmanager
    def threads(self, n):
        """OpenMP's thread count `n` for the calling thread inside the block, and what it was
        after it (the count is OpenMP's for the whole thread, and PyTorch, in the same process,
        runs on the same GNU OpenMP: its wheel's libgomp.so.1 is the one loaded)."""
        before = self._get_threads()
        if before != n:
            self._set_threads(n)
        try:
            yield
        finally:
            if before != n:
                self._set_threads(before)


def _library_paths():
    """Where pip (and conda) put libdnnl: the environment's lib directory, then the loader's
    own search."""
    for prefix in dict.fromkeys((sys.prefix, os.environ.get("CONDA_PREFIX", sys.prefix))):
        yield os.path.join(prefix, "lib", "libdnnl.so.3")
    yield "libdnnl.so.3"


def _load():
    if os.environ.get("EMBER_ONEDNN", "1") == "0":
        return None
    for path in _library_paths():
        try:
            lib = ctypes.CDLL(path)
            omp = ctypes.CDLL("libgomp.so.1")  # the runtime libdnnl (the gomp wheel) links
            return Library(lib, omp)
        except (OSError, AttributeError, DnnlError):
            continue
    return None


class _State:
    library = None
    loaded = False
    forked = False


_state = _State()


def _forget():
    """In a forked child: GNU OpenMP's threads do not survive a fork, and a parallel region
    in the child can hang; its convolutions take NumPy's routines."""
    _state.forked = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)


def library():
    """The Library convolutions go through, or None; looked for on the first convolution."""
    if not _state.loaded:
        _state.loaded = True
        _state.library = _load()
    return None if _state.forked else _state.library


def use(lib):
    """Make `lib` (a Library, or None for NumPy's routines) the one convolutions go through;
    returns the one before."""
    before = library()
    _state.library, _state.loaded = lib, True
    return before


# ---- plans: a shape's primitives, made once --------------------------------------------------
class _Plan:
    """One primitive for a shape, with the reorders between each operand's plain layout (as
    NumPy holds it) and the layout the kernel wants. `operands`: (argument, plain descriptor,
    role) in the order `run` takes the arrays; role "in" (read), "out" (written) or "sum" (an
    output the kernel adds into, which starts at zero). A plain descriptor None takes the
    kernel's own layout (a workspace: `nbytes` tells its size)."""

    def __init__(self, lib, pd, operands, threads):
        self.lib, self.lock, self.threads = lib, threading.Lock(), threads
        self.owned = []  # what __del__ gives back to oneDNN
        self.primitive = self._primitive(pd)
        self.name = self._query_name(pd)
        self.steps = []  # (argument, role, plain memory, kernel memory or None, reorder, bytes)
        self.nbytes = {}
        for arg, plain, role in operands:
            wanted = lib.lib.dnnl_primitive_desc_query_md(pd, _QUERY_EXEC_ARG_MD, arg)
            self.nbytes[arg] = lib.lib.dnnl_memory_desc_get_size(wanted)
            plain = wanted if plain is None else plain
            user = self._memory(plain)
            if lib.lib.dnnl_memory_desc_equal(plain, wanted):
                self.steps.append((arg, role, user, None, None, 0))
                continue
            inner = self._memory(wanted)
            src, dst = (user, inner) if role == "in" else (inner, user)
            reorder_pd = _handle()
            lib.call("dnnl_reorder_primitive_desc_create", ctypes.byref(reorder_pd),
                     plain if role == "in" else wanted, lib.engine,
                     wanted if role == "in" else plain, lib.engine, lib.attr)
            reorder = self._primitive(reorder_pd)
            lib.call("dnnl_primitive_desc_destroy", reorder_pd)
            self.steps.append((arg, role, user, inner, (reorder, src, dst), self.nbytes[arg]))

    def _primitive(self, pd):
        """(pd's primitive, (memory for its scratchpad, bytes) or None where it needs none)."""
        prim = _handle()
        self.lib.call("dnnl_primitive_create", ctypes.byref(prim), pd)
        self.owned.append(("dnnl_primitive_destroy", prim))
        md = self.lib.lib.dnnl_primitive_desc_query_md(pd, _QUERY_EXEC_ARG_MD, SCRATCHPAD)
        size = self.lib.lib.dnnl_memory_desc_get_size(md) if md else 0
        return prim, ((self._memory(md), size) if size else None)

    def _memory(self, md):
        mem = _handle()
        self.lib.call("dnnl_memory_create", ctypes.byref(mem), md, self.lib.engine, None)
        self.owned.append(("dnnl_memory_destroy", mem))
        return mem

    def _query_name(self, pd):
        name = ctypes.c_char_p()
        self.lib.call("dnnl_primitive_desc_query", pd, _QUERY_IMPL, 0, ctypes.byref(name))
        return (name.value or b"").decode()

    def run(self, *arrays):
        """Run the plan on `arrays` (one for each operand, in its plain layout)."""
        lib, call = self.lib, self.lib.call
        args = (_Arg * len(self.steps))()
        with self.lock, lib.threads(self.threads):
            stream = lib.stream
            scratch = []  # the kernel-layout copies, alive until the stream has run
            for k, ((arg, role, user, inner, reorder, size), a) in enumerate(
                    zip(self.steps, arrays)):
                call("dnnl_memory_set_data_handle", user, a.ctypes.data)
                if inner is None:
                    if role == "sum":
                        a[...] = 0
                else:
                    buffer = (np.zeros if role == "sum" else np.empty)(size + _ALIGN, np.uint8)
                    scratch.append(buffer)
                    call("dnnl_memory_set_data_handle", inner,
                         buffer.ctypes.data + (-buffer.ctypes.data) % _ALIGN)
                    if role == "in":  # into the kernel's layout
                        self._reorder(reorder, stream, scratch)
                args[k].arg, args[k].memory = arg, (user if inner is None else inner)
            self._execute(self.primitive, args, stream, scratch)
            for arg, role, user, inner, reorder, size in self.steps:
                if inner is not None and role != "in":
                    self._reorder(reorder, stream, scratch)
            call("dnnl_stream_wait", stream)

    def _execute(self, primitive, args, stream, scratch):
        """Run `primitive` (as `_primitive` gives it) with `args` and a scratchpad of its own,
        kept in `scratch` until the stream has run."""
        prim, pad = primitive
        if pad is not None:
            memory, size = pad
            buffer = np.empty(size + _ALIGN, np.uint8)
            scratch.append(buffer)
            self.lib.call("dnnl_memory_set_data_handle", memory,
                          buffer.ctypes.data + (-buffer.ctypes.data) % _ALIGN)
            args = (_Arg * (len(args) + 1))(*args, _Arg(SCRATCHPAD, memory))
        self.lib.call("dnnl_primitive_execute", prim, stream, len(args), args)

    def _reorder(self, reorder, stream, scratch):
        primitive, src, dst = reorder
        self._execute(primitive, (_Arg * 2)(_Arg(SRC, src), _Arg(DST, dst)), stream, scratch)

    def __del__(self):
        for name, h in reversed(self.owned):
            getattr(self.lib.lib, name)(h)


class _Plans:
    """Plans by key, the least recently used dropped past `size` (a model's layers need a
    few dozen; a program that varies its shapes would otherwise keep every one)."""

    def __init__(self, size=256):
        self.size, self._plans, self._lock = size, OrderedDict(), threading.Lock()

    def get(self, key):
        with self._lock:
            plan = self._plans.get(key, False)
            if plan is not False:
                self._plans.move_to_end(key)
            return plan

    def put(self, key, plan):
        with self._lock:
            self._plans[key] = plan
            while len(self._plans) > self.size:
                self._plans.popitem(last=False)

    def clear(self):
        with self._lock:
            self._plans.clear()


_plans = _Plans()


class _Descriptors:
    """The memory descriptors a plan is made from, destroyed once it is."""

    def __init__(self, lib):
        self.lib, self.made = lib, []

    def plain(self, shape, strides):
        return self._make("dnnl_memory_desc_create_with_strides", len(shape), _dims(shape),
                          _F32, _dims(strides))

    def any(self, shape):
        return self._make("dnnl_memory_desc_create_with_tag", len(shape), _dims(shape), _F32,
                          _FORMAT_ANY)

    def _make(self, name, *args):
        md = _handle()
        self.lib.call(name, ctypes.byref(md), *args)
        self.made.append(md)
        return md

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for md in self.made:
            self.lib.lib.dnnl_memory_desc_destroy(md)


def _dims(values):
    d = _Dims()
    d[:len(values)] = [int(v) for v in values]
    return d


def _elements(a):
    """a's strides in elements."""
    return tuple(s // a.itemsize for s in a.strides)


def _operand(a):
    """a as oneDNN can read it in place (aligned, strides of whole positive elements), else a
    C-ordered copy."""
    if a.flags.aligned and all(s > 0 and s % a.itemsize == 0 for s in a.strides):
        return a
    return np.ascontiguousarray(a)


def _weight_shape(w_shape, groups):
    """The weight's dims as oneDNN has them: (g, O/g, C/g, *K) for grouped convolutions."""
    if groups == 1:
        return tuple(w_shape)
    return (groups, w_shape[0] // groups) + tuple(w_shape[1:])


def _weight_strides(w, groups):
    s = _elements(w)
    return s if groups == 1 else (s[0] * (w.shape[0] // groups),) + s


def _conv_params(x_spatial, y_spatial, kernel, p):
    """oneDNN's (strides, dilations - 1, padding before, padding after) for a convolution of
    x_spatial to y_spatial; the padding after is what makes oneDNN's size equation hold (the
    rows past the last window, which no output reads, left out)."""
    stride, lo, _, dil, _ = p
    hi = [(y - 1) * s + d * (k - 1) + 1 - x - l
          for x, y, k, s, d, l in zip(x_spatial, y_spatial, kernel, stride, dil, lo)]
    return _dims(stride), _dims([d - 1 for d in dil]), _dims(lo), _dims(hi)


def applies(*arrays):
    """Whether oneDNN is there, and switched on (`torch.backends.mkldnn.enabled`), to take a
    convolution of these arrays (float32 NumPy arrays of 1, 2 or 3 spatial dims, none
    empty)."""
    return _mkldnn.enabled and library() is not None and all(
        isinstance(a, np.ndarray) and a.dtype == np.float32 and a.size and a.ndim in (3, 4, 5)
        for a in arrays)


def _plan(key, threads, make):
    """The plan of `key` on `threads` threads, made by `make(lib, descriptors)` the first
    time; None where oneDNN refuses the shape (remembered too)."""
    key += (threads,)
    plan = _plans.get(key)
    if plan is False:
        lib = library()
        if lib is None:  # (taken away between a forward and its backward: `use(None)`)
            return None
        with _Descriptors(lib) as mds, lib.threads(threads):
            try:
                plan = make(lib, mds)
            except DnnlError:
                plan = None
        _plans.put(key, plan)
    return plan


def _forward_pd(lib, mds, x_shape, w_shape, y_shape, p, *, x_md=None):
    """A forward primitive descriptor with every layout left to oneDNN: the kernel and, for
    the backward ones, their hint."""
    g = p[4]
    params = _conv_params(x_shape[2:], y_shape[2:], w_shape[2:], p)
    pd = _handle()
    lib.call("dnnl_convolution_forward_primitive_desc_create", ctypes.byref(pd), lib.engine,
             _FORWARD_TRAINING, _CONVOLUTION_DIRECT, mds.any(x_shape),
             mds.any(_weight_shape(w_shape, g)), None, mds.any(y_shape), *params, lib.attr)
    return pd


def forward(x, w, p, y_spatial, threads):
    """conv(x, w) with params p = (stride, lo, hi, dilation, groups), output (N, O,
    *y_spatial), on `threads` threads; or None (see the module's docstring)."""
    if not applies(x, w):
        return None
    x, w = _operand(x), _operand(w)
    y_shape = (x.shape[0], w.shape[0]) + tuple(y_spatial)
    if min(y_shape) <= 0:
        return None
    g = p[4]
    key = ("forward", x.shape, x.strides, w.shape, w.strides, y_shape, _key(p))

    def make(lib, mds):
        pd = _forward_pd(lib, mds, x.shape, w.shape, y_shape, p)
        try:
            return _Plan(lib, pd, [
                (SRC, mds.plain(x.shape, _elements(x)), "in"),
                (WEIGHTS, mds.plain(_weight_shape(w.shape, g), _weight_strides(w, g)), "in"),
                (DST, mds.plain(y_shape, _c_strides(y_shape)), "out")], threads)
        finally:
            lib.call("dnnl_primitive_desc_destroy", pd)
    plan = _plan(key, threads, make)
    if plan is None:
        return None
    y = np.empty(y_shape, np.float32)
    plan.run(x, w, y)
    return y


def backward_data(gy, w, p, x_spatial, threads):
    """The gradient (N, C, *x_spatial) of conv(x, w) in x, from gy; or None."""
    if not applies(gy, w):
        return None
    gy, w = _operand(gy), _operand(w)
    g = p[4]
    x_shape = (gy.shape[0], w.shape[1] * g) + tuple(x_spatial)
    if min(x_shape) <= 0:
        return None
    key = ("backward_data", gy.shape, gy.strides, w.shape, w.strides, x_shape, _key(p))

    def make(lib, mds):
        hint = _forward_pd(lib, mds, x_shape, w.shape, gy.shape, p)
        pd = _handle()
        try:
            lib.call("dnnl_convolution_backward_data_primitive_desc_create", ctypes.byref(pd),
                     lib.engine, _CONVOLUTION_DIRECT, mds.any(x_shape),
                     mds.any(_weight_shape(w.shape, g)), mds.any(gy.shape),
                     *_conv_params(x_shape[2:], gy.shape[2:], w.shape[2:], p), hint, lib.attr)
            return _Plan(lib, pd, [
                (DIFF_DST, mds.plain(gy.shape, _elements(gy)), "in"),
                (WEIGHTS, mds.plain(_weight_shape(w.shape, g), _weight_strides(w, g)), "in"),
                (DIFF_SRC, mds.plain(x_shape, _c_strides(x_shape)), "out")], threads)
        finally:
            lib.call("dnnl_primitive_desc_destroy", hint)
            if pd:
                lib.call("dnnl_primitive_desc_destroy", pd)
    plan = _plan(key, threads, make)
    if plan is None:
        return None
    gx = np.empty(x_shape, np.float32)
    plan.run(gy, w, gx)
    return gx


def backward_weights(x, gy, p, w_shape, threads):
    """The gradient (O, C/g, *K) of conv(x, w) in w, from gy; or None."""
    if not applies(x, gy):
        return None
    x, gy = _operand(x), _operand(gy)
    g = p[4]
    w_shape = tuple(w_shape)
    key = ("backward_weights", x.shape, x.strides, gy.shape, gy.strides, w_shape, _key(p))

    def make(lib, mds):
        hint = _forward_pd(lib, mds, x.shape, w_shape, gy.shape, p)
        pd = _handle()
        try:
            lib.call("dnnl_convolution_backward_weights_primitive_desc_create",
                     ctypes.byref(pd), lib.engine, _CONVOLUTION_DIRECT, mds.any(x.shape),
                     mds.any(_weight_shape(w_shape, g)), None, mds.any(gy.shape),
                     *_conv_params(x.shape[2:], gy.shape[2:], w_shape[2:], p), hint, lib.attr)
            return _Plan(lib, pd, [
                (SRC, mds.plain(x.shape, _elements(x)), "in"),
                (DIFF_DST, mds.plain(gy.shape, _elements(gy)), "in"),
                (DIFF_WEIGHTS, mds.plain(_weight_shape(w_shape, g),
                                         _c_strides(_weight_shape(w_shape, g))), "out")],
                         threads)
        finally:
            lib.call("dnnl_primitive_desc_destroy", hint)
            if pd:
                lib.call("dnnl_primitive_desc_destroy", pd)
    plan = _plan(key, threads, make)
    if plan is None:
        return None
    gw = np.empty(w_shape, np.float32)
    plan.run(x, gy, gw)
    return gw


def _key(p):
    stride, lo, hi, dil, g = p
    return tuple(stride), tuple(lo), tuple(hi), tuple(dil), g


def _c_strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


# ---- an LSTM layer's direction ---------------------------------------------------------------
SRC_ITER, SRC_ITER_C, DST_ITER, DST_ITER_C, WEIGHTS_ITER, BIAS, WORKSPACE = 2, 3, 18, 19, 34, \
    41, 64
DIFF_SRC_ITER, DIFF_SRC_ITER_C, DIFF_DST_ITER, DIFF_DST_ITER_C, DIFF_WEIGHTS_ITER, DIFF_BIAS = \
    130, 131, 146, 147, 162, 169
_BACKWARD = 128
_LEFT_TO_RIGHT, _RIGHT_TO_LEFT = 1, 2


def _gates_strides(w, hidden):
    """A PyTorch gate weight (4H, K)'s strides as oneDNN's (1, 1, K, 4, H) ldigo dims."""
    s0, s1 = (s // w.itemsize for s in w.strides)
    return (4 * hidden * w.shape[1], 4 * hidden * w.shape[1], s1, hidden * s0, s0)


def _lstm_plan(kind, x_shape, hidden, reverse, threads):
    """The plan of an LSTM layer's forward (training) or backward: x (T, B, I), no
    projection; PyTorch's gate order (i, f, g, o) is oneDNN's."""
    t, b, i = x_shape
    h = hidden
    key = ("lstm", kind, x_shape, hidden, reverse)
    state = (1, 1, b, h)
    w_layer, w_iter, bias = (1, 1, i, 4, h), (1, 1, h, 4, h), (1, 1, 4, h)
    direction = _RIGHT_TO_LEFT if reverse else _LEFT_TO_RIGHT
    strides_w = _gates_strides(np.empty((4 * h, i), np.float32), h)
    strides_u = _gates_strides(np.empty((4 * h, h), np.float32), h)

    def forward_pd(lib, mds):
        pd = _handle()
        lib.call("dnnl_lstm_forward_primitive_desc_create", ctypes.byref(pd), lib.engine,
                 _FORWARD_TRAINING, direction, mds.any(x_shape), mds.any(state),
                 mds.any(state), mds.any(w_layer), mds.any(w_iter), None, None,
                 mds.any(bias), mds.any((t, b, h)), mds.any(state), mds.any(state), 0, lib.attr)
        return pd

    def make(lib, mds):
        plain = {
            "x": mds.plain(x_shape, _c_strides(x_shape)),
            "y": mds.plain((t, b, h), _c_strides((t, b, h))),
            "state": mds.plain(state, _c_strides(state)),
            "w": mds.plain(w_layer, strides_w), "u": mds.plain(w_iter, strides_u),
            "bias": mds.plain(bias, _c_strides(bias))}
        fwd = forward_pd(lib, mds)
        if kind == "forward":
            try:
                return _Plan(lib, fwd, [
                    (SRC, plain["x"], "in"), (SRC_ITER, plain["state"], "in"),
                    (SRC_ITER_C, plain["state"], "in"), (WEIGHTS, plain["w"], "in"),
                    (WEIGHTS_ITER, plain["u"], "in"), (BIAS, plain["bias"], "in"),
                    (DST, plain["y"], "out"), (DST_ITER, plain["state"], "out"),
                    (DST_ITER_C, plain["state"], "out"), (WORKSPACE, None, "out")], threads)
            finally:
                lib.call("dnnl_primitive_desc_destroy", fwd)
        pd = _handle()
        try:
            a = mds.any
            lib.call("dnnl_lstm_backward_primitive_desc_create", ctypes.byref(pd), lib.engine,
                     _BACKWARD, direction, a(x_shape), a(state), a(state), a(w_layer),
                     a(w_iter), None, None, a(bias), a((t, b, h)), a(state), a(state),
                     a(x_shape), a(state), a(state), a(w_layer), a(w_iter), None, None,
                     a(bias), a((t, b, h)), a(state), a(state), 0, fwd, lib.attr)
            return _Plan(lib, pd, [
                (SRC, plain["x"], "in"), (SRC_ITER, plain["state"], "in"),
                (SRC_ITER_C, plain["state"], "in"), (WEIGHTS, plain["w"], "in"),
                (WEIGHTS_ITER, plain["u"], "in"), (BIAS, plain["bias"], "in"),
                (DST, plain["y"], "in"), (DST_ITER, plain["state"], "in"),
                (DST_ITER_C, plain["state"], "in"), (DIFF_DST, plain["y"], "in"),
                (DIFF_DST_ITER, plain["state"], "in"), (DIFF_DST_ITER_C, plain["state"], "in"),
                (WORKSPACE, None, "in"), (DIFF_SRC, plain["x"], "out"),
                (DIFF_SRC_ITER, plain["state"], "out"),
                (DIFF_SRC_ITER_C, plain["state"], "out"),
                (DIFF_WEIGHTS, plain["w"], "sum"), (DIFF_WEIGHTS_ITER, plain["u"], "sum"),
                (DIFF_BIAS, plain["bias"], "sum")], threads)
        finally:
            lib.call("dnnl_primitive_desc_destroy", fwd)
            if pd:
                lib.call("dnnl_primitive_desc_destroy", pd)
    return _plan(key, threads, make)


def lstm_forward(x, h0, c0, w_ih, w_hh, bias, reverse, threads):
    """One direction of an LSTM layer over x (T, B, I) float32, from states h0, c0 (B, H),
    with PyTorch's weights w_ih (4H, I), w_hh (4H, H) and summed bias (4H,): (output (T, B,
    H), h_n, c_n, what `lstm_backward` needs), or None."""
    if not applies(x) or not all(isinstance(a, np.ndarray) and a.dtype == np.float32
                                 for a in (h0, c0, w_ih, w_hh, bias)):
        return None
    hidden = w_hh.shape[1]
    plan = _lstm_plan("forward", x.shape, hidden, reverse, threads)
    if plan is None:
        return None
    x, h0, c0, w_ih, w_hh, bias = (np.ascontiguousarray(a)
                                   for a in (x, h0, c0, w_ih, w_hh, bias))
    t, b, _ = x.shape
    y = np.empty((t, b, hidden), np.float32)
    h_n, c_n = np.empty((b, hidden), np.float32), np.empty((b, hidden), np.float32)
    workspace = np.empty(plan.nbytes[WORKSPACE] + _ALIGN, np.uint8)
    ws = workspace[(-workspace.ctypes.data) % _ALIGN:][:plan.nbytes[WORKSPACE]]
    plan.run(x, h0, c0, w_ih, w_hh, bias, y, h_n, c_n, ws)
    return y, h_n, c_n, (x, h0, c0, w_ih, w_hh, bias, y, h_n, c_n, ws, reverse, threads)


def lstm_backward(saved, d_y, d_hn, d_cn):
    """The gradients (x, h0, c0, w_ih, w_hh, bias) of `lstm_forward`'s direction, from those
    of its output and final states."""
    x, h0, c0, w_ih, w_hh, bias, y, h_n, c_n, ws, reverse, threads = saved
    hidden = w_hh.shape[1]
    plan = _lstm_plan("backward", x.shape, hidden, reverse, threads)
    if plan is None:
        raise DnnlError("oneDNN refused the backward of an LSTM whose forward it ran")
    d_y, d_hn, d_cn = (np.ascontiguousarray(a, np.float32) for a in (d_y, d_hn, d_cn))
    d_x, d_h0, d_c0 = np.empty_like(x), np.empty_like(h0), np.empty_like(c0)
    d_wih, d_whh, d_bias = np.empty_like(w_ih), np.empty_like(w_hh), np.empty_like(bias)
    plan.run(x, h0, c0, w_ih, w_hh, bias, y, h_n, c_n, d_y, d_hn, d_cn, ws, d_x, d_h0, d_c0,
             d_wih, d_whh, d_bias)
    return d_x, d_h0, d_c0, d_wih, d_whh, d_bias


# ---- layer norm over the last dim --------------------------------------------------------------
MEAN, VARIANCE, SCALE, SHIFT, DIFF_SCALE, DIFF_SHIFT = 49, 50, 51, 52, 255, 256
_USE_SCALE, _USE_SHIFT = 0x2, 0x4


def _layer_norm_plan(kind, shape, eps, scale, shift, threads):
    """The plan of layer norm's forward (training: it gives the statistics) or backward over
    the last dim of a C-ordered (..., D) array, with or without scale (weight) and shift
    (bias)."""
    flags = (_USE_SCALE if scale else 0) | (_USE_SHIFT if shift else 0)
    key = ("layer_norm", kind, shape, float(eps), flags)

    def make(lib, mds):
        x = mds.plain(shape, _c_strides(shape))
        stat = mds.plain(shape[:-1], _c_strides(shape[:-1]))
        vec = mds.plain(shape[-1:], (1,))
        affine = [(SCALE, vec, "in")] * bool(scale) + [(SHIFT, vec, "in")] * bool(shift)
        fwd = _handle()
        lib.call("dnnl_layer_normalization_forward_primitive_desc_create", ctypes.byref(fwd),
                 lib.engine, _FORWARD_TRAINING, x, x, stat, eps, flags, lib.attr)
        if kind == "forward":
            try:
                return _Plan(lib, fwd, [(SRC, x, "in")] + affine + [
                    (DST, x, "out"), (MEAN, stat, "out"), (VARIANCE, stat, "out")], threads)
            finally:
                lib.call("dnnl_primitive_desc_destroy", fwd)
        pd = _handle()
        try:
            lib.call("dnnl_layer_normalization_backward_primitive_desc_create",
                     ctypes.byref(pd), lib.engine, _BACKWARD, x, x, x, stat, eps, flags, fwd,
                     lib.attr)
            return _Plan(lib, pd, [(SRC, x, "in"), (DIFF_DST, x, "in"), (MEAN, stat, "in"),
                                   (VARIANCE, stat, "in")] + affine + [
                (DIFF_SRC, x, "out")] + [(DIFF_SCALE, vec, "out")] * bool(scale) +
                [(DIFF_SHIFT, vec, "out")] * bool(shift), threads)
        finally:
            lib.call("dnnl_primitive_desc_destroy", fwd)
            if pd:
                lib.call("dnnl_primitive_desc_destroy", pd)
    return _plan(key, threads, make)


def layer_norm_forward(x, weight, bias, eps, threads):
    """Layer norm of x (..., D) (float32, C-ordered) over its last dim, with weight and bias
    (D,) or None: (y, mean, variance), the statistics of shape x.shape[:-1]; or None."""
    if library() is None or not _mkldnn.enabled or not isinstance(x, np.ndarray) or \
            x.dtype != np.float32 or not x.size or x.ndim not in (2, 3, 4, 5) or \
            not x.flags.c_contiguous or \
            any(a is not None and (not isinstance(a, np.ndarray) or a.dtype != np.float32)
                for a in (weight, bias)):
        return None
    plan = _layer_norm_plan("forward", x.shape, eps, weight is not None, bias is not None,
                            threads)
    if plan is None:
        return None
    y = np.empty_like(x)
    mean, var = np.empty(x.shape[:-1], np.float32), np.empty(x.shape[:-1], np.float32)
    affine = [np.ascontiguousarray(a) for a in (weight, bias) if a is not None]
    plan.run(x, *affine, y, mean, var)
    return y, mean, var


def layer_norm_backward(x, gy, mean, var, weight, bias, eps, threads):
    """The gradients (x, weight or None, bias or None) of `layer_norm_forward`."""
    plan = _layer_norm_plan("backward", x.shape, eps, weight is not None, bias is not None,
                            threads)
    if plan is None:
        raise DnnlError("oneDNN refused the backward of a layer norm whose forward it ran")
    affine = [np.ascontiguousarray(a) for a in (weight, bias) if a is not None]
    dx = np.empty_like(x)
    dw = None if weight is None else np.empty(weight.shape, np.float32)
    db = None if bias is None else np.empty(bias.shape, np.float32)
    plan.run(x, np.ascontiguousarray(gy, np.float32), mean, var, *affine, dx,
             *[a for a in (dw, db) if a is not None])
    return dx, dw, db


# ---- elementwise functions (GELU's two forms) ----------------------------------------------------
ELTWISE = {"gelu_erf": 0x31, "gelu_tanh": 0x2b}  # dnnl_eltwise_gelu_erf, dnnl_eltwise_gelu_tanh


def _eltwise_plan(kind, algorithm, size, threads):
    """The plan of an elementwise function's forward or backward (from its input) over a
    flat float32 array of `size` elements."""
    def make(lib, mds):
        x = mds.plain((size,), (1,))
        fwd = _handle()
        lib.call("dnnl_eltwise_forward_primitive_desc_create", ctypes.byref(fwd), lib.engine,
                 _FORWARD_TRAINING, ELTWISE[algorithm], x, x, 0.0, 0.0, lib.attr)
        if kind == "forward":
            try:
                return _Plan(lib, fwd, [(SRC, x, "in"), (DST, x, "out")], threads)
            finally:
                lib.call("dnnl_primitive_desc_destroy", fwd)
        pd = _handle()
        try:
            lib.call("dnnl_eltwise_backward_primitive_desc_create", ctypes.byref(pd),
                     lib.engine, ELTWISE[algorithm], x, x, x, 0.0, 0.0, fwd, lib.attr)
            return _Plan(lib, pd, [(SRC, x, "in"), (DIFF_DST, x, "in"), (DIFF_SRC, x, "out")],
                         threads)
        finally:
            lib.call("dnnl_primitive_desc_destroy", fwd)
            if pd:
                lib.call("dnnl_primitive_desc_destroy", pd)
    return _plan(("eltwise", kind, algorithm, size), threads, make)


def _flat_float32(a):
    return library() is not None and _mkldnn.enabled and isinstance(a, np.ndarray) and \
        a.dtype == np.float32 and a.size > 0 and a.flags.c_contiguous


def eltwise(algorithm, x, threads):
    """ELTWISE[algorithm](x) for a C-ordered float32 array, or None."""
    if not _flat_float32(x):
        return None
    plan = _eltwise_plan("forward", algorithm, x.size, threads)
    if plan is None:
        return None
    y = np.empty_like(x)
    plan.run(x.reshape(-1), y.reshape(-1))
    return y


def eltwise_backward(algorithm, x, gy, threads):
    """gy * ELTWISE[algorithm]'(x), or None."""
    if not _flat_float32(x) or not isinstance(gy, np.ndarray) or gy.shape != x.shape:
        return None
    plan = _eltwise_plan("backward", algorithm, x.size, threads)
    if plan is None:
        return None
    dx = np.empty_like(x)
    plan.run(x.reshape(-1), np.ascontiguousarray(gy, np.float32).reshape(-1), dx.reshape(-1))
    return dx
