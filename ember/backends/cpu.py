"""`torch.backends.cpu`: the vector instruction level PyTorch's CPU kernels are dispatched
to. ember's kernels are NumPy's, which dispatch on the same CPU features; the answer is
read from them by PyTorch's rule (on x86: AVX512 needs AVX-512 VL, BW and DQ with FMA3;
AVX2 needs AVX2 with FMA3), capped as PyTorch caps it by ATEN_CPU_CAPABILITY."""
import os
import platform

__all__ = ["get_cpu_capability"]

# ATEN_CPU_CAPABILITY's values, lowest first, as the names get_cpu_capability returns
_X86_LEVELS = ("DEFAULT", "AVX2", "AVX512")


def _numpy_cpu_features():
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_features__
    return __cpu_features__


def _detected():
    machine = platform.machine().lower()
    features = _numpy_cpu_features()
    if machine in ("x86_64", "amd64", "i386", "i686", "x86"):
        if all(features.get(f) for f in ("AVX512VL", "AVX512BW", "AVX512DQ", "FMA3")):
            return "AVX512"
        if features.get("AVX2") and features.get("FMA3"):
            return "AVX2"
        return "DEFAULT"
    if machine.startswith("ppc64"):
        return "VSX" if features.get("VSX") else "DEFAULT"
    if machine == "s390x":
        return "Z VECTOR" if features.get("VX") else "DEFAULT"
    return "DEFAULT"


def get_cpu_capability() -> str:
    """The CPU's capability as a string: "DEFAULT", "VSX", "Z VECTOR", "NO AVX", "AVX2",
    "AVX512" or "SVE256"."""
    found = _detected()
    wanted = os.environ.get("ATEN_CPU_CAPABILITY", "").upper()
    if found in _X86_LEVELS and wanted in _X86_LEVELS:
        return _X86_LEVELS[min(_X86_LEVELS.index(found), _X86_LEVELS.index(wanted))]
    if wanted == "DEFAULT":
        return "DEFAULT"
    return found
