"""Op-table entries for `ember.fft` (ember/ops/spectral.py).

A sample's complex input is a real (..., 2) array turned complex inside the call
(`view_as_complex`, with the keyword `cplx=True`) and complex results leave through
`view_as_real`, so gradcheck, gradgradcheck and gradient parity all run on real tensors
while every gradient crosses PyTorch's complex conventions.
"""
import numpy as np

from . import OpInfo, Sample, integers, randn, register

_NORMS = (None, "backward", "ortho", "forward")


def _real_out(lib, o):
    if isinstance(o, (tuple, list)):
        return type(o)(_real_out(lib, i) for i in o)
    return lib.view_as_real(o.resolve_conj()) if o.dtype.is_complex else o


def _call(name):
    def call(lib, x, *args, cplx=False, grad_fn=False, **kwargs):
        if cplx:
            x = lib.view_as_complex(x)
        out = getattr(lib.fft, name)(x, *args, **kwargs)
        if grad_fn:  # the node names users print, down to the input
            node, names = out.grad_fn, []
            while node is not None and node.next_functions:
                names.append(type(node).__name__)
                node = node.next_functions[0][0]
            return _real_out(lib, out), tuple(names)
        return _real_out(lib, out)
    return call


def _pairs(rng, *shape):
    return randn(rng, *shape, 2)


def _one_dim_samples(real_only=False, complex_only=False):
    def samples(rng):
        out = []
        if not complex_only:
            out += [Sample((randn(rng, 3, 6),)), Sample((randn(rng, 5),), {"norm": "ortho"}),
                    Sample((randn(rng, 4, 5),), {"n": 8, "dim": 0, "norm": "forward"}),
                    Sample((randn(rng, 4, 5),), {"n": 3, "grad_fn": True}),
                    Sample((randn(rng, 3, 4),), {"grad_fn": True}),
                    Sample((randn(rng, 2, 3),), noncontig=(0,)),
                    Sample((integers(rng, 6),), grad=()),
                    Sample((randn(rng, 4),), {"n": 0}, raises=RuntimeError),
                    Sample((randn(rng, 4),), {"norm": "bad"}, raises=RuntimeError),
                    Sample((randn(rng, 4),), {"dim": 1}, raises=IndexError),
                    Sample((randn(rng, 4).astype(np.float16),), raises=RuntimeError)]
        if not real_only:
            out += [Sample((_pairs(rng, 3, 6),), {"cplx": True}),
                    Sample((_pairs(rng, 5),), {"cplx": True, "norm": "ortho", "n": 7}),
                    Sample((_pairs(rng, 4, 3),), {"cplx": True, "dim": 0, "n": 2,
                                                  "norm": "forward", "grad_fn": True}),
                    Sample((randn(rng, 4) + 1j * randn(rng, 4),), grad=())]
        elif not complex_only:
            out.append(Sample((randn(rng, 4) + 1j * randn(rng, 4),), raises=RuntimeError))
        return out
    return samples


for _name in ("fft", "ifft"):
    register(OpInfo("fft." + _name, _call(_name), _one_dim_samples()))
for _name in ("rfft", "ihfft"):
    register(OpInfo("fft." + _name, _call(_name), _one_dim_samples(real_only=True)))


def _c2r_samples(rng):
    return [Sample((_pairs(rng, 3, 4),), {"cplx": True}),
            Sample((_pairs(rng, 5),), {"cplx": True, "n": 9, "norm": "ortho"}),
            Sample((_pairs(rng, 5),), {"cplx": True, "n": 6, "norm": "forward",
                                       "grad_fn": True}),
            Sample((_pairs(rng, 4, 3),), {"cplx": True, "n": 3, "dim": 0}),
            Sample((randn(rng, 4),), {"grad_fn": True}), Sample((integers(rng, 4),), grad=()),
            Sample((_pairs(rng, 1),), {"cplx": True}, raises=RuntimeError),
            Sample((_pairs(rng, 3),), {"cplx": True, "norm": "bad"}, raises=RuntimeError)]


for _name in ("irfft", "hfft"):
    register(OpInfo("fft." + _name, _call(_name), _c2r_samples))


