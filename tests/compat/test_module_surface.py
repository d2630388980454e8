"""The module surface of PyTorch 2.13 and torchvision 0.28, held against ember's.

PyTorch's package tree is walked on disk (`pkgutil` over the files, nothing imported), so every
public module path (no component with a leading underscore) is known. Under `ember.compat`, in a
subprocess (the parity tests' real PyTorch stays out of its way), each path is imported. For the
modules of MUST (the ones issue 10 names, and the ones everyday code imports) the import must
work and every public name of PyTorch's module must be there: PyTorch's `__all__` where it
defines one, else the names the module's file defines (not the ones it imports). A name ember
legitimately cannot have is in EXCLUDED with its reason; one ember does not have yet is in
`_open_surface.OPEN`, the to-do list, which may only shrink (a test fails when an entry there is
no longer missing). The share of all public modules that import is printed."""
import ast
import fnmatch
import importlib
import json
import os
import pkgutil
import subprocess
import sys
import warnings

import pytest

from tests._torchvision_oracle import import_torchvision
from tests.compat._open_surface import OPEN

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_NN_MODULES = ["activation", "adaptive", "batchnorm", "channelshuffle", "container", "conv",
               "distance", "dropout", "flatten", "fold", "instancenorm", "lazy", "linear", "loss",
               "module", "normalization", "padding", "pixelshuffle", "pooling", "rnn", "sparse",
               "transformer", "upsampling", "utils"]
_DISTRIBUTIONS = [
    "bernoulli", "beta", "binomial", "categorical", "cauchy", "chi2", "constraint_registry",
    "constraints", "continuous_bernoulli", "dirichlet", "distribution", "exp_family",
    "exponential", "fishersnedecor", "gamma", "generalized_pareto", "geometric", "gumbel",
    "half_cauchy", "half_normal", "independent", "inverse_gamma", "kl", "kumaraswamy", "laplace",
    "lkj_cholesky", "log_normal", "logistic_normal", "lowrank_multivariate_normal",
    "mixture_same_family", "multinomial", "multivariate_normal", "negative_binomial", "normal",
    "one_hot_categorical", "pareto", "poisson", "relaxed_bernoulli", "relaxed_categorical",
    "studentT", "transformed_distribution", "transforms", "uniform", "utils", "von_mises",
    "weibull", "wishart"]
_OPTIM = ["adadelta", "adagrad", "adam", "adamax", "adamw", "asgd", "lbfgs", "lr_scheduler",
          "nadam", "optimizer", "radam", "rmsprop", "rprop", "sgd", "sparse_adam", "swa_utils"]
_NN_UTILS = ["clip_grad", "convert_parameters", "fusion", "init", "memory_format",
             "parametrizations", "parametrize", "prune", "rnn", "spectral_norm", "stateless",
             "weight_norm"]

