"""Every class PyTorch defines in a `torch.nn.modules.*` file (and every public class of
`torch.nn`) is defined in the ember file of the same name: pickles name the defining module,
so a torch pickle loads through ember.compat and an ember pickle names torch's path."""
import importlib
import inspect
import os
import pickle
import pkgutil
import subprocess
import sys

import pytest

import ember

# PyTorch's internals ember does not have, and why: the chunked linear-cross-entropy loss of
# 2.13 (a 1300-line fused kernel with its own options class), an autograd Function only
# distributed SyncBatchNorm runs, the backward-hook Function (ember's hooks use their own),
# a typing Protocol, and the hook wrapper of `register_state_dict_pre_hook` internals.
NOT_IN_EMBER = {
    "linear_cross_entropy": None, "linear_cross_entropy_options": None,
    "loss": {"LinearCrossEntropyLoss"}, "_functions": {"SyncBatchNorm", "BackwardHookFunction"},
    "lazy": {"_LazyProtocol"}, "module": {"_WrappedHook"},
}


def _torch_submodules(torch):
    return sorted(m.name for m in pkgutil.iter_modules(torch.nn.modules.__path__))


def _classes_defined_in(module):
    return [name for name, obj in vars(module).items()
            if inspect.isclass(obj) and obj.__module__ == module.__name__]


def test_every_torch_modules_file_and_class_is_defined_in_ember(torch):
    problems = []
    for sub in _torch_submodules(torch):
        if sub in NOT_IN_EMBER and NOT_IN_EMBER[sub] is None:
            continue
        torch_mod = importlib.import_module(f"torch.nn.modules.{sub}")
        ember_mod = importlib.import_module(f"ember.nn.modules.{sub}")
        for name in _classes_defined_in(torch_mod):
            if name in (NOT_IN_EMBER.get(sub) or ()):
                continue
            cls = getattr(ember_mod, name, None)
            if cls is None:
                problems.append(f"{sub}.{name} missing")
            elif cls.__module__ != f"ember.nn.modules.{sub}":
                problems.append(f"{sub}.{name} defined in {cls.__module__}")
        for name in getattr(torch_mod, "__all__", ()):
            if not hasattr(ember_mod, name) and name not in (NOT_IN_EMBER.get(sub) or ()):
                problems.append(f"{sub}.{name} (in __all__) missing")
    assert problems == []


def test_every_public_nn_class_is_defined_where_torch_defines_it(torch):
    problems = []
    for name in dir(torch.nn):
        obj = getattr(torch.nn, name)
        if name.startswith("_") or not inspect.isclass(obj):
            continue
        if name in ("LinearCrossEntropyLoss", "LinearCrossEntropyOptions"):
            continue
        cls = getattr(ember.nn, name, None)
        want = "ember" + obj.__module__[len("torch"):]
        if cls is None or cls.__module__ != want:
            problems.append(f"{name}: {getattr(cls, '__module__', None)} != {want}")
    assert problems == []


def test_no_ember_only_files_under_nn_modules(torch):
    """An ember pickle names its class's file: one torch lacks would not load in PyTorch."""
    ember_files = {m.name for m in pkgutil.iter_modules(ember.nn.modules.__path__)}
    # internal, no class a pickle could name: hooks (the global hooks' state), _loading
    # (load_state_dict's work on one tensor)
    assert ember_files - set(_torch_submodules(torch)) <= {"hooks", "_loading"}


@pytest.mark.parametrize("make", [
    lambda nn: nn.BatchNorm2d(3), lambda nn: nn.InstanceNorm1d(4, affine=True),
    lambda nn: nn.SyncBatchNorm(2), lambda nn: nn.MultiheadAttention(4, 2),
    lambda nn: nn.Sequential(nn.ReflectionPad2d(1), nn.BatchNorm1d(2)),
])
def test_pickled_model_names_torchs_module_path(make):
    model = make(ember.nn)
    data = pickle.dumps(model)
    for cls in {type(m) for m in model.modules()}:
        assert f"{cls.__module__}".encode() in data
        assert cls.__module__.startswith("ember.nn.modules.")
    again = pickle.loads(data)
    assert type(again) is type(model)


