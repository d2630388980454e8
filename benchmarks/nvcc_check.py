"""Compile every kernel ember launched on the stand-in as CuPy would compile it on a GPU, with no
GPU: CuPy's own code generator writes each kernel's CUDA source for the dtypes, dims and layouts
it was called with, and CUDA's nvcc compiles it for the H100/H200's architecture (sm_90).

The stand-in runs ember's kernels in a C subset of its own (`c_subset`), so a kernel can pass
every test here and still be refused by NVRTC on a GPU; `_device_kernels.usable` would then turn
all of ember's kernels off for that dtype, with a warning, and every step would take the slower
general paths. This finds such a kernel before a GPU session does.

It needs a Python with the real CuPy (importable without a GPU) and nvcc; the records come from
the stand-in (`tests/_strict_cupy/kernels.py`, EMBER_KERNEL_RECORD):

    EMBER_KERNEL_RECORD=/tmp/kernels/rec python -m pytest -p no:cacheprovider -q -n 2 \\
        tests/cuda tests/ops/test_ops_cuda.py
    EMBER_KERNEL_RECORD=/tmp/kernels/rec PYTHONPATH=. python benchmarks/host_overhead.py
    python3 -m venv /tmp/cupy-venv && /tmp/cupy-venv/bin/pip install numpy cupy-cuda13x
    /tmp/cupy-venv/bin/python benchmarks/nvcc_check.py /tmp/kernels/rec [--arch 90]

It prints one line per kernel (its name, how many sources compiled) and, for a source nvcc
refused, the source and nvcc's message; it exits with 1 if any was refused. `--self-test`
first checks that a kernel with an error in it is refused.
"""
import concurrent.futures
import glob
import json
import sys

import numpy as np

import cupy
from cupy._core import _carray, _kernel, _reduction, _scalar, core
from cupy.cuda import compiler

# CuPy's _ArgKind (cupy/_core/_kernel.pxd): what each kernel argument is
NDARRAY, INDEXER, SCALAR = 1, 2, 3
HEADER = "".join(f"#include <{h}>\n" for h in core._cupy_header_list)


def _array(dtype, ndim, contiguous):
    return _kernel._ArgInfo(NDARRAY, cupy.ndarray, np.dtype(dtype), ndim, contiguous, True)


def _scalar_of(dtype):
    return _kernel._ArgInfo(SCALAR, _scalar.CScalar, np.dtype(dtype), 0, True, True)


def _indexer(ndim):
    return _kernel._ArgInfo(INDEXER, _carray.Indexer, None, ndim, True, True)


def _types(in_params, out_params, arguments):
    """(in_types, out_types, type map) as CuPy decides them from the arrays' dtypes."""
    dtypes = [None if dtype is None else np.dtype(dtype).type for dtype, _, _ in arguments]
    n = len(in_params)
    return _kernel._decide_params_type(in_params, out_params, tuple(dtypes[:n]),
                                       tuple(dtypes[n:]))


def elementwise_source(record):
    in_text, out_text, operation, name, preamble, loop_prep, after_loop, _ = record["definition"]
    in_params = _kernel._get_param_info(in_text, True)
    out_params = _kernel._get_param_info(out_text, False)
    params = in_params + out_params + _kernel._get_param_info("CIndexer _ind", False)
    arguments = record["arguments"]
    in_types, _, type_map = _types(in_params, out_params, arguments)
    plain = [a for p, a in zip(in_params + out_params, arguments) if not p.raw and a[0]]
    # CuPy's reduce_dims: arrays all contiguous run as one flat dim, others keep theirs (a
    # 0-dim loop stays one)
    flat = record["size"] or all(contiguous for _, _, contiguous in plain)
    ndim = min(1, record["ndim"]) if flat else record["ndim"]
    infos = []
    for i, (p, (dtype, dims, contiguous)) in enumerate(zip(in_params + out_params, arguments)):
        if dtype is None:
            infos.append(_scalar_of(in_types[i]))
        elif p.raw:
            infos.append(_array(dtype, dims, contiguous))
        else:
            infos.append(_array(dtype, ndim, flat or contiguous))
    infos.append(_indexer(ndim))
    return _kernel._get_elementwise_kernel_code(
        tuple(infos), type_map, params, operation, name, preamble, loop_prep, after_loop)


