"""Op-table entries for `ember/ops/removed.py`: the functions PyTorch removed in 1.9 and keeps
as RuntimeErrors that say what replaces them, called as functions and as Tensor methods."""
from . import OpInfo, Sample, method, randn, register, top


def _square(rng):
    return randn(rng, 3, 3)


register(
    OpInfo("eig", top("eig"), lambda rng: [
        Sample((_square(rng),), raises=RuntimeError),
        Sample((_square(rng), True), raises=RuntimeError)], grad=False),
    OpInfo("symeig", top("symeig"), lambda rng: [
        Sample((_square(rng),), raises=RuntimeError),
        Sample((_square(rng),), {"eigenvectors": True, "upper": False}, raises=RuntimeError)],
        grad=False),
    OpInfo("solve", top("solve"), lambda rng: [
        Sample((randn(rng, 3, 2), _square(rng)), raises=RuntimeError)], grad=False),
    OpInfo("lstsq", top("lstsq"), lambda rng: [
        Sample((randn(rng, 3, 2), _square(rng)), raises=RuntimeError)], grad=False),
    OpInfo("matrix_rank", top("matrix_rank"), lambda rng: [
        Sample((_square(rng),), raises=RuntimeError),
        Sample((_square(rng),), {"symmetric": True}, raises=RuntimeError)], grad=False),
    OpInfo("eig", method("eig"), lambda rng: [Sample((_square(rng),), raises=RuntimeError)],
           grad=False, variant="method", covers=("Tensor.eig",)),
    OpInfo("symeig", method("symeig"), lambda rng: [Sample((_square(rng),), raises=RuntimeError)],
           grad=False, variant="method", covers=("Tensor.symeig",)),
    OpInfo("solve", method("solve"), lambda rng: [
        Sample((randn(rng, 3, 2), _square(rng)), raises=RuntimeError)],
        grad=False, variant="method", covers=("Tensor.solve",)),
    OpInfo("lstsq", method("lstsq"), lambda rng: [
        Sample((randn(rng, 3, 2), _square(rng)), raises=RuntimeError)],
        grad=False, variant="method", covers=("Tensor.lstsq",)),
)
