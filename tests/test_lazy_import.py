"""`import ember` leaves the rarely used packages unloaded (ember/_lazy.py), and every one of
them, and every name that comes from them, is still reachable as before: as an attribute, by
`from ember import x`, by `import ember.x`, in `dir(ember)`, and through a pickle."""
import json
import pickle
import subprocess
import sys

import pytest

import ember
import ember.ops

LAZY_MODULES = ["ember.distributed", "ember.distributions", "ember.jit", "ember.testing",
                "ember.func", "ember.hub", "ember.multiprocessing", "ember.profiler",
                "ember.compiler", "ember.library", "ember.ao", "ember.masked", "ember.nested",
                "ember.quantization", "ember.overrides", "ember.futures", "ember.signal",
                "ember.utils.data", "ember.utils.checkpoint", "ember.utils.throughput_benchmark",
                "ember.nn", "ember.optim", "ember.serialization", "ember.cuda", "ember.types",
                "ember.autograd.functional", "ember.fft", "ember.linalg", "ember.special",
                "ember.functional", "ember.utils.dlpack", "ember.ops.sparse_compressed_methods",
                "ember.accelerator", "ember._streams", "ember.backends", "ember.cpu",
                "ember.amp.grad_scaler", "ember.autograd.gradcheck", "ember.autograd.forward_ad",
                "ember.autograd.graph", "ember.autograd.engine", "ember.autograd.function",
                "ember.autograd.variable", "ember.ops._aten", "ember.sparse",
                "ember.ops.sparse_arith", "ember._storage", "ember.storage", "ember._printing",
                "ember.utils.weak", "ember.utils.deterministic",
                *(f"ember.ops.{family}" for family in ember.ops.LAZY_FAMILY_NAMES)]
# modules from outside ember that only the lazy packages need
LAZY_STDLIB = ["urllib.request", "ssl", "multiprocessing", "fractions", "logging", "zipfile",
               "tempfile", "shutil", "pickletools", "json", "csv", "bisect", "scipy", "threading",
               "copy"]