# The modules whose whole public surface ember must have.
MUST = sorted(set(
    # named by issue 10
    [f"torch.backends.{b}" for b in ("cudnn", "cuda", "mps", "mkldnn", "openmp")]
    + [f"torch.nn.modules.{m}" for m in _NN_MODULES]
    + ["torch.utils.hooks", "torch.nn.utils.prune", "torch.nn.attention", "torch.utils.model_zoo",
       "torch.utils.benchmark", "torch.autograd.profiler", "torch.utils.tensorboard",
       "torch.overrides", "torch.types", "torch.storage", "torch.library", "torch.compiler",
       "torchvision.models.detection", "torchvision.models.segmentation"]
    # what everyday code imports
    + ["torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.parameter",
       "torch.nn.utils", "torch.optim", "torch.utils", "torch.utils.data",
       "torch.utils.data.dataset", "torch.utils.data.dataloader", "torch.utils.data.sampler",
       "torch.utils.data.distributed", "torch.utils.checkpoint", "torch.autograd",
       "torch.autograd.function", "torch.autograd.functional", "torch.autograd.grad_mode",
       "torch.autograd.anomaly_mode", "torch.autograd.gradcheck", "torch.autograd.graph",
       "torch.autograd.forward_ad", "torch.cuda", "torch.cuda.amp", "torch.cuda.memory",
       "torch.cuda.random", "torch.cuda.streams", "torch.cuda.graphs", "torch.cuda.nvtx",
       "torch.cuda.profiler", "torch.cuda.comm", "torch.cpu", "torch.cpu.amp", "torch.amp",
       "torch.amp.autocast_mode", "torch.amp.grad_scaler", "torch.distributions", "torch.linalg",
       "torch.fft", "torch.special", "torch.func", "torch.hub", "torch.serialization",
       "torch.random", "torch.multiprocessing", "torch.multiprocessing.spawn", "torch.jit",
       "torch.testing", "torch.profiler", "torch.functional", "torch.return_types",
       "torch.torch_version", "torch.version", "torch.accelerator", "torch.distributed",
       "torchvision", "torchvision.models", "torchvision.transforms",
       "torchvision.transforms.functional", "torchvision.transforms.v2",
       "torchvision.transforms.v2.functional", "torchvision.datasets", "torchvision.ops",
       "torchvision.utils", "torchvision.io", "torchvision.tv_tensors",
       "torch.futures", "torch.fx", "torch.export", "torch.signal.windows", "torch.utils.dlpack", "torch.utils.weak",
       "torch.utils.throughput_benchmark", "torch.utils.data.datapipes", "torchvision.transforms.autoaugment",
       "torchvision.models.detection", "torchvision.models.segmentation",
       "torchvision.models.video", "torchvision.models.inception",
       "torchvision.models.swin_transformer", "torchvision.models.regnet"]
    # what training scripts import beyond those: the elastic error files, the legacy
    # launcher, the CPU build's backend switches, the environment report, FLOP counting,
    # differentiable collectives, Sobol' sequences
    + ["torch.distributed.elastic.multiprocessing.errors",
       "torch.distributed.elastic.multiprocessing.errors.error_handler",
       "torch.distributed.elastic.multiprocessing.errors.handlers", "torch.distributed.launch",
       "torch.distributed.nn", "torch.distributed.nn.functional", "torch.utils.collect_env",
       "torch.utils.flop_counter", "torch.utils.module_tracker", "torch.quasirandom"]
    + [f"torch.backends.{b}" for b in ("mkl", "cpu", "quantized", "opt_einsum", "mha",
                                        "nnpack", "xnnpack")]
    + [f"torch.distributions.{d}" for d in _DISTRIBUTIONS]
    + [f"torch.optim.{o}" for o in _OPTIM]
    + [f"torch.nn.utils.{u}" for u in _NN_UTILS]))

# module -> {name or fnmatch pattern: why ember cannot have it}. Only what ember can never
# have: it has no C++ core, no TorchScript compiler, no quantized or vendor kernels.
_CPP_TORCHSCRIPT = "TorchScript's C++ compiler internals (IR graph, types, serializer)"
# ember's CUDA ops are Python calls into CuPy that allocate from its pool and may sync with
# the host: they cannot be captured into a replayable CUDA graph
_CUDA_GRAPHS = "CUDA graph capture and replay of ops"
_ALLOCATOR = ("PyTorch's C++ caching allocator and its pluggable replacements; ember's CUDA "
              "memory is CuPy's pool")
