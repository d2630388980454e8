"""float32 convolutions, LSTM layers, layer norms and GELUs through Intel's oneDNN, where it is
installed (`pip install ember[onednn]`): the library PyTorch's own CPU convolutions run on.
Given NCHW arrays, PyTorch has oneDNN copy them into its blocked layouts (nChw16c on
AVX-512), convolve there with a JIT kernel, and copy the result back; this module asks oneDNN
for the same, so a convolution takes PyTorch's time and, where both pick the same kernel,
gives its bits (Sapphire Rapids, 1 thread, 3x3 pad 1: (32, 16, 32, 32) 1.64 ms against
PyTorch's 1.69 and ember's own NumPy route's 3.8; every value equal to PyTorch's;
`/work/notes/s31/proto2.py`).

This module holds the library, the plans and the convolutions: three routines answer for the
three arrays a convolution's graph needs (`forward`, `backward_data`, `backward_weights`).
`_dnnl_layers` holds the LSTM layer, layer norm and GELU routines on the same plans. Each
answers with arrays, or None where NumPy's routines should compute instead: another dtype, an
empty dim, a library or a forked process that cannot run oneDNN, a shape oneDNN refuses.
Each shape's primitives (the kernel and the reorders into and out of its layouts) are made
once and kept in a bounded cache; a plan runs one call at a time (its memory objects take
each call's arrays), and each call brings the primitives' scratch memory.

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
    """The Library oneDNN's kernels go through, or None; looked for on first use."""
    if not _state.loaded:
        _state.loaded = True
        _state.library = _load()
    return None if _state.forked else _state.library


def use(lib):
    """Make `lib` (a Library, or None for NumPy's routines) the one oneDNN's kernels go
    through; returns the one before."""
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
    """The memory and primitive descriptors a plan is made from, destroyed once it is made
    (or refused)."""

    def __init__(self, lib):
        self.lib, self.made, self.primitives = lib, [], []

    def primitive(self, name, *args):
        """A primitive descriptor by oneDNN's `name`(descriptor, engine, *args)."""
        pd = _handle()
        self.lib.call(name, ctypes.byref(pd), self.lib.engine, *args)
        self.primitives.append(pd)
        return pd

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
        for pd in self.primitives:
            self.lib.lib.dnnl_primitive_desc_destroy(pd)
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


def _forward_pd(lib, mds, x_shape, w_shape, y_shape, p):
    """A forward primitive descriptor with every layout left to oneDNN: the kernel and, for
    the backward ones, their hint."""
    return mds.primitive(
        "dnnl_convolution_forward_primitive_desc_create", _FORWARD_TRAINING,
        _CONVOLUTION_DIRECT, mds.any(x_shape), mds.any(_weight_shape(w_shape, p[4])), None,
        mds.any(y_shape), *_conv_params(x_shape[2:], y_shape[2:], w_shape[2:], p), lib.attr)


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
        return _Plan(lib, _forward_pd(lib, mds, x.shape, w.shape, y_shape, p), [
            (SRC, mds.plain(x.shape, _elements(x)), "in"),
            (WEIGHTS, mds.plain(_weight_shape(w.shape, g), _weight_strides(w, g)), "in"),
            (DST, mds.plain(y_shape, _c_strides(y_shape)), "out")], threads)
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
        pd = mds.primitive(
            "dnnl_convolution_backward_data_primitive_desc_create", _CONVOLUTION_DIRECT,
            mds.any(x_shape), mds.any(_weight_shape(w.shape, g)), mds.any(gy.shape),
            *_conv_params(x_shape[2:], gy.shape[2:], w.shape[2:], p),
            _forward_pd(lib, mds, x_shape, w.shape, gy.shape, p), lib.attr)
        return _Plan(lib, pd, [
            (DIFF_DST, mds.plain(gy.shape, _elements(gy)), "in"),
            (WEIGHTS, mds.plain(_weight_shape(w.shape, g), _weight_strides(w, g)), "in"),
            (DIFF_SRC, mds.plain(x_shape, _c_strides(x_shape)), "out")], threads)
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
        pd = mds.primitive(
            "dnnl_convolution_backward_weights_primitive_desc_create", _CONVOLUTION_DIRECT,
            mds.any(x.shape), mds.any(_weight_shape(w_shape, g)), None, mds.any(gy.shape),
            *_conv_params(x.shape[2:], gy.shape[2:], w_shape[2:], p),
            _forward_pd(lib, mds, x.shape, w_shape, gy.shape, p), lib.attr)
        return _Plan(lib, pd, [
            (SRC, mds.plain(x.shape, _elements(x)), "in"),
            (DIFF_DST, mds.plain(gy.shape, _elements(gy)), "in"),
            (DIFF_WEIGHTS, mds.plain(_weight_shape(w_shape, g),
                                     _c_strides(_weight_shape(w_shape, g))), "out")], threads)
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