def _fresh(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return out.stdout


def test_import_ember_leaves_the_lazy_modules_out():
    loaded = set(json.loads(_fresh(
        "import sys, ember; loaded = sorted(sys.modules); import json; print(json.dumps(loaded))")))
    assert "ember.ops" in loaded and "ember.autograd" in loaded  # the probe sees what it should
    assert sorted(loaded & set(LAZY_MODULES + LAZY_STDLIB)) == []


def test_each_lazy_module_loads_on_attribute_access():
    # in one fresh process (one start is slow), so the first access is really the lazy one
    found = json.loads(_fresh(
        "import json, sys, ember\n"
        f"names = {ember._LAZY_MODULES!r}\n"
        "print(json.dumps([[getattr(ember, n) is sys.modules['ember.' + n], n in dir(ember)]"
        " for n in names]))"))
    assert found == [[True, True]] * len(ember._LAZY_MODULES)


def test_names_from_lazy_modules():
    from ember import distributions, fft
    from ember.jit import Error
    assert ember.distributions is distributions and fft is ember.fft
    assert ember.distributions.Normal(0.0, 1.0).mean.item() == 0.0
    assert ember.JITException is Error and ember.compile is ember.jit.compile
    assert ember.vmap is ember.func.vmap and ember.Tag is ember.library.Tag
    assert ember.Future is ember.futures.Future
    assert ember.DisableTorchFunction is ember.overrides.DisableTorchFunction
    assert ember.ThroughputBenchmark is ember.utils.throughput_benchmark._Engine
    assert ember.utils.data.DataLoader is ember.utils.data.dataloader.DataLoader
    assert callable(ember.utils.checkpoint.checkpoint)
    assert {"distributions", "hub", "vmap", "compile"} <= set(dir(ember))
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        ember.no_such_name


def test_a_pickle_naming_a_lazy_module_loads_in_a_fresh_process():
    blob = pickle.dumps(ember.distributions.constraints.positive)
    assert _fresh(f"import pickle; print(type(pickle.loads({blob!r})).__name__)").strip() \
        == type(ember.distributions.constraints.positive).__name__


def test_the_special_function_series_match_a_recomputation():
    # made on first use now; the values must be those the import-time tables had
    from fractions import Fraction
    from ember.ops.unary import _special_kernels
    tables = _special_kernels._coefficients()
    b = tables["B"]
    assert b[2] == Fraction(1, 6) and b[12] == Fraction(-691, 2730)
    assert tables["PSI_A"][-1] == float(b[2] / 2)
    assert ember.lgamma(ember.tensor([0.25, 2.5, 30.0], dtype=ember.float64)).tolist() == \
        pytest.approx([1.2880225246980774, 0.2846828704729192, 71.25703896716801], rel=1e-15)


def test_every_lazy_name_resolves_in_a_fresh_process():
    # every name dir(ember) lists but the module does not hold yet: nothing lazy is misspelled
    missing = json.loads(_fresh(
        "import json, ember\n"
        "pending = sorted(set(dir(ember)) - set(vars(ember)))\n"
        "bad = [n for n in pending if getattr(ember, n, None) is None]\n"
        "print(json.dumps([len(pending), bad]))"))
    assert missing[0] > 20 and missing[1] == []


def test_nn_optim_and_serialization_load_on_first_use():
    out = _fresh(
        "import io, pickle, sys, ember\n"
        "import ember.nn.functional as F\n"
        "from ember import nn, optim, save, load\n"
        "model = nn.Linear(3, 2)\n"
        "opt = optim.SGD(model.parameters(), lr=0.1)\n"
        "model(ember.ones(4, 3)).sum().backward(); opt.step()\n"
        "buf = io.BytesIO(); save(model.state_dict(), buf); buf.seek(0)\n"
        "state = load(buf)\n"
        "same = all(ember.equal(state[k], v) for k, v in model.state_dict().items())\n"
        "p = pickle.loads(pickle.dumps(model.weight))\n"
        "print(same, type(p).__module__, F.relu is ember.nn.functional.relu,"
        " ember.serialization.save is save)")
    assert out.split() == ["True", "ember.nn.parameter", "True", "True"]
    # a pickle naming an nn class loads in a process that never touched ember.nn
    blob = pickle.dumps(ember.nn.ReLU())
    assert _fresh(f"import pickle; print(type(pickle.loads({blob!r})).__name__)").strip() == "ReLU"


def test_a_saved_function_gets_its_nn_functional_name_before_ember_nn_is_loaded():
    # ember.save names a function by its public home; ember.nn being unloaded must not change it
    out = _fresh(
        "import sys, ember\n"
        "from ember.serialization._torch_paths import torch_name\n"
        "from ember.ops import activation\n"
        "print('ember.nn' in sys.modules, *torch_name(activation.__name__, 'gelu', activation.gelu))")
    assert out.split() == ["False", "torch.nn.functional", "gelu"]


# ---- op families loaded on first use (ember/ops/__init__.py) -----------------------------------
# In one fresh process: before any family loads, every name is listed by dir(); then each
# family is first reached through a different door (a function of ember, of ember.ops, of
# ember.nn.functional, a Tensor method on the class or on an instance), and at the end every
# name, through every door, is the family's own object.
_EVERY_DOOR = """
import json, sys, importlib, ember, ember.ops as ops
from ember.ops._lazy_families import NAMES
def loaded():
    return sorted(f for f in NAMES if f"ember.ops.{f}" in sys.modules)
def op(form):  # the op a users' form takes NumPy's spellings for (ember/ops/_numpy_names.py)
    return form.__wrapped__ if hasattr(form, "__numpy_spellings__") else form
report = {"loaded_at_import": loaded()}
Tensor = ember.Tensor
listed = (set(dir(ember)), set(dir(ops)), set(dir(Tensor)))
report["unlisted"] = sorted(
    n for public, methods, _ in NAMES.values()
    for n, where in [*((n, 0) for n in public), *((n, 1) for n in public), *((n, 2) for n in methods)]
    if n not in listed[where])
report["loaded_by_dir"] = loaded()
t = ember.ones(2, 2)
first_door = {}
# those only ember.nn.functional names come last: importing it loads ember.nn, and its modules
# load many families
order = sorted(NAMES.items(), key=lambda item: not (item[1][0] or item[1][1]))
for i, (family, (public, methods, functional)) in enumerate(order):
    doors = [d for d, names in (("ember", public), ("ops", public), ("class", methods),
                                ("instance", methods)) if names]
    door = doors[i % len(doors)] if doors else "F"
    name = {"ember": public, "ops": public, "class": methods, "instance": methods,
            "F": functional}[door][0]
    value = {"ember": lambda: getattr(ember, name), "ops": lambda: getattr(ops, name),
             "class": lambda: getattr(Tensor, name), "instance": lambda: getattr(t, name).__func__,
             "F": lambda: getattr(sys.modules.get("ember.nn.functional")
                                  or importlib.import_module("ember.nn.functional"), name)}[door]()
    module = sys.modules[f"ember.ops.{family}"]
    own = getattr(module, "FUNCTIONAL_FORMS", {}) if door == "F" else {}
    first_door[family] = [door, op(value) is own.get(name, getattr(module, name))]
report["first_door"] = first_door
import ember.nn.functional as F
wrong = []
for family, (public, methods, functional) in NAMES.items():
    module = importlib.import_module(f"ember.ops.{family}")
    for n in public:
        if not (op(getattr(ember, n)) is getattr(ops, n) is getattr(module, n)):
            wrong.append(["public", family, n])
    for n in methods:
        if not (op(Tensor.__dict__[n]) is op(getattr(Tensor, n)) is getattr(module, n)
                and op(getattr(t, n).__func__) is getattr(module, n)):
            wrong.append(["method", family, n])
    for n in functional:  # a family's own functional form where it has one (F.softmax)
        if op(getattr(F, n)) is not getattr(module, "FUNCTIONAL_FORMS", {}).get(n,
                                                                             getattr(module, n)):
            wrong.append(["functional", family, n])
report["wrong"] = wrong
print(json.dumps(report))
"""


def test_lazy_op_families_through_every_door():
    report = json.loads(_fresh(_EVERY_DOOR))
    assert report["loaded_at_import"] == [] and report["loaded_by_dir"] == []
    assert report["unlisted"] == []
    assert all(same for _, same in report["first_door"].values()), report["first_door"]
    # every door was a first door for some family
    assert {door for door, _ in report["first_door"].values()} == {
        "ember", "ops", "class", "instance", "F"}
    assert report["wrong"] == []


def test_a_first_touch_of_a_lazy_tensor_method_on_the_class_gets_the_real_function():
    out = json.loads(_fresh(
        "import inspect, json, sys, ember\n"
        "before = 'ember.ops.decompositions' in sys.modules\n"
        "method = ember.Tensor.det\n"
        "from ember.ops.decompositions import det\n"
        "t = ember.eye(2)\n"
        "op = lambda f: f.__wrapped__ if hasattr(f, '__numpy_spellings__') else f\n"
        "print(json.dumps([before, op(method) is det, op(ember.Tensor.__dict__['det']) is det,\n"
        "    str(inspect.signature(ember.Tensor.matrix_power)), callable(ember.Tensor.cholesky),\n"
        "    t.det().item(), 'histc' in dir(t), 'ember.ops.histograms' in sys.modules,\n"
        "    hasattr(t, 'histc'), op(ember.Tensor.histc) is op(ember.histc)]))"))
    assert out == [False, True, True, str(__import__("inspect").signature(
        ember.ops.decompositions.matrix_power)), True, 1.0, True, False, True, True]


def test_tensor_properties_of_a_lazy_family_before_it_loads():
    out = json.loads(_fresh(
        "import json, sys, ember\n"
        "t = ember.tensor([1 + 2j])\n"
        "before = 'ember.ops.complex_views' in sys.modules\n"
        "t.real = ember.tensor([5.0])\n"  # the first touch is an assignment
        "u = ember.tensor([3 + 4j])\n"
        "print(json.dumps([before, t.real.tolist() + t.imag.tolist(), u.imag.tolist(),\n"
        "    type(ember.Tensor.imag).__name__, 'real' in t.__dir__()]))"))
    assert out == [False, [5.0, 2.0], [4.0], "property", True]


def test_a_lazy_family_imported_directly_binds_its_names():
    # `ember.ops.stft` is a function and a module of the same name: the function keeps the
    # package attribute, whoever imports the module first
    out = json.loads(_fresh(
        "import json, ember\n"
        "from ember.ops.stft import stft\n"
        "import ember.ops.windows\n"
        "print(json.dumps([ember.ops.stft is stft, ember.stft is stft,\n"
        "    ember.Tensor.__dict__['stft'] is stft, type(ember.ops.windows).__name__,\n"
        "    ember.hann_window is ember.ops.windows.hann_window]))"))
    assert out == [True, True, True, "module", True]


def test_a_pickled_bound_method_of_a_lazy_family_loads_in_a_fresh_process():
    blob = pickle.dumps(ember.eye(2).matrix_power)
    out = _fresh(f"import pickle, sys, ember\n"
                 f"print('ember.ops.decompositions' in sys.modules, pickle.loads({blob!r})(3).sum().item())")
    assert out.split() == ["False", "2.0"]


def test_fx_traces_a_lazy_op_it_has_not_seen_loaded():
    out = json.loads(_fresh(
        "import json, sys, ember, ember.fx\n"
        "def f(x, y):\n"
        "    return ember.cdist(x, y).det() + ember.nn.functional.pdist(x).sum()\n"
        "gm = ember.fx.symbolic_trace(f)\n"
        "x = ember.eye(3)\n"
        "print(json.dumps([gm.code.count('torch.cdist'), gm.code.count('.det()'),\n"
        "    gm.code.count('torch.nn.functional.pdist'), ember.cdist.__module__,\n"
        "    ember.allclose(gm(x, x), f(x, x))]))"))
    assert out == [1, 1, 1, "ember.ops.distance", True]


def test_sparse_compressed_methods_load_on_first_use():
    out = _fresh(
        "import sys, ember\n"
        "x = ember.eye(2).to_sparse_csr()\n"
        "print('ember.ops.sparse_compressed_methods' in sys.modules)\n"
        "print(repr(x)); print((x @ ember.ones(2, 1)).tolist())")
    head, *rest = out.splitlines()
    assert head == "False"
    x = ember.eye(2).to_sparse_csr()
    assert "\n".join(rest) == repr(x) + "\n" + str((x @ ember.ones(2, 1)).tolist())


def test_return_types_are_made_on_first_use_and_pickle_by_name():
    import ember.return_types as return_types
    blob = pickle.dumps(ember.tensor([[1.0, 3.0]]).max(1))
    out = _fresh(f"import pickle, ember.return_types as r\n"
                 f"made = sorted(n for n in vars(r) if isinstance(vars(r)[n], type))\n"
                 f"print(len(made) < 20, type(pickle.loads({blob!r})) is r.max, len(r.all_return_types))")
    assert out.split() == ["True", "True", str(len(return_types.all_return_types))]


def test_autograd_gradcheck_stays_the_function_whoever_imports_its_module_first():
    out = json.loads(_fresh(
        "import json, sys, ember\n"
        "import ember.autograd.gradcheck\n"
        "from ember.autograd import gradcheck\n"
        "module = sys.modules['ember.autograd.gradcheck']\n"
        "print(json.dumps([ember.autograd.gradcheck is module.gradcheck, gradcheck is module.gradcheck,\n"
        "    ember.autograd.GradcheckError is module.GradcheckError]))"))
    assert out == [True, True, True]


def test_the_self_first_special_methods_load_their_family_on_first_use():
    # Tensor.polygamma(n) and .mvlgamma(p) / .igamma / .igammac are not the functions of those
    # names: their modules bind them when the unary_special family loads
    out = json.loads(_fresh(
        "import json, sys, ember\n"
        "before = 'ember.ops.unary_special' in sys.modules\n"
        "t = ember.tensor([0.5, 1.5])\n"
        "values = [t.polygamma(1).tolist(), t.mvlgamma(1).tolist(), t.igamma(t).tolist()]\n"
        "from ember.ops.unary import gamma_functions, special\n"
        "op = lambda f: f.__wrapped__ if hasattr(f, '__numpy_spellings__') else f\n"
        "bound = [op(vars(ember.Tensor)['polygamma']) is special._polygamma_method,\n"
        "         op(vars(ember.Tensor)['igammac']) is gamma_functions._igammac_m]\n"
        "print(json.dumps([before, values, bound]))"))
    torch = pytest.importorskip("torch")
    t = torch.tensor([0.5, 1.5])
    assert out[0] is False and out[2] == [True, True]
    expected = [t.polygamma(1).tolist(), t.mvlgamma(1).tolist(), t.igamma(t).tolist()]
    for got, want in zip(out[1], expected):
        assert got == pytest.approx(want, rel=1e-6)


def test_a_sparse_tensor_made_before_its_family_loads_has_its_own_methods():
    # an embedding's sparse gradient is made by ember._sparse alone: its methods (repr,
    # arithmetic, products) are stand-ins until they load the sparse family
    out = _fresh(
        "import sys, ember\n"
        "from ember._sparse import make_sparse\n"
        "x = make_sparse(ember.tensor([[0, 1], [1, 0]]), ember.ones(2), (2, 2), True)\n"
        "print('ember.ops.sparse' in sys.modules)\n"
        "print(repr(x)); print((x @ ember.ones(2, 1)).tolist(), (x * 3 + x).to_dense().tolist(),"
        " (ember.ones(2, 2) + x).tolist())")
    head, *rest = out.splitlines()
    assert head == "False"
    x = ember.sparse_coo_tensor([[0, 1], [1, 0]], ember.ones(2), (2, 2))
    assert "\n".join(rest) == repr(x) + "\n" + " ".join(str(v) for v in (
        (x @ ember.ones(2, 1)).tolist(), (x * 3 + x).to_dense().tolist(),
        (ember.ones(2, 2) + x).tolist()))


def test_every_tensor_method_is_on_the_class_before_its_family_loads():
    # a family that binds a method itself (not through its METHODS) needs a stand-in too
    out = json.loads(_fresh(
        "import json, ember\n"
        "from ember._sparse import SparseTensor\n"
        "from ember._sparse_compressed import SparseCompressedTensor\n"
        "classes = (ember.Tensor, SparseTensor, SparseCompressedTensor)\n"
        "before = [set(dir(c)) for c in classes]\n"
        "ember.ops.load_all()\n"
        "import ember.ops.sparse_compressed_methods\n"
        "print(json.dumps([sorted(set(dir(c)) - b) for c, b in zip(classes, before)]))"))
    assert out == [[], [], []]