def _n_dim_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 2, 3, 4),), {"norm": "ortho"}),
            Sample((randn(rng, 3, 4),), {"s": (5, 2), "grad_fn": True}),
            Sample((_pairs(rng, 3, 4),), {"cplx": True, "norm": "forward"}),
            Sample((_pairs(rng, 2, 3, 4),), {"cplx": True, "s": (4, -1), "dim": (0, 2)}),
            Sample((integers(rng, 3, 3),), grad=()),
            Sample((randn(rng, 3, 4),), {"dim": (0, 0)}, raises=RuntimeError),
            Sample((randn(rng, 3, 4),), {"s": (2, 3, 4)}, raises=RuntimeError),
            Sample((randn(rng, 3, 4),), {"s": (2, 3), "dim": (0,)}, raises=RuntimeError)]


def _nd_variants(name, two):
    def samples(rng):
        out = _n_dim_samples(rng)
        if not two:
            out += [Sample((randn(rng, 3, 4),), {"dim": 0}), Sample((randn(rng, 3, 4),), {"s": (3,)})]
        else:
            out.append(Sample((randn(rng, 3),), raises=IndexError))
        return out
    return samples


for _name in ("fftn", "ifftn", "fft2", "ifft2"):
    register(OpInfo("fft." + _name, _call(_name), _nd_variants(_name, _name.endswith("2"))))


def _rfftn_samples(two):
    def samples(rng):
        out = [s for s in _n_dim_samples(rng) if not s.kwargs.get("cplx")]
        out.append(Sample((randn(rng, 3, 4) + 1j,), raises=RuntimeError))
        return out
    return samples


for _name in ("rfftn", "rfft2", "ihfftn", "ihfft2"):
    register(OpInfo("fft." + _name, _call(_name), _rfftn_samples(_name.endswith("2"))))


def _irfftn_samples(rng):
    return [Sample((_pairs(rng, 3, 4),), {"cplx": True}),
            Sample((_pairs(rng, 2, 3, 4),), {"cplx": True, "norm": "ortho", "grad_fn": True}),
            Sample((_pairs(rng, 3, 4),), {"cplx": True, "s": (4, 5)}),
            Sample((_pairs(rng, 3, 4),), {"cplx": True, "s": (2, 7), "norm": "forward"}),
            Sample((randn(rng, 3, 4),)),
            Sample((_pairs(rng, 3, 1),), {"cplx": True}, raises=RuntimeError),
            Sample((_pairs(rng, 3, 4),), {"cplx": True, "dim": (1, 1)}, raises=RuntimeError)]


for _name in ("irfftn", "irfft2", "hfftn", "hfft2"):
    register(OpInfo("fft." + _name, _call(_name), _irfftn_samples))


def _freq(name):
    def call(lib, n, *args, **kwargs):
        return getattr(lib.fft, name)(n, *args, **kwargs)

    def samples(rng):
        return [Sample((5,)), Sample((4, 0.5)), Sample((1,)), Sample((0,)),
                Sample((7,), {"d": 0.1, "dtype": "float64"}),
                Sample((6,), {"requires_grad": True})]
    return call, samples


def _freq_call(name):
    call, samples = _freq(name)

    def run(lib, n, *args, **kwargs):
        if "dtype" in kwargs:
            kwargs["dtype"] = getattr(lib, kwargs["dtype"])
        return call(lib, n, *args, **kwargs)
    return run, samples


for _name in ("fftfreq", "rfftfreq"):
    _c, _s = _freq_call(_name)
    register(OpInfo("fft." + _name, _c, _s, grad=False))


def _shift_samples(rng):
    return [Sample((randn(rng, 4, 5),)), Sample((randn(rng, 5),)),
            Sample((randn(rng, 3, 4, 5),), {"dim": 1}),
            Sample((randn(rng, 3, 4, 5),), {"dim": (0, -1)}),
            Sample((integers(rng, 7),)), Sample((randn(rng, 3),), {"dim": 2}, raises=IndexError)]


for _name in ("fftshift", "ifftshift"):
    register(OpInfo("fft." + _name, _call(_name), _shift_samples))
