"""`torch.backends.openmp`: ember's CPU threads are NumPy's BLAS pool, not OpenMP."""


def is_available():
    return False
