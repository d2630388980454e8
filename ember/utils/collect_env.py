"""`python -m torch.utils.collect_env` (`python -m ember.utils.collect_env`): the report of
the environment a bug report asks for, in PyTorch's layout. Where PyTorch reports its own
build, ember reports itself: its version (with the PyTorch API it follows), the CUDA that
CuPy runs (ember has no compiled CUDA of its own), and among the libraries ember and its
array backends (NumPy, CuPy, SciPy, ml_dtypes, mpi4py) as well as PyTorch's usual ones.

Each probe runs a command (gcc, lscpu, nvidia-smi ...) and reports "Could not collect" when
the command is missing or fails."""
import collections
import json
import locale
import os
import re
import subprocess
import sys

TORCH_AVAILABLE = True  # (PyTorch's report also runs without PyTorch; ember's is ember's)

SystemEnv = collections.namedtuple("SystemEnv", [
    "torch_version", "is_debug_build", "cuda_compiled_version", "gcc_version",
    "clang_version", "cmake_version", "os", "libc_version", "python_version",
    "python_platform", "is_cuda_available", "cuda_runtime_version", "cuda_module_loading",
    "nvidia_driver_version", "nvidia_gpu_models", "cudnn_version", "is_xpu_available",
    "pip_version", "pip_packages", "conda_packages", "hip_compiled_version",
    "hip_runtime_version", "miopen_runtime_version", "caching_allocator_config",
    "is_xnnpack_available", "cpu_info"])

# the packages the report lists, by a part of their name
COMMON_PATTERNS = ["torch", "numpy", "cupy", "scipy", "ml_dtypes", "ml-dtypes", "mpi4py",
                   "triton", "optree"]
NVIDIA_PATTERNS = ["cuda-cudart", "cuda-cupti", "cuda-libraries", "cuda-nvrtc",
                   "cuda-runtime", "cublas", "cudnn", "cufft", "curand", "cusolver",
                   "cusparse", "nccl", "nvjitlink", "nvtx"]
CONDA_PATTERNS = ["cudatoolkit", "mkl", "magma"]
ONEAPI_PATTERNS = ["dpcpp-cpp-rt", "intel-cmplr-lib-rt", "intel-opencl-rt", "intel-sycl-rt",
                   "onemkl-sycl-blas", "intel-openmp", "tbb", "umf"]
PIP_PATTERNS = ["ember", "mypy", "flake8", "onnx"]


def run(command):
    """(return code, stdout, stderr) of a command (a string runs in the shell); a command
    that cannot be started answers 127, as the shell does."""
    try:
        p = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             shell=isinstance(command, str))
    except OSError as e:
        return 127, "", str(e)
    out, err = p.communicate()
    encoding = "oem" if get_platform() == "win32" else locale.getpreferredencoding()
    return p.returncode, out.decode(encoding).strip(), err.decode(encoding).strip()


def run_and_read_all(run_lambda, command):
    """The command's whole output, or None when it fails."""
    rc, out, _ = run_lambda(command)
    return out if rc == 0 else None


def run_and_parse_first_match(run_lambda, command, regex):
    """The first group of `regex`'s first match in the command's output, or None."""
    rc, out, _ = run_lambda(command)
    if rc != 0:
        return None
    match = re.search(regex, out)
    return match.group(1) if match else None


def run_and_return_first_line(run_lambda, command):
    rc, out, _ = run_lambda(command)
    return out.split("\n")[0] if rc == 0 else None


def get_platform():
    for name in ("linux", "win32", "cygwin", "darwin"):
        if sys.platform.startswith(name):
            return name
    return sys.platform


def get_conda_packages(run_lambda, patterns=None):
    patterns = patterns or CONDA_PATTERNS + COMMON_PATTERNS + NVIDIA_PATTERNS + ONEAPI_PATTERNS
    out = run_and_read_all(run_lambda, f"{os.environ.get('CONDA_EXE', 'conda')} list")
    if out is None:
        return None
    return "\n".join(line for line in out.splitlines()
                     if not line.startswith("#") and any(p in line for p in patterns))


