"""`torch.backends.mps`: Apple's Metal devices, which ember does not drive."""


def is_available():
    return False


def is_built():
    return False