def reduction_source(record):
    (in_text, out_text, map_expr, reduce_expr, post_map_expr, identity, name, reduce_type,
     preamble, options) = record["definition"]
    in_params = _kernel._get_param_info(in_text, True)
    out_params = _kernel._get_param_info(out_text, False)
    params = in_params + out_params + \
        _kernel._get_param_info("CIndexer _in_ind, CIndexer _out_ind", False) + \
        _kernel._get_param_info("int32 _block_stride", True)
    arguments = record["arguments"]
    in_types, out_types, type_map = _types(in_params, out_params, arguments)
    type_map = _kernel._TypeMap(type_map._pairs + (("IndexT", np.int32),))
    ndim = record["ndim"]
    out_ndim = ndim if record["keepdims"] else ndim - len(record["axis"])
    # the inputs permuted (reduced axes first): read through their strides (a 0-dim array is
    # contiguous: CuPy's CArray has no other 0-dim form)
    infos = [_scalar_of(in_types[i]) if dtype is None else _array(dtype, ndim, ndim == 0)
             for i, (dtype, _, _) in enumerate(arguments)]
    infos += [_array(out_types[0], out_ndim, True), _indexer(ndim), _indexer(out_ndim),
              _scalar_of(np.int32)]
    return _reduction._ReductionKernel_get_cached_function_code(
        len(in_params), len(out_params), params, tuple(infos), type_map, name, 512,
        reduce_type or out_params[0].ctype, "" if identity is None else str(identity),
        map_expr, reduce_expr, post_map_expr, preamble, tuple(options))


def compile_source(source, options, arch):
    """None where nvcc compiles `source` (CuPy's headers before it), else nvcc's message."""
    try:
        compiler.compile_using_nvcc(HEADER + source,
                                    options=core.assemble_cupy_compiler_options(options),
                                    arch=arch, code_type="cubin")
    except Exception as e:  # NVCCException: its message has nvcc's output
        return f"{type(e).__name__}: {e}"
    return None


def sources(prefix):
    """{(kernel name, source): options} from every record file under `prefix`."""
    found = {}
    for path in sorted(glob.glob(f"{prefix}.*.jsonl")):
        with open(path) as f:
            for line in f:
                record = json.loads(line)
                make = elementwise_source if record["kind"] == "elementwise" else \
                    reduction_source
                options = tuple(record["definition"][-1])
                name = record["definition"][3 if record["kind"] == "elementwise" else 6]
                found.setdefault((name, make(record)), options)
    return found


def main():
    args = sys.argv[1:]
    arch = args[args.index("--arch") + 1] if "--arch" in args else "90"
    if "--self-test" in args:
        bad = elementwise_source({
            "definition": ["T x", "T y", "y = x +* 2", "ember_broken", "", "", "", []],
            "arguments": [["float32", 1, True], ["float32", 1, True]], "ndim": 1,
            "size": False})
        if compile_source(bad, (), arch) is None:
            sys.exit("self-test: nvcc compiled a kernel with an error in it")
        print("self-test: a broken kernel is refused")
    prefix = next(a for a in args if not a.startswith("--") and a != arch)
    found = sources(prefix)
    if not found:
        sys.exit(f"no records under {prefix}.*.jsonl")
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        verdicts = dict(zip(found, pool.map(lambda k: compile_source(k[1], found[k], arch),
                                            found)))
    refused = {k: v for k, v in verdicts.items() if v is not None}
    names = sorted({name for name, _ in found})
    for name in names:
        n = sum(1 for k in found if k[0] == name)
        bad = sum(1 for k in refused if k[0] == name)
        print(f"{name:40} {n - bad}/{n} compiled")
    for (name, source), message in refused.items():
        print(f"\n==== {name} refused\n{source}\n{message}")
    print(f"{len(found) - len(refused)} of {len(found)} sources compiled "
          f"({len(names)} kernels, sm_{arch})")
    sys.exit(1 if refused else 0)


if __name__ == "__main__":
    main()