def test_torch_pickle_loads_under_compat(torch, tmp_path):
    """A whole model pickled by PyTorch names torch.nn.modules.batchnorm / instancenorm /
    activation: ember.compat resolves them to ember's classes."""
    model = torch.nn.Sequential(torch.nn.BatchNorm2d(3), torch.nn.InstanceNorm2d(3),
                                torch.nn.MultiheadAttention(4, 2), torch.nn.ZeroPad2d(1))
    path = tmp_path / "model.pt"
    torch.save(model, path)
    script = tmp_path / "load.py"
    script.write_text(
        "import sys, torch\n"
        "m = torch.load(sys.argv[1], weights_only=False)\n"
        "print(type(m[0]).__module__, type(m[1]).__module__, type(m[2]).__module__)\n"
        "print(m[0].running_var.tolist())\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script), str(path)],
                         env=dict(os.environ, PYTHONPATH=root), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["ember.nn.modules.batchnorm", "ember.nn.modules.instancenorm",
                                "ember.nn.modules.activation"]
    assert lines[1] == "[1.0, 1.0, 1.0]"


def test_deprecated_container_and_conv_transpose_mixin_warn_like_torch(torch):
    with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
        c = ember.nn.Container(a=ember.nn.Linear(2, 2))
    assert list(dict(c.named_children())) == ["a"]
    from ember.nn.modules.conv import _ConvTransposeMixin
    assert issubclass(_ConvTransposeMixin, ember.nn.modules.conv._ConvTransposeNd)
    from ember.nn.modules.rnn import apply_permutation
    x = ember.arange(6.).reshape(2, 3)
    with pytest.warns(FutureWarning, match="apply_permutation"):
        y = apply_permutation(x, ember.tensor([2, 0, 1]))
    assert y.tolist() == [[2., 0., 1.], [5., 3., 4.]]


def test_padding_bases_are_torchs():
    from ember.nn.modules.padding import _ReflectionPadNd, _ReplicationPadNd
    assert isinstance(ember.nn.ReflectionPad3d(1), _ReflectionPadNd)
    assert isinstance(ember.nn.ReplicationPad1d((1, 2)), _ReplicationPadNd)
    assert ember.nn.ReplicationPad1d((1, 2))(ember.ones(1, 1, 2)).shape == (1, 1, 5)


def test_utils_helpers_match_torch(torch):
    from torch.nn.modules import utils as tu

    from ember.nn.modules import utils as eu
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for value in (3, (1, 2), [4, 5, 6], range(2)):
            assert getattr(eu, name)(value) == getattr(tu, name)(value)
        assert getattr(eu, name).__name__ == name
    assert eu._ntuple(5, "five")(1) == tu._ntuple(5, "five")(1)
    assert eu._reverse_repeat_tuple((1, 2, 3), 2) == tu._reverse_repeat_tuple((1, 2, 3), 2)
    assert eu._list_with_default([None, 4], [1, 2, 7, 8]) == \
        tu._list_with_default([None, 4], [1, 2, 7, 8])
    assert eu._list_with_default(5, [1, 2]) == 5
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        eu._list_with_default([None, 4], [1, 2])
    assert eu.__all__ == tu.__all__


def test_consume_prefix_in_state_dict_if_present_matches_torch(torch):
    from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present as torch_consume

    from ember.nn.modules.utils import consume_prefix_in_state_dict_if_present
    ours = ember.nn.DataParallel(ember.nn.Sequential(ember.nn.Linear(2, 2))).state_dict()
    theirs = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(2, 2))).state_dict()
    consume_prefix_in_state_dict_if_present(ours, "module.")
    torch_consume(theirs, "module.")
    assert list(ours) == list(theirs) == ["0.weight", "0.bias"]
    assert list(ours._metadata) == list(theirs._metadata)
    model = ember.nn.Sequential(ember.nn.Linear(2, 2))
    model.load_state_dict(ours)
