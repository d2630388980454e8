"""`import ember` leaves the rarely used packages unloaded (ember/_lazy.py), and every one of
them, and every name that comes from them, is still reachable as before: as an attribute, by
`from ember import x`, by `import ember.x`, in `dir(ember)`, and through a pickle."""
import json
import pickle
import subprocess
import sys

import pytest

import ember

LAZY_MODULES = ["ember.distributed", "ember.distributions", "ember.jit", "ember.testing",
                "ember.func", "ember.hub", "ember.multiprocessing", "ember.profiler",
                "ember.compiler", "ember.library", "ember.ao", "ember.masked", "ember.nested",
                "ember.quantization", "ember.overrides", "ember.futures", "ember.signal",
                "ember.utils.data", "ember.utils.checkpoint", "ember.utils.throughput_benchmark",
                "ember.nn", "ember.optim", "ember.serialization", "ember.cuda", "ember.types",
                "ember.autograd.functional"]
# modules from outside ember that only the lazy packages need
LAZY_STDLIB = ["urllib.request", "ssl", "multiprocessing", "fractions", "logging", "zipfile",
               "tempfile", "shutil", "pickletools", "json", "csv", "bisect", "scipy"]


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
    from ember.ops.unary import special
    tables = special._coefficients()
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