def get_pip_packages(run_lambda, patterns=None):
    """("pip3", the `pip list` lines of the packages the report names)."""
    patterns = patterns or PIP_PATTERNS + COMMON_PATTERNS + NVIDIA_PATTERNS + ONEAPI_PATTERNS
    os.environ["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    out = run_and_read_all(run_lambda, [sys.executable, "-mpip", "list", "--format=freeze"])
    if out is None:
        return "pip3", None
    return "pip3", "\n".join(line for line in out.splitlines()
                             if any(p in line for p in patterns))


def get_gcc_version(run_lambda):
    return run_and_parse_first_match(run_lambda, "gcc --version", r"gcc (.*)")


def get_clang_version(run_lambda):
    return run_and_parse_first_match(run_lambda, "clang --version", r"clang version (.*)")


def get_cmake_version(run_lambda):
    return run_and_parse_first_match(run_lambda, "cmake --version", r"cmake (.*)")


def get_nvidia_smi():
    return "nvidia-smi"


def get_nvidia_driver_version(run_lambda):
    return run_and_parse_first_match(run_lambda, get_nvidia_smi(), r"Driver Version: (.*?) ")


def get_gpu_info(run_lambda):
    """The GPUs nvidia-smi lists, without their UUIDs."""
    rc, out, _ = run_lambda(get_nvidia_smi() + " -L")
    if rc != 0:
        return None
    return re.sub(r" \(UUID: .+?\)", "", out)


def get_running_cuda_version(run_lambda):
    return run_and_parse_first_match(run_lambda, "nvcc --version", r"release .+ V(.*)")


def get_cudnn_version(run_lambda):
    """The libcudnn files ldconfig knows (which one is used cannot be told)."""
    if get_platform() != "linux":
        return None
    rc, out, _ = run_lambda('ldconfig -p | grep libcudnn | rev | cut -d" " -f1 | rev')
    files = sorted({os.path.realpath(f) for f in out.split("\n")
                    if f and os.path.isfile(os.path.realpath(f))}) if rc in (0, 1) else []
    if not files:
        given = os.environ.get("CUDNN_LIBRARY")
        return os.path.realpath(given) if given and os.path.isfile(given) else None
    if len(files) == 1:
        return files[0]
    return "Probably one of the following:\n" + "\n".join(files)


def _detect_linux_pkg_manager():
    if get_platform() != "linux":
        return "N/A"
    for manager in ("dpkg", "dnf", "yum", "zypper"):
        if run(f"which {manager}")[0] == 0:
            return manager
    return "N/A"


# how each package manager lists a package, and which field of the line is its version
_PKG_QUERIES = {"dpkg": ("dpkg -l | grep {}", 2), "dnf": ("dnf list | grep {}", 1),
                "yum": ("yum list | grep {}", 1), "zypper": ("zypper info {} | grep Version", 2)}


def get_linux_pkg_version(run_lambda, pkg_name):
    """The installed version of a Linux package, by the system's package manager, or
    "N/A"."""
    manager = _detect_linux_pkg_manager()
    if manager == "N/A":
        return "N/A"
    command, field = _PKG_QUERIES[manager]
    out = run_and_read_all(run_lambda, command.format(pkg_name))
    if not out:
        return "N/A"
    fields = re.sub(" +", " ", out).split(" ")
    return fields[field] if len(fields) > field else "N/A"


def get_intel_gpu_driver_version(run_lambda):
    """The Intel GPU compute runtime packages installed (Linux), one "* name:\tversion"
    line each."""
    if get_platform() != "linux":
        return ""
    packages = {"dpkg": ("intel-opencl-icd", "libze1", "level-zero")}.get(
        _detect_linux_pkg_manager(), ("intel-opencl", "level-zero"))
    lines = []
    for package in packages:
        version = get_linux_pkg_version(run_lambda, package)
        if version != "N/A":
            lines.append(f"* {package}:\t{version}")
    return "\n".join(lines)


def get_intel_gpu_onboard(run_lambda):
    """The Intel GPUs xpu-smi discovers (Linux), one "* name" line each, or "N/A"."""
    if get_platform() != "linux":
        return ""
    out = run_and_read_all(run_lambda, "xpu-smi discovery -j")
    if not out:
        return "N/A"
    try:
        devices = json.loads(out).get("device_list", [])
    except (ValueError, TypeError, AttributeError) as e:
        return f"{out}\n{e}"
    if not isinstance(devices, list) or not devices:
        return "N/A"
    return "\n".join(f'* {device["device_name"]}' for device in devices)


def get_intel_gpu_detected(run_lambda):
    """The XPU devices the library sees: ember has no XPU backend."""
    return "N/A"


def get_cpu_info(run_lambda):
    rc, out, err = 0, "", ""
    if get_platform() == "linux":
        rc, out, err = run_lambda("lscpu")
    elif get_platform() == "darwin":
        rc, out, err = run_lambda("sysctl -n machdep.cpu.brand_string")
    elif get_platform() == "win32":
        rc, out, err = run_lambda('powershell.exe "gwmi -Class Win32_Processor | '
                                  'Select-Object -Property Name,Manufacturer | ConvertTo-Json"')
    return out if rc == 0 else err


def get_mac_version(run_lambda):
    return run_and_parse_first_match(run_lambda, "sw_vers -productVersion", r"(.*)")


def get_windows_version(run_lambda):
    out = run_and_read_all(run_lambda, 'powershell.exe "gwmi -Class Win32_OperatingSystem | '
                           'Select-Object -Property Caption,OSArchitecture,Version | '
                           'ConvertTo-Json"')
    try:
        info = json.loads(out)
        return f'{info["Caption"]} ({info["Version"]} {info["OSArchitecture"]})'
    except (TypeError, ValueError, KeyError):
        return out


def get_lsb_version(run_lambda):
    return run_and_parse_first_match(run_lambda, "lsb_release -a", r"Description:\t(.*)")


def check_release_file(run_lambda):
    return run_and_parse_first_match(run_lambda, "cat /etc/*-release", r'PRETTY_NAME="(.*)"')


def get_os(run_lambda):
    from platform import machine
    platform = get_platform()
    if platform in ("win32", "cygwin"):
        return get_windows_version(run_lambda)
    if platform == "darwin":
        version = get_mac_version(run_lambda)
        return None if version is None else f"macOS {version} ({machine()})"
    if platform == "linux":
        desc = get_lsb_version(run_lambda) or check_release_file(run_lambda) or platform
        return f"{desc} ({machine()})"
    return platform


def get_python_platform():
    import platform
    return platform.platform()


def get_libc_version():
    import platform
    return "-".join(platform.libc_ver()) if get_platform() == "linux" else "N/A"


def get_cachingallocator_config():
    """The allocator settings in the environment (CuPy's pool takes none of them)."""
    return {name: os.environ[name] for name in ("PYTORCH_CUDA_ALLOC_CONF",
                                                "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
            if os.environ.get(name)}


def _cuda_available():
    from .. import cuda
    return cuda.is_available()


def get_cuda_module_loading_config():
    return os.environ.get("CUDA_MODULE_LOADING", "") if _cuda_available() else "N/A"


def is_xnnpack_available():
    from ..backends import xnnpack
    return str(xnnpack.enabled)


def _cupy_cuda_version():
    """The CUDA runtime CuPy runs (ember's CUDA), as "major.minor", or None."""
    try:
        import cupy
        version = cupy.cuda.runtime.runtimeGetVersion()
    except Exception:
        return None
    return f"{version // 1000}.{version % 1000 // 10}"


def _ember_version():
    from .. import version
    return f"{version.PYTORCH_API}+ember.{version.EMBER_RELEASE}"


def get_env_info():
    """The environment, as a SystemEnv: ember's version (the PyTorch API it follows, with its
    own release), whether it is a debug build, the CUDA CuPy runs, the compilers, the
    operating system, Python, the GPUs and their driver, cuDNN, the relevant pip and conda
    packages, the allocator settings, XNNPACK and the CPU."""
    from .. import version
    pip_version, pip_list = get_pip_packages(run)
    return SystemEnv(
        torch_version=_ember_version(), is_debug_build=str(version.debug),
        python_version=f"{sys.version.replace(chr(10), ' ')} "
                       f"({sys.maxsize.bit_length() + 1}-bit runtime)",
        python_platform=get_python_platform(), is_cuda_available=str(_cuda_available()),
        cuda_compiled_version=_cupy_cuda_version(),
        cuda_runtime_version=get_running_cuda_version(run),
        cuda_module_loading=get_cuda_module_loading_config(),
        nvidia_gpu_models=get_gpu_info(run), nvidia_driver_version=get_nvidia_driver_version(run),
        cudnn_version=get_cudnn_version(run), is_xpu_available="False",
        hip_compiled_version="N/A", hip_runtime_version="N/A", miopen_runtime_version="N/A",
        pip_version=pip_version, pip_packages=pip_list, conda_packages=get_conda_packages(run),
        os=get_os(run), libc_version=get_libc_version(), gcc_version=get_gcc_version(run),
        clang_version=get_clang_version(run), cmake_version=get_cmake_version(run),
        caching_allocator_config=get_cachingallocator_config(),
        is_xnnpack_available=is_xnnpack_available(), cpu_info=get_cpu_info(run))


env_info_fmt = """
PyTorch version: {torch_version}
Is debug build: {is_debug_build}
CUDA used to build PyTorch: {cuda_compiled_version}
ROCM used to build PyTorch: {hip_compiled_version}

OS: {os}
GCC version: {gcc_version}
Clang version: {clang_version}
CMake version: {cmake_version}
Libc version: {libc_version}

Python version: {python_version}
Python platform: {python_platform}
Is CUDA available: {is_cuda_available}
CUDA runtime version: {cuda_runtime_version}
CUDA_MODULE_LOADING set to: {cuda_module_loading}
GPU models and configuration: {nvidia_gpu_models}
Nvidia driver version: {nvidia_driver_version}
cuDNN version: {cudnn_version}
Is XPU available: {is_xpu_available}
HIP runtime version: {hip_runtime_version}
MIOpen runtime version: {miopen_runtime_version}
Is XNNPACK available: {is_xnnpack_available}
Caching allocator config: {caching_allocator_config}

CPU:
{cpu_info}

Versions of relevant libraries:
{pip_packages}
{conda_packages}
""".strip()


def pretty_str(envinfo):
    """The SystemEnv as the report's text: a value not found reads "Could not collect"
    ("No CUDA" for the CUDA fields on a machine without CUDA), an empty package list "No
    relevant packages", each package line tagged with where it was found."""
    fields = envinfo._asdict()
    gpus = envinfo.nvidia_gpu_models
    if gpus is not None and "\n" in gpus:
        fields["nvidia_gpu_models"] = f"\n{gpus}\n"
    probed = ("cuda_runtime_version", "nvidia_gpu_models", "nvidia_driver_version")
    if not _cuda_available() and all(fields[f] is None for f in probed):
        for name in probed + ("cudnn_version",):
            fields[name] = "No CUDA"
        if envinfo.cuda_compiled_version is None:
            fields["cuda_compiled_version"] = "None"
    for name, value in fields.items():
        if value is True or value is False:
            fields[name] = "Yes" if value else "No"
        elif value is None:
            fields[name] = "Could not collect"
    for name, tag in (("pip_packages", f"[{envinfo.pip_version}] "), ("conda_packages",
                                                                       "[conda] ")):
        if fields[name] == "":
            fields[name] = "No relevant packages"
        fields[name] = "\n".join(tag + line for line in fields[name].split("\n"))
    fields["cpu_info"] = envinfo.cpu_info
    fields["caching_allocator_config"] = envinfo.caching_allocator_config or "N/A"
    return env_info_fmt.format(**fields)


def get_pretty_env_info():
    """The environment report as text (what `python -m torch.utils.collect_env` prints)."""
    return pretty_str(get_env_info())


def main() -> None:
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
