"""The classes users touch most have every public attribute PyTorch's have, apart from
short lists of known gaps, each with its reason; the attributes answer alike. An attribute
that appears in a new PyTorch fails here until it is added or listed."""
import pytest

import ember

# torch.Tensor attributes ember does not have, and why.
GAPS = {
    # quantized tensors (torch.ao.quantization is not in ember yet)
    "dequantize": "quantized", "int_repr": "quantized", "q_per_channel_axis": "quantized",
    "q_per_channel_scales": "quantized", "q_per_channel_zero_points": "quantized",
    "q_scale": "quantized", "q_zero_point": "quantized", "qscheme": "quantized",
    # resizing a sparse COO tensor's storage in place
    "sparse_resize_": "sparse resize", "sparse_resize_and_clear_": "sparse resize",
    # devices ember has no backend for
    "xpu": "device", "ipu": "device", "mtia": "device", "to_mkldnn": "device",
    # nested tensors
    "to_padded_tensor": "nested",
    # removed from PyTorch long ago: they only raise there (eig, lstsq, solve and symeig raise
    # PyTorch's notes in ember too: ember/ops/removed.py)
    "reinforce": "removed", "volatile": "removed",
    # functorch's first-class dimensions (functorch.dim), a separate experimental library
    "index": "first-class dims",
}


# Other classes: (path, known gaps, ember's public extras); a path is looked up in both.
CLASSES = [
    ("Tensor", GAPS, {}),
    ("nn.Parameter", GAPS, {}),
    ("nn.Module", {"xpu": "device", "ipu": "device", "mtia": "device",
                   "T_destination": "a typing TypeVar"}, {}),
    ("optim.Optimizer", {"OptimizerPreHook": "a typing alias",
                         "OptimizerPostHook": "a typing alias"}, {}),
    ("optim.lr_scheduler.LRScheduler", {}, {}),
    ("utils.data.DataLoader", {}, {}),
    ("Generator", {}, {"rng": "the backend generator ops draw from"}),
    ("device", {}, {}),
    ("dtype", {}, {"name": "the dtype's name ('float32')", "np": "its NumPy dtype"}),
    ("Size", {}, {}),
    ("distributions.Distribution", {}, {}),
    ("amp.GradScaler", {}, {}),
]


def _lookup(root, path):
    for part in path.split("."):
        root = getattr(root, part)
    return root


@pytest.mark.parametrize("path,gaps,extras", CLASSES, ids=[c[0] for c in CLASSES])
def test_class_has_torch_attributes(torch, path, gaps, extras):
    theirs = {n for n in dir(_lookup(torch, path)) if not n.startswith("_")}
    ours = {n for n in dir(_lookup(ember, path)) if not n.startswith("_")}
    missing = sorted(theirs - ours - set(gaps))
    assert not missing, f"torch.{path} attributes ember's lacks: {missing}"
    stale = sorted(n for n in gaps if n in ours or n not in theirs)
    assert not stale, f"listed as gaps but present in ember, or gone from torch: {stale}"
    extra = sorted(ours - theirs - set(extras))
    assert not extra, f"public attributes of ember.{path} that torch's lacks: {extra}"


FLAGS = ["is_xpu", "is_mps", "is_ipu", "is_maia", "is_mtia", "is_xla", "is_vulkan",
         "is_mkldnn", "is_nested", "is_sparse_csr", "is_meta", "is_quantized", "is_sparse",
         "is_cuda", "is_cpu", "name", "grad_dtype"]


@pytest.mark.parametrize("flag", FLAGS)
def test_flags_match(torch, flag):
    assert str(getattr(ember.ones(2, 3), flag)) == str(getattr(torch.ones(2, 3), flag))


def test_methods_match(torch):
    for lib in (torch, ember):
        t = lib.ones(2, 3, 4).permute(2, 0, 1)
        with lib.inference_mode():
            u = lib.ones(2)
        lib.result = (t.dim_order(), t.is_set_to(t), t.is_set_to(t[0]), t.is_inference(),
                      u.is_inference(), (u + 1).is_inference(), t.is_distributed(),
                      t.const_data_ptr() == t.data_ptr())
    assert ember.result == torch.result
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        ember.ones(2).is_set_to(1)


def test_as_subclass_aliases_memory_and_graph():
    class Sub(ember.Tensor):
        pass

    x = ember.ones(3, requires_grad=True)
    y = x.as_subclass(Sub)
    assert type(y) is Sub and y.data_ptr() == x.data_ptr() and y.requires_grad
    (y * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        x.as_subclass(int)


def test_module_load():
    p = ember.zeros(2)
    out = p.module_load(ember.ones(2))
    assert out.tolist() == [1.0, 1.0] and p.tolist() == [1.0, 1.0] and out is not p
    other = ember.full((2,), 3.0)
    assert p.module_load(other, assign=True).tolist() == [3.0, 3.0]


def test_set_submodule(torch):
    for lib in (torch, ember):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(lib.nn.ReLU()))
        m.set_submodule("1.0", lib.nn.Tanh())
        m.set_submodule("1.5", lib.nn.Tanh())
        errors = []
        for target, strict in (("2.0", False), ("", False), ("1.7", True)):
            with pytest.raises((AttributeError, ValueError)) as info:
                m.set_submodule(target, lib.nn.Tanh(), strict=strict)
            errors.append((info.type, str(info.value)))
        lib.result = (repr(m), errors)
    assert ember.result == torch.result


def test_generator_clone_state_and_offset(torch):
    g = ember.Generator().manual_seed(3)
    ember.rand(2, generator=g)
    twin = g.clone_state()
    assert ember.rand(3, generator=g).tolist() == ember.rand(3, generator=twin).tolist()
    with pytest.raises(RuntimeError, match="CPU Generator does not use offset"):
        g.get_offset()


def test_dtype_abbr(torch):
    names = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
             "uint8", "bool", "complex64", "complex128"]
    assert [getattr(ember, n).abbr for n in names] == [getattr(torch, n).abbr for n in names]
