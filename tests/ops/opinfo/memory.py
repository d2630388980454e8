"""Op-table entries for `ember/ops/memory.py`: Tensor.new, untyped_storage / storage (sizes,
elements, writes that reach the tensor), storage_type, set_ (every overload), from_file,
pin_memory / is_pinned, share_memory_ / is_shared."""
import os
import tempfile
import warnings

import numpy as np

import ember

from . import OpInfo, Sample, integers, randn, register


def _new(lib, x, *args):
    """Sizes give uninitialised memory (shape and dtype compared); data gives values."""
    y = x.new(*args)
    if args and all(isinstance(a, int) for a in args):
        return tuple(y.shape), y.dtype, y.requires_grad
    return y, y.requires_grad


def _new_samples(rng):
    return [
        Sample((randn(rng, 2), 2, 3), grad=()),
        Sample((randn(rng, 2),), grad=()),
        Sample((randn(rng, 2), [1, 2]), grad=()),
        Sample((randn(rng, 2), (1, 2)), grad=()),                  # a tuple is data, not sizes
        Sample((integers(rng, 2), [1.7, -2.2]), grad=()),
        Sample((randn(rng, 2), randn(rng, 3)), grad=()),            # a tensor of its dtype: aliased
        Sample((randn(rng, 2), integers(rng, 3)), grad=(), raises=TypeError),
        Sample((randn(rng, 2), 2.5), grad=(), raises=TypeError),
    ]


def _new_kwargs(lib, x, kw):
    return x.new([1, 2], **{k: getattr(lib, v) if v == "int64" else v for k, v in kw.items()})


def _storage_view(lib, x):
    """A view's storage is its base's whole memory; writes through it reach the tensors."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = x.clone()
        v = y[1:]
        s = v.storage()
        s[0] = 7.5
        s[-1] = -1.0
        got = (s.size(), len(s), s.element_size(), s.nbytes(), s.tolist(), s[1],
               s.data_ptr() == y.data_ptr(), s.dtype, str(s.device))
        return got + (y, v)


def _untyped(lib, x):
    y = x.clone()
    u = y[1:].untyped_storage()
    u[0] = 0   # the low byte of y's first element
    return (u.size(), u.nbytes(), len(u), u.element_size(), u.data_ptr() == y.data_ptr(),
            u[1], u[-1], u.tolist()[:8], y, repr(u).splitlines()[-1])


def _storage_errors(lib, x, i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return x.storage()[i]


def _shared(lib, x):
    y = x.clone()
    v = y[1:]
    before = (y.is_shared(), v.is_shared())
    r = y.share_memory_()
    return before, r is y, y.is_shared(), y[1:].is_shared(), y, y.is_contiguous()


def _storage_type(lib, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage's deprecation, once a process
        return repr(x.storage_type()), x.storage_type() is getattr(lib, x.storage_type().__name__)


def _set(lib, x, overload):
    """Each overload of set_: the result's values, size, strides, offset, and that writes
    through it reach the source's memory."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        src = x.clone()
        t = lib.tensor([], dtype=x.dtype)
        version = t._version
        r = {"empty": lambda: t.set_(),
             "storage": lambda: t.set_(src.storage()),
             "untyped": lambda: t.set_(src.untyped_storage()),
             "storage slice": lambda: t.set_(src.untyped_storage(), 1, (2,)),
             "strided": lambda: t.set_(source=src.storage(), storage_offset=1, size=(2, 2),
                                       stride=(1, 2)),
             "grows": lambda: t.set_(src.storage(), 2, (src.numel(),)),
             "tensor": lambda: t.set_(src[1:].t()),
             }[overload]()
        shared = None
        if r.numel() and overload != "grows":
            r.view(-1)[0:1].fill_(0) if r.is_contiguous() else r[(0,) * r.dim()].fill_(0)
            shared = src.tolist()
        # past the source's end, a grown storage is uninitialised memory: not compared
        known = t[:src.numel() - 2] if overload == "grows" else t
        return r is t, known, tuple(t.shape), t.stride(), t.storage_offset(), \
            t._version > version, shared


def _set_errors(lib, x, kind):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = lib.tensor([], dtype=lib.float32)
        if kind == "typed dtype":
            return t.set_(lib.IntStorage(3))
        if kind == "tensor dtype":
            return t.set_(lib.arange(3))
        if kind == "leaf":
            return lib.ones(2, dtype=x.dtype, requires_grad=True).set_(x.storage())
        return t.set_(5)


