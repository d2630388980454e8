"""Keyword-name parity: every function and method takes the keyword names PyTorch takes.

For each public callable of `ember`, `ember.Tensor`, `ember.nn.functional`, `ember.linalg`,
`ember.fft` and `ember.special` that torch also has, the names torch's parser accepts (read by
`tests/_torch_keywords.py` from PyTorch's signatures, stubs and schemas) must all be keyword
parameters of ember's signature. A `*size` parameter of torch counts as the keyword `size`
(`zeros(size=(2, 3))`, `t.permute(dims=(1, 0))`), so ember takes both forms there.

The NumPy spellings torch's C++ parser also takes for any C-bound op (`axis` for `dim`,
`keepdims`, `x`/`a`/`x1`/`x2` for the operands) are no op's parameter names: ember binds them
in one place, which tests/test_numpy_names.py checks.
"""
import inspect

import numpy as np
import pytest

import ember

from ._torch_keywords import torch_keywords

NAMESPACES = ["torch", "Tensor", "nn.functional", "linalg", "fft", "special"]

# "<namespace>.<name>": {keyword: why ember does not take it}. Each entry must still be a gap
# (a stale entry fails), so the list only shrinks.
EXCLUDED = {
    # the stubs name a parameter that the parser itself refuses (checked against torch)
    "Tensor.requires_grad_": {"mode": "the stub's name; torch takes requires_grad= only"},
    "nn.functional.one_hot": {"tensor": "the stub's name; torch takes input= only"},
    # a second overload calls the same operand by another name: one Python parameter has one name
    "Tensor.copy_": {"other": "copy_(src) overload's other name for src"},
    "Tensor.map_": {"other": "map_(tensor) overload's other name for tensor"},
    "torch.isin": {"element": "the Scalar overload's name for elements",
                   "test_element": "the Scalar overload's name for test_elements"},
    "torch.result_type": {"scalar": "the Scalar overloads' names for the operands",
                          "scalar1": "the Scalar overloads' names for the operands",
                          "scalar2": "the Scalar overloads' names for the operands"},
    "torch.wait": {"arg0": "pybind's name for the positional future; torch.jit.wait, the "
                           "same call, names it fut"},
    # features ember does not have
    "torch.full": {"names": "named tensors are not implemented"},
    "torch.addmm": {"out_dtype": "low-precision matmul with a wider output dtype: not implemented"},
    "torch.baddbmm": {"out_dtype": "low-precision matmul with a wider output dtype: not implemented"},
    "torch.bmm": {"out_dtype": "low-precision matmul with a wider output dtype: not implemented"},
    "torch.mm": {"out_dtype": "low-precision matmul with a wider output dtype: not implemented"},
    "torch.native_batch_norm": {"out": "an internal aten op; its out= is a triple of buffers"},
    "linalg.lstsq": {"out": "the out= tuple of four results is not written"},
    # one ember.embedding serves F.embedding(input, weight) and the aten torch.embedding(weight,
    # indices) (positional calls are told apart by dtype); `indices=` would name F's `weight`
    "torch.embedding": {"indices": "F.embedding's parameter at that place is weight"},
}

# ember callables whose signature takes **kwargs (they sort overloads themselves): their
# keywords are checked by calling them in test_keyword_calls below
CALL_CHECKED = {"torch.batch_norm", "torch.instance_norm", "torch.rand", "torch.randn",
                "Tensor.new", "Tensor.random_", "Tensor.to", "Tensor.type", "Tensor.uniform_",
                "nn.functional.batch_norm", "nn.functional.instance_norm"}


def _modules(torch, namespace):
    if namespace == "torch":
        return ember, torch
    if namespace == "Tensor":
        return ember.Tensor, torch.Tensor
    e, t = ember, torch
    for part in namespace.split("."):
        e, t = getattr(e, part), getattr(t, part)
    return e, t


