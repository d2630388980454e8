"""Op-table entries for ember/ops/complex_views.py: view_as_real / view_as_complex, real /
imag, complex, polar, conj_physical and the conjugate/negative bits.

gradcheck works on real tensors: complex values are built inside the call from a real
(..., 2) array with `view_as_complex` and complex results leave through `view_as_real`, so
every gradient crosses PyTorch's complex conventions and is still checked against torch.
"""
import numpy as np

from . import OpInfo, Sample, randn, register


def _pairs(rng, *shape):
    return randn(rng, *shape, 2)


def _cplx(rng, *shape):
    return randn(rng, *shape) + 1j * randn(rng, *shape)


def _view_as_real_samples(rng):
    return [Sample((_pairs(rng, 3, 4),)), Sample((_pairs(rng),)), Sample((_pairs(rng, 2, 0),)),
            Sample((_cplx(rng, 2, 3),), grad=()),
            Sample((randn(rng, 3),), {"as_is": True}, raises=RuntimeError),
            Sample((_cplx(rng, 3),), {"conj": True}, raises=RuntimeError)]


def _view_as_real(lib, x, as_is=False, conj=False):
    if as_is or x.dtype.is_complex:
        return lib.view_as_real(x.conj() if conj else x)
    return lib.view_as_real(lib.view_as_complex(x) * 2)


register(OpInfo("view_as_real", _view_as_real, _view_as_real_samples))


def _view_as_complex(lib, x, layout=None):
    if layout == "t":
        x = x.t()
    elif layout == "cols":
        x = x[:, :2]
    elif layout == "offset":
        x = x.reshape(-1)[1:7].reshape(3, 2)
    elif layout == "int":
        x = x.long()
    z = lib.view_as_complex(x)
    return lib.view_as_real(z * z), z.shape, z.stride(), z.storage_offset()


def _view_as_complex_samples(rng):
    return [Sample((_pairs(rng, 3, 4),)), Sample((_pairs(rng, 5),)), Sample((randn(rng, 2),)),
            Sample((randn(rng, 3, 4),), {"layout": "cols"}),
            Sample((randn(rng, 3, 3),), raises=RuntimeError),
            Sample((randn(rng, 2, 3),), {"layout": "t"}, raises=RuntimeError),
            Sample((randn(rng, 8),), {"layout": "offset"}, raises=RuntimeError),
            Sample((randn(rng, 3, 2),), {"layout": "int"}, raises=RuntimeError),
            Sample((np.array(1.0),), raises=RuntimeError)]


register(OpInfo("view_as_complex", _view_as_complex, _view_as_complex_samples))


def _part(name, method):
    def call(lib, x, real_input=False):
        z = x if real_input or x.dtype.is_complex else lib.view_as_complex(x) * 2
        out = getattr(z, name) if method else getattr(lib, name)(z)
        return out, out.stride(), out.storage_offset()

    def samples(rng):
        out = [Sample((_pairs(rng, 3, 4),)), Sample((_pairs(rng),)),
               Sample((_cplx(rng, 2, 3),), grad=())]
        if name == "imag":
            out.append(Sample((randn(rng, 3),), {"real_input": True}, raises=RuntimeError))
        else:
            out.append(Sample((randn(rng, 3),), {"real_input": True}))
        return out
    register(OpInfo(name, call, samples, variant="method" if method else ""))


for _name in ("real", "imag"):
    _part(_name, False)
    _part(_name, True)


def _write_through(lib, x):
    """Writes through .real / .imag (and assignment to them) reach the complex tensor, with
    autograd through the writes."""
    z = lib.view_as_complex(x) * 1
    z.real.mul_(3)
    z.imag[0] = 5
    z.real = z.imag * 2
    return lib.view_as_real(z)


register(OpInfo("real", _write_through, lambda rng: [Sample((_pairs(rng, 4),))],
                variant="write_through"))


def _complex(lib, a, b):
    return lib.view_as_real(lib.complex(a, b))


def _complex_samples(rng):
    return [Sample((randn(rng, 3, 4), randn(rng, 3, 4))), Sample((randn(rng, 3, 1), randn(rng, 4))),
            Sample((randn(rng), randn(rng, 2))),
            Sample((randn(rng, 3), randn(rng, 3).astype(np.float32)), raises=RuntimeError),
            Sample((np.arange(3), np.arange(3)), raises=RuntimeError)]


register(OpInfo("complex", _complex, _complex_samples))


def _polar(lib, a, b):
    return lib.view_as_real(lib.polar(a, b))


register(OpInfo("polar", _polar, lambda rng: [
    Sample((np.abs(randn(rng, 3, 4)) + 0.1, randn(rng, 3, 4))),
    Sample((np.abs(randn(rng, 3, 1)) + 0.1, randn(rng, 4))),
    Sample((randn(rng, 3), randn(rng, 3).astype(np.float32)), raises=RuntimeError)]))


def _conj_physical(lib, x, inplace=False):
    z = lib.view_as_complex(x) * 2 if x.dtype.is_floating_point and x.shape[-1:] == (2,) and \
        x.ndim > 1 else x
    if inplace:
        z = z.clone()
        out = z.conj_physical_()
        assert out is z
    else:
        out = lib.conj_physical(z)
    return lib.view_as_real(out) if out.dtype.is_complex else out


def _conj_physical_samples(rng):
    return [Sample((_pairs(rng, 3, 4),)), Sample((_cplx(rng, 3),), grad=()),
            Sample((randn(rng, 5),)), Sample((np.arange(4),))]


register(OpInfo("conj_physical", _conj_physical, _conj_physical_samples))
register(OpInfo("conj_physical_", lambda lib, x: _conj_physical(lib, x, True),
                _conj_physical_samples))


def _bits(lib, x):
    z = lib.view_as_complex(x)
    c = z.conj()
    r = c.resolve_conj()
    return (z.is_conj(), c.is_conj(), c.conj().is_conj(), r.is_conj(), r.is_neg(),
            c.imag.is_neg(), z.imag.is_neg(), lib.is_conj(c), lib.is_neg(z.real),
            lib.resolve_neg(c.imag).is_neg(), lib.resolve_conj(z) is z,
            lib.view_as_real(r), c.resolve_neg().is_conj())


register(OpInfo("is_conj", _bits, lambda rng: [Sample((_pairs(rng, 3),))],
                covers=("is_neg", "resolve_conj", "resolve_neg"), gradgrad=False))