def _from_file(lib, x, shared, size):
    # one path for both libraries: the too-short file's error message names it
    path = os.path.join(tempfile.gettempdir(), f"from_file_sample_{os.getpid()}.bin")
    try:
        x.numpy().tofile(path)
        t = lib.from_file(path, shared=shared, size=size, dtype=x.dtype)
        if t.numel():
            t[0] = 5
        return t, x.dtype, lib.from_file(path, size=size, dtype=x.dtype)
    finally:
        os.unlink(path)


def _no_accelerator(samples):
    """PyTorch without an accelerator refuses to pin; ember matches it on such a machine."""
    return lambda rng: [] if ember.cuda.is_available() else samples(rng)


register(
    OpInfo("new", _new, _new_samples, grad=False),
    OpInfo("new", _new_kwargs, lambda rng: [Sample((randn(rng, 2), dict(device="cpu")), grad=()),
                                            Sample((randn(rng, 2), dict(dtype="int64")), grad=(),
                                                   raises=TypeError)],
           variant="keywords", grad=False),
    OpInfo("storage", _storage_view, lambda rng: [Sample((randn(rng, 5),), grad=()),
                                                  Sample((randn(rng, 3, 2),), grad=(), noncontig=(0,))],
           grad=False),
    OpInfo("storage", _storage_errors, lambda rng: [
        Sample((randn(rng, 3), 3), grad=(), raises=IndexError),
        Sample((randn(rng, 3), slice(0, 2)), grad=(), raises=RuntimeError),
        Sample((integers(rng, 3), -1), grad=()),
        Sample((np.array([True, False]), 0), grad=())], variant="errors", grad=False),
    OpInfo("untyped_storage", _untyped, lambda rng: [Sample((randn(rng, 4),), grad=()),
                                                     Sample((integers(rng, 3),), grad=())],
           grad=False),
    OpInfo("untyped_storage", lambda lib, x: x.untyped_storage()[x.numel() * 4],
           lambda rng: [Sample((randn(rng, 3).astype(np.float32),), grad=(), raises=IndexError)],
           variant="errors", grad=False),
    OpInfo("storage_type", _storage_type, lambda rng: [
        Sample((randn(rng, 2),), grad=()), Sample((integers(rng, 2),), grad=()),
        Sample((np.array([True]),), grad=()), Sample((randn(rng, 2).astype(np.float32),), grad=())],
        grad=False),
    OpInfo("set_", _set, lambda rng: [
        Sample((randn(rng, 6), kind), grad=()) for kind in
        ("empty", "storage", "untyped", "storage slice", "strided", "grows", "tensor")] + [
        Sample((integers(rng, 3, 2), "tensor"), grad=())], grad=False),
    OpInfo("set_", _set_errors, lambda rng: [
        Sample((randn(rng, 3), "typed dtype"), grad=(), raises=RuntimeError),
        Sample((randn(rng, 3), "tensor dtype"), grad=(), raises=RuntimeError),
        Sample((randn(rng, 3), "leaf"), grad=(), raises=RuntimeError),
        Sample((randn(rng, 3), "int"), grad=(), raises=TypeError)], variant="errors",
        grad=False),
    OpInfo("from_file", _from_file, lambda rng: [
        Sample((randn(rng, 6), True, 6), grad=()), Sample((randn(rng, 6), False, 4), grad=()),
        Sample((integers(rng, 4), None, 2), grad=()), Sample((randn(rng, 2), False, 0), grad=()),
        Sample((randn(rng, 2), False, 5), grad=(), raises=RuntimeError)], grad=False),
    OpInfo("share_memory_", _shared, lambda rng: [Sample((randn(rng, 4),), grad=()),
                                                  Sample((randn(rng, 3, 2),), grad=(), noncontig=(0,))],
           covers=("is_shared",), grad=False),
    OpInfo("pin_memory", lambda lib, x: x.pin_memory(),
           _no_accelerator(lambda rng: [Sample((randn(rng, 3),), grad=(), raises=RuntimeError)]),
           grad=False),
    OpInfo("is_pinned", lambda lib, x: (x.is_pinned(), x[1:].is_pinned()),
           lambda rng: [Sample((randn(rng, 3),), grad=())], grad=False),
)