def _ember_keywords(fn):
    """(keyword names, takes **kwargs), or None without a signature."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    names = {p.name for p in sig.parameters.values()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return names, any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())


def keyword_gaps(torch, namespace):
    """({"ns.name": sorted missing keywords}, number of callables checked)."""
    emod, tmod = _modules(torch, namespace)
    gaps, checked = {}, 0
    for name in sorted(n for n in dir(emod) if not n.startswith("_")):
        e, t = getattr(emod, name, None), getattr(tmod, name, None)
        if not callable(e) or not callable(t) or isinstance(t, type) or inspect.ismodule(t):
            continue
        wanted = torch_keywords(torch, t, namespace, name)
        ours = _ember_keywords(e)
        key = f"{namespace}.{name}"
        if not wanted or ours is None or key in CALL_CHECKED:
            continue
        checked += 1
        missing = sorted(wanted - ours[0])
        if missing and not ours[1]:
            gaps[key] = missing
    return gaps, checked


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_ember_takes_torchs_keyword_names(torch, namespace):
    gaps, checked = keyword_gaps(torch, namespace)
    assert checked > 0
    unexplained = {k: [n for n in v if n not in EXCLUDED.get(k, {})] for k, v in gaps.items()}
    unexplained = {k: v for k, v in unexplained.items() if v}
    assert not unexplained, "keywords torch takes and ember does not:\n" + "\n".join(
        f"  {k}: {', '.join(v)}" for k, v in sorted(unexplained.items()))
    stale = {k: sorted(set(v) - set(gaps.get(k, ()))) for k, v in EXCLUDED.items()
             if k.rsplit(".", 1)[0] == namespace}
    stale = {k: v for k, v in stale.items() if v}
    assert not stale, f"exclusions that are no longer gaps (remove them): {stale}"


def test_call_checked_still_take_kwargs(torch):
    """A CALL_CHECKED entry that got a plain signature belongs to the signature test."""
    for key in CALL_CHECKED:
        ns, name = key.rsplit(".", 1)
        ours = _ember_keywords(getattr(_modules(torch, ns)[0], name))
        assert ours is not None and ours[1], f"{key} no longer takes **kwargs: drop it here"


def _keyword_calls(lib):
    x = lib.arange(6.0).reshape(2, 3)
    w, b = lib.ones(3), lib.zeros(3)
    rm, rv = lib.zeros(3), lib.ones(3)
    F = lib.nn.functional
    return {
        "zeros(size=)": lambda: lib.zeros(size=(2, 3)),
        "ones(size=)": lambda: lib.ones(size=[2]),
        "empty(size=).shape": lambda: lib.empty(size=(2, 3)).shape,
        "rand(size=).shape": lambda: lib.rand(size=(2, 3), dtype=lib.float64).shape,
        "randn(size=).shape": lambda: lib.randn(size=(4,), requires_grad=True).shape,
        "flip(dims=)": lambda: x.flip(dims=[0]),
        "torch.flip(dims=)": lambda: lib.flip(x, dims=(0, 1)),
        "permute(dims=)": lambda: x.permute(dims=(1, 0)),
        "view(size=)": lambda: x.view(size=(3, 2)),
        "view(dtype=)": lambda: x.view(dtype=lib.int32),
        "reshape(shape=)": lambda: x.reshape(shape=(6,)),
        "torch.reshape(shape=)": lambda: lib.reshape(x, shape=(3, 2)),
        "repeat(repeats=)": lambda: x.repeat(repeats=(2, 1)),
        "expand(size=)": lambda: lib.ones(3).expand(size=(2, 3)),
        "new_zeros(size=)": lambda: x.new_zeros(size=(1, 2)),
        "sum_to_size(size=)": lambda: x.sum_to_size(size=(1, 3)),
        "split(split_size=)": lambda: x.split(split_size=1),
        "hsplit(indices=)": lambda: x.hsplit(indices=[1]),
        "tensor_split(sections=)": lambda: lib.tensor_split(x, sections=2, dim=1),
        "swapaxes(axis0=, axis1=)": lambda: lib.swapaxes(x, axis0=0, axis1=1),
        "max(other=)": lambda: x.max(other=x.flip(0)),
        "to(dtype=)": lambda: x.to(dtype=lib.float16),
        "to(device=, dtype=)": lambda: x.to(device="cpu", dtype=lib.int32),
        "type(dtype=)": lambda: x.type(dtype=lib.int64),
        # `from` is a Python keyword: the stubs write from_, the parser takes from=
        "uniform_(from=, to=)": lambda: x.clone().uniform_(**{"from": 2, "to": 3}).ge(2).all(),
        "random_(from=, to=)": lambda: x.clone().random_(**{"from": 1, "to": 2}),
        "new(size)": lambda: x.new(2, 3).shape,
        "batch_norm(input=...)": lambda: lib.batch_norm(
            input=x, weight=w, bias=b, running_mean=rm.clone(), running_var=rv.clone(),
            training=False, momentum=0.1, eps=1e-5, cudnn_enabled=False),
        "instance_norm(input=...)": lambda: lib.instance_norm(
            input=x.unsqueeze(0), weight=None, bias=None, running_mean=None, running_var=None,
            use_input_stats=True, momentum=0.1, eps=1e-5, cudnn_enabled=False),
        "F.batch_norm(input=...)": lambda: F.batch_norm(
            input=x, running_mean=rm.clone(), running_var=rv.clone(), weight=w, bias=b,
            training=False, momentum=0.1, eps=1e-5),
        "F.instance_norm(input=...)": lambda: F.instance_norm(
            input=x.unsqueeze(0), use_input_stats=True, momentum=0.1, eps=1e-5),
        "abs_(input=)": lambda: lib.abs_(input=x.clone().neg()),
        "xlogy_(other=)": lambda: x.clone().xlogy_(other=x + 1),
        "addmm_(mat1=, mat2=)": lambda: lib.zeros(2, 2).addmm_(mat1=x, mat2=x.t()),
        "linalg.norm(input=)": lambda: lib.linalg.norm(input=x),
        "linalg.cholesky(input=)": lambda: lib.linalg.cholesky(input=lib.eye(2) * 4),
        "det(input=)": lambda: lib.det(input=lib.eye(2) * 2),
        "linalg.det(A=)": lambda: lib.linalg.det(A=lib.eye(2) * 2),
        "softmax(out=)": lambda: lib.softmax(x, 1, out=lib.empty(2, 3)),
        "take(out=)": lambda: lib.take(x, lib.tensor([0, 5]), out=lib.empty(2)),
        "arange(pin_memory=)": lambda: lib.arange(3, pin_memory=False),
    }


def test_keyword_calls(torch):
    """The varargs-or-keyword forms and the **kwargs callables, called as torch is."""
    ours, theirs = _keyword_calls(ember), _keyword_calls(torch)
    for name, call in ours.items():
        got, want = call(), theirs[name]()
        if isinstance(want, torch.Tensor):
            assert str(got.dtype) == str(want.dtype), name
            np.testing.assert_allclose(got.tolist(), want.tolist(), rtol=1e-6, err_msg=name)
        elif isinstance(want, (tuple, list)) and want and isinstance(want[0], torch.Tensor):
            assert [g.tolist() for g in got] == [w.tolist() for w in want], name
        else:
            assert tuple(got) == tuple(want) if isinstance(want, torch.Size) else got == want, name


def test_varargs_and_keyword_together_is_an_error(torch):
    for lib in (ember, torch):
        with pytest.raises(TypeError, match="multiple values for argument 'size'"):
            lib.zeros(2, size=(3,))
        with pytest.raises(TypeError, match="multiple values for argument 'dims'"):
            lib.ones(2, 3).permute(0, dims=(1, 0))