EXCLUDED = {
    "torch": {
        "*Type": _CPP_TORCHSCRIPT, "Script*": _CPP_TORCHSCRIPT, "AliasDb": _CPP_TORCHSCRIPT,
        "Argument": _CPP_TORCHSCRIPT, "ArgumentSpec": _CPP_TORCHSCRIPT,
        "CompleteArgumentSpec": _CPP_TORCHSCRIPT, "Block": _CPP_TORCHSCRIPT,
        "Graph": _CPP_TORCHSCRIPT, "Node": _CPP_TORCHSCRIPT, "Value": _CPP_TORCHSCRIPT,
        "Use": _CPP_TORCHSCRIPT, "Code": _CPP_TORCHSCRIPT, "CallStack": _CPP_TORCHSCRIPT,
        "ConcreteModuleType*": _CPP_TORCHSCRIPT, "ExecutionPlan": _CPP_TORCHSCRIPT,
        "Gradient": _CPP_TORCHSCRIPT, "GraphExecutorState": _CPP_TORCHSCRIPT,
        "FileCheck": _CPP_TORCHSCRIPT, "FunctionSchema": _CPP_TORCHSCRIPT,
        "InferredType": _CPP_TORCHSCRIPT, "LiteScriptModule": _CPP_TORCHSCRIPT,
        "StaticModule": _CPP_TORCHSCRIPT, "TracingState": _CPP_TORCHSCRIPT,
        "ErrorReport": _CPP_TORCHSCRIPT, "DeepCopyMemoTable": _CPP_TORCHSCRIPT,
        "import_ir_module*": _CPP_TORCHSCRIPT, "parse_ir": _CPP_TORCHSCRIPT,
        "parse_schema": _CPP_TORCHSCRIPT, "parse_type_comment": _CPP_TORCHSCRIPT,
        "merge_type_from_type_comment": _CPP_TORCHSCRIPT, "unify_type_list": _CPP_TORCHSCRIPT,
        "*Logger": "TorchScript's C++ statistics loggers",
        "AVG": "an AggregationType of TorchScript's C++ statistics loggers",
        "SUM": "an AggregationType of TorchScript's C++ statistics loggers",
        "ModuleDict": "TorchScript's C++ view of a scripted module's submodules (nn.ModuleDict "
                      "is the Python class)",
        "ParameterDict": "TorchScript's C++ view of a scripted module's parameters",
        "BufferDict": "TorchScript's C++ view of a scripted module's buffers",
        "Capsule": "TorchScript's C++ opaque-object type", "CompilationUnit": _CPP_TORCHSCRIPT,
        "IODescriptor": "TorchScript tracer's C++ input/output flattening descriptor",
        "OperatorInfo": "the lite interpreter's C++ record of a mobile model's operators",
        "cpp": "torch._C.cpp: bindings to the C++ frontend's modules; ember has no C++ library",
        "DispatchKey*": "the C++ dispatcher's keys; ember dispatches in Python",
        "ExcludeDispatchKeyGuard": "the C++ dispatcher's keys; ember dispatches in Python",
        "cudnn_*": "cuDNN kernel entry points (ember reaches GPUs through CuPy)",
        "miopen_*": "ROCm MIOpen kernel entry points",
        "mkldnn_*": "oneDNN kernel entry points", "fbgemm_*": "FBGEMM quantized kernels",
        "q*": "quantized tensors (qint8, q_scale, quantize_per_tensor ...): no quantized backend",
        "*quantize*": "quantized tensors: no quantized backend",
        "int_repr": "quantized tensors: no quantized backend",
        "choose_qparams_optimized": "quantized tensors: no quantized backend",
        "fused_moving_avg_obs_fake_quant": "quantized tensors: no quantized backend",
        "is_vulkan_available": "Vulkan backend",
    },
    "torch.utils": {
        "cmake_prefix_path": "CMake files for building C++ extensions against libtorch; ember "
                             "has no C++ library",
    },
    "torch.jit": {
        "CompilationUnit": _CPP_TORCHSCRIPT,
        "export_opnames": "the C++ operator names a scripted model needs, for selective mobile "
                          "builds of libtorch",
    },
    "torch.library": {
        "fallthrough_kernel": "a C++ dispatcher fallthrough; ember dispatches in Python",
        "get_ctx": "the FakeTensor context a fake kernel asks for data-dependent sizes; ember "
                   "has no fake tensors (opcheck holds register_fake against the real kernel)",
        "register_torch_dispatch": "__torch_dispatch__ rules: ember has no dispatcher below "
                                   "autograd for subclasses or modes to enter",
        "triton_op": "Triton GPU kernels (ember reaches GPUs through CuPy)",
        "wrap_triton": "Triton GPU kernels (ember reaches GPUs through CuPy)",
    },
    "torch.compiler": {
        "config": "Dynamo's and Inductor's compile-cache settings (job_id, cache keys, dynamic "
                  "sources); ember's compile runs the function eagerly, with nothing to cache",
        "load_compiled_function": "loads an ahead-of-time artifact of torch.compile's code "
                                  "generation; ember generates no code",
    },
    "torch.overrides": {
        "enable_reentrant_dispatch": "restores the C++ dispatcher's Python thread-local "
                                     "snapshot; ember has no C++ dispatcher",
    },
    "torch.cuda": {
        "CUDAGraph": _CUDA_GRAPHS, "graph": _CUDA_GRAPHS, "graph_pool_handle": _CUDA_GRAPHS,
        "make_graphed_callables": _CUDA_GRAPHS, "CUDAPluggableAllocator": _ALLOCATOR,
        "MemPool": _ALLOCATOR, "use_mem_pool": _ALLOCATOR, "caching_allocator_*": _ALLOCATOR,
        "change_current_allocator": _ALLOCATOR, "get_allocator_backend": _ALLOCATOR,
    },
    "torch.accelerator": {"Graph": _CUDA_GRAPHS},
    "torch.cuda.graphs": {
        "CUDAGraph": _CUDA_GRAPHS, "graph": _CUDA_GRAPHS, "graph_pool_handle": _CUDA_GRAPHS,
        "make_graphed_callables": _CUDA_GRAPHS,
    },
    "torch.cuda.memory": {
        "CUDAPluggableAllocator": _ALLOCATOR, "MemPool": _ALLOCATOR, "use_mem_pool": _ALLOCATOR,
        "caching_allocator_*": _ALLOCATOR, "change_current_allocator": _ALLOCATOR,
        "get_allocator_backend": _ALLOCATOR,
    },
}


