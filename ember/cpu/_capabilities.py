"""`torch.cpu.get_capabilities()`: what this machine's CPU offers (instruction-set extensions,
caches, cores), read once from Linux's /proc/cpuinfo and /sys, under PyTorch's names."""
import functools
import os
import platform
import struct
import types

# PyTorch's name -> the kernel's flag in /proc/cpuinfo (x86)
_X86_FLAGS = {
    "sse": "sse", "sse2": "sse2", "sse3": "pni", "ssse3": "ssse3", "sse4_1": "sse4_1",
    "sse4_2": "sse4_2", "sse4a": "sse4a", "avx": "avx", "avx2": "avx2", "fma3": "fma",
    "fma4": "fma4", "f16c": "f16c", "popcnt": "popcnt", "lzcnt": "abm", "bmi": "bmi1",
    "bmi2": "bmi2", "aes": "aes", "sha": "sha_ni", "clflush": "clflush",
    "clflushopt": "clflushopt", "clwb": "clwb", "avx_vnni": "avx_vnni",
    "avx_vnni_int8": "avx_vnni_int8", "avx_vnni_int16": "avx_vnni_int16",
    "avx_ne_convert": "avx_ne_convert", "avx512_f": "avx512f", "avx512_cd": "avx512cd",
    "avx512_bw": "avx512bw", "avx512_dq": "avx512dq", "avx512_vl": "avx512vl",
    "avx512_ifma": "avx512ifma", "avx512_vbmi": "avx512vbmi", "avx512_vbmi2": "avx512_vbmi2",
    "avx512_bitalg": "avx512_bitalg", "avx512_vpopcntdq": "avx512_vpopcntdq",
    "avx512_vnni": "avx512_vnni", "avx512_bf16": "avx512_bf16", "avx512_fp16": "avx512_fp16",
    "avx512_4vnniw": "avx512_4vnniw", "avx512_4fmaps": "avx512_4fmaps",
    "avx512_vp2intersect": "avx512_vp2intersect", "amx_tile": "amx_tile",
    "amx_int8": "amx_int8", "amx_bf16": "amx_bf16", "amx_fp16": "amx_fp16",
    "avx10_1": "avx10_1", "avx10_2": "avx10_2"}
# PyTorch's name -> the kernel's feature in /proc/cpuinfo (Arm)
_ARM_FLAGS = {"asimd": "asimd", "fphp": "fphp", "asimdhp": "asimdhp", "asimddp": "asimddp",
              "i8mm": "i8mm", "bf16": "bf16", "sve": "sve", "sve2": "sve2", "sme": "sme",
              "sme2": "sme2", "fp16": "fphp", "dotprod": "asimddp"}


def _cpuinfo():
    """The processors' records of /proc/cpuinfo, as dicts."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return []
    records = []
    for block in text.strip().split("\n\n"):
        record = {}
        for line in block.splitlines():
            key, _, value = line.partition(":")
            record[key.strip()] = value.strip()
        records.append(record)
    return records


def _cache_size(level, kinds):
    """Bytes of CPU 0's cache of `level` and a type in `kinds` (0 where unknown)."""
    root = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return 0
    for entry in entries:
        path = os.path.join(root, entry)
        try:
            with open(os.path.join(path, "level")) as f:
                if int(f.read()) != level:
                    continue
            with open(os.path.join(path, "type")) as f:
                if f.read().strip() not in kinds:
                    continue
            with open(os.path.join(path, "size")) as f:
                size = f.read().strip()
        except (OSError, ValueError):
            continue
        units = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
        return int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
    return 0


def _avx10(avx512):
    """avx10_1 and avx10_2 as PyTorch's cpuinfo reads them from CPUID (leaf 7.1 EDX bit 19,
    with the AVX-512 registers enabled; the version in leaf 0x24 EBX): Linux lists no AVX10
    flag in /proc/cpuinfo, so CPUID is read through /dev/cpu/0/cpuid where it can be (the
    cpuid driver, readable by root); elsewhere both are False."""
    def leaf(index, subleaf=0):
        return struct.unpack("<4I", os.pread(fd, 16, index | subleaf << 32))
    found = {"avx10_1": False, "avx10_2": False}
    try:
        fd = os.open("/dev/cpu/0/cpuid", os.O_RDONLY)
    except OSError:
        return found
    try:
        max_leaf = leaf(0)[0]
        if avx512 and max_leaf >= 7 and leaf(7, 1)[3] >> 19 & 1:
            found["avx10_1"] = True
            found["avx10_2"] = max_leaf >= 0x24 and leaf(0x24)[1] & 0xFF >= 2
    except (OSError, struct.error):
        pass
    finally:
        os.close(fd)
    return found


@functools.lru_cache(maxsize=None)
def get_capabilities():
    """An immutable mapping of the CPU's capabilities: one bool per instruction-set
    extension, and architecture, cpu_name, cache sizes and core and socket counts."""
    records = [r for r in _cpuinfo() if "processor" in r]
    first = records[0] if records else {}
    architecture = platform.machine()
    capabilities = {}
    if architecture in ("x86_64", "AMD64", "i686", "i386"):
        flags = set(first.get("flags", "").split())
        capabilities.update({name: flag in flags for name, flag in _X86_FLAGS.items()})
        capabilities.update(_avx10(capabilities["avx512_f"]))
    elif architecture in ("aarch64", "arm64"):
        features = set(first.get("Features", "").split())
        capabilities.update({name: flag in features for name, flag in _ARM_FLAGS.items()})
    cores = {(r.get("physical id", "0"), r.get("core id", r.get("processor")))
             for r in records}
    capabilities.update({
        "architecture": architecture,
        "cpu_name": first.get("model name", platform.processor()),
        "num_logical_cores": os.cpu_count() or len(records),
        "num_physical_cores": len(cores) or os.cpu_count(),
        "num_sockets": len({r.get("physical id", "0") for r in records}) or 1,
        "l1d_cache_size": _cache_size(1, ("Data",)),
        "l2_cache_size": _cache_size(2, ("Unified", "Data")),
    })
    return types.MappingProxyType(capabilities)