# Names another open issue builds: not this test's to ask for. Drop an entry when it lands.
LATER = {}


def _excluded(module, name):
    return any(fnmatch.fnmatchcase(name, pattern)
               for table in (EXCLUDED, LATER) for pattern in table.get(module, {}))


def _public_module_paths(package):
    """Every public module path under an installed package, from its files alone."""
    paths = [package.__name__]

    def walk(directory, prefix):
        for info in pkgutil.iter_modules([directory]):
            if not info.name.startswith("_"):
                paths.append(f"{prefix}.{info.name}")
                if info.ispkg:
                    walk(os.path.join(directory, info.name), f"{prefix}.{info.name}")

    walk(os.path.dirname(package.__file__), package.__name__)
    return paths


def _names_defined_in(path):
    """Public names a file binds at its top level by def, class or assignment."""
    names = set()
    for node in ast.parse(open(path, encoding="utf-8").read()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("_")}


def _public_names(module_name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = _names_defined_in(module.__file__)
    return set(names)


_EMBER_SIDE = """
import importlib, json, sys, warnings
warnings.simplefilter("ignore")
import ember.compat
ember.compat.install()
paths, wanted = json.loads(sys.stdin.read())
imported, missing = [], {}
for path in paths:
    try:
        module = importlib.import_module(path)
    except Exception as error:
        missing[path] = f"{type(error).__name__}: {error}"
        continue
    imported.append(path)
    if path in wanted:
        missing[path] = sorted(n for n in wanted[path] if not hasattr(module, n))
print(json.dumps([imported, missing]))
"""


@pytest.fixture(scope="module")
def surface():
    """(PyTorch's public module paths, the ones that import under compat, and for MUST the
    names each module lacks, or the import error)."""
    pytest.importorskip("torch")
    import torch
    torchvision = import_torchvision()
    paths = _public_module_paths(torch) + _public_module_paths(torchvision)
    wanted = {}
    for name in MUST:
        try:
            wanted[name] = sorted(_public_names(name))
        except Exception:  # PyTorch's module needs an absent extra (tensorboard ...)
            wanted[name] = sorted(_static_all(name, paths))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-c", _EMBER_SIDE], input=json.dumps([paths, wanted]),
                         capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    imported, missing = json.loads(out.stdout)
    return paths, imported, missing


def _static_all(module_name, paths):
    """`__all__` read from the file, for a PyTorch module that cannot import here."""
    spec = importlib.util.find_spec(module_name)
    tree = ast.parse(open(spec.origin, encoding="utf-8").read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return _names_defined_in(spec.origin)


@pytest.mark.parametrize("module", MUST)
def test_module_has_pytorchs_public_names(surface, module):
    _, _, missing = surface
    lacking = missing[module]
    if isinstance(lacking, str) and module in OPEN and OPEN[module] is None:
        pytest.xfail(f"{module} is on the to-do list (OPEN): {lacking}")
    assert not isinstance(lacking, str), f"`import {module}` fails under compat: {lacking}"
    unexplained = [n for n in lacking if not _excluded(module, n)
                   and n not in (OPEN.get(module) or ())]
    assert not unexplained, f"{module} lacks PyTorch's {unexplained}"


@pytest.mark.parametrize("module", sorted(OPEN))
def test_open_gaps_are_still_open(surface, module):
    """The to-do list only shrinks: a name ember now has leaves it."""
    _, _, missing = surface
    lacking = missing.get(module)
    assert module in MUST
    if OPEN[module] is None:
        assert isinstance(lacking, str), f"ember has {module} now: replace its None in OPEN"
        return
    if isinstance(lacking, str):
        return  # the module itself is missing: its names are, too
    closed = sorted(set(OPEN[module]) - set(lacking))
    assert not closed, f"ember's {module} now has {closed}: drop them from _open_surface.OPEN"


def test_excluded_names_exist_in_pytorch(surface):
    for module, patterns in [*EXCLUDED.items(), *LATER.items()]:
        names = _public_names(module)
        for pattern in patterns:
            assert fnmatch.filter(names, pattern), f"{module}: {pattern} matches no name"


# The share only grows: raise it when more modules import.
MIN_SHARE = 0.33


def test_share_of_public_modules_that_import(surface):
    paths, imported, _ = surface
    share = len(imported) / len(paths)
    print(f"\n{len(imported)} of PyTorch's and torchvision's {len(paths)} public modules "
          f"import under ember.compat ({share:.1%})")
    assert set(MUST) - set(paths) == set(), "a MUST module is not one of PyTorch's"
    assert share >= MIN_SHARE
