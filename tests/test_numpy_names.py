"""NumPy's spellings of `dim`, `keepdim`, `input` and `other` (`axis`, `keepdims`, `x`/`a`/`x1`,
`x2`), which PyTorch's C++ parser takes for every function it binds and which official
tutorials use (`out.sum(axis=1)`): ember/ops/_numpy_names.py."""
import inspect
import pickle
import types

import numpy as np
import pytest

import ember
from ember.ops import _numpy_names

CANONICAL = set(_numpy_names.SPELLINGS.values())


def _same(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, ember.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and ember.equal(a, b)
    return a == b


def test_spellings_give_the_canonical_calls():
    x = ember.arange(6.0).reshape(2, 3)
    F = ember.nn.functional
    pairs = [
        (x.sum(axis=1, keepdims=True), x.sum(dim=1, keepdim=True)),
        (ember.sum(x, axis=(0, 1)), ember.sum(x, dim=(0, 1))),
        (x.mean(axis=None), x.mean()),
        (tuple(ember.max(x, axis=1, keepdims=True)), tuple(ember.max(x, dim=1, keepdim=True))),
        (x.argmax(axis=1), x.argmax(dim=1)),
        (x.softmax(axis=0), x.softmax(dim=0)),
        (ember.softmax(x, axis=1), ember.softmax(x, dim=1)),
        (ember.stack([x, x], axis=1), ember.stack([x, x], dim=1)),
        (ember.add(x1=x, x2=2 * x), ember.add(x, 2 * x)),
        (ember.neg(a=x), -x),
        (x.add(x2=x), x + x),
        (ember.max(x, x2=x.flip(0)), ember.maximum(x, x.flip(0))),
        (F.gelu(x=x), F.gelu(x)),
        (F.cosine_similarity(x, x + 1, axis=1), F.cosine_similarity(x, x + 1, dim=1)),
        (ember.linalg.vector_norm(x, axis=1), ember.linalg.vector_norm(x, dim=1)),
        (ember.special.logsumexp(x, axis=0), ember.logsumexp(x, 0)),
        (ember.fft.fft(x=x, axis=0), ember.fft.fft(x, dim=0)),
        (x.size(axis=1), 3),
        (ember.numel(a=x), 6),
        (ember.is_floating_point(x=x), True),
        (ember.diff(x, axis=1), ember.diff(x, dim=1)),
        (x.argsort(axis=1, descending=True), x.argsort(dim=1, descending=True)),
        (x.split_with_sizes([1, 1], axis=0), x.split_with_sizes([1, 1], dim=0)),
    ]
    for got, want in pairs:
        assert _same(got, want)


def test_a_sparse_tensors_methods_take_them_too():
    s = ember.arange(6.0).reshape(2, 3).to_sparse()
    assert ember.equal(s.sum(axis=0, keepdims=True).to_dense(),
                       s.sum(dim=0, keepdim=True).to_dense())
    assert ember.equal(s.add(x2=s).to_dense(), (s + s).to_dense())
    from ember._sparse import SparseTensor
    assert pickle.loads(pickle.dumps(SparseTensor.sum)) is SparseTensor.sum


def test_spellings_keep_autograd():
    x = ember.arange(6.0).reshape(2, 3).requires_grad_()
    (x.sum(axis=1, keepdims=True) * ember.tensor([[1.0], [2.0]])).sum().backward()
    assert x.grad.tolist() == [[1.0] * 3, [2.0] * 3]


def test_what_pytorch_refuses_is_refused():
    x = ember.arange(6.0).reshape(2, 3)
    F = ember.nn.functional
    # the name itself and its spelling: the spelling is an unknown keyword, as in PyTorch
    with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
        ember.sum(x, dim=0, axis=1)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        x.sum(axis=0, keepdim=True, keepdims=True)
    with pytest.raises(TypeError):
        ember.sum(x=x, a=x)
    with pytest.raises(TypeError, match="bogus"):
        x.sum(axis=1, bogus=1)
    # functions PyTorch writes in Python take no spelling
    for call in (lambda: F.softmax(x, axis=1), lambda: F.relu(x=x), lambda: x.norm(axis=1),
                 lambda: ember.norm(x, axis=1), lambda: x.split(1, axis=0),
                 lambda: x.unflatten(axis=1, sizes=(3, 1)), lambda: ember.unique(x, axis=0)):
        with pytest.raises(TypeError, match="unexpected keyword argument"):
            call()
    # a parameter of another name has no spelling (flip's dims, transpose's dim0)
    with pytest.raises(TypeError):
        x.flip(axis=0)
    with pytest.raises(TypeError):
        x.transpose(axis0=0, axis1=1)


def test_one_form_wherever_an_op_is_bound():
    # the function and the method are one object where the method needs no refusal of out=
    assert ember.unsqueeze is ember.Tensor.unsqueeze and ember.det is ember.Tensor.det
    assert ember.sum is not ember.Tensor.sum  # the method refuses out=
    assert ember.sum.__wrapped__ is ember.Tensor.sum.__wrapped__


def test_tensor_methods_take_no_out():
    # PyTorch's methods have no out= (the functions do): np.sum(t) passes out=None
    x = ember.ones(3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        x.add(x, out=ember.empty(3))
    with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
        np.sum(x)
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        ember.Tensor.sum(x, dim=0, out=None)
    out = ember.empty(())
    assert ember.sum(x, 0, out=out) is out and out.item() == 3


def test_an_error_inside_the_op_is_raised_once_and_unchanged():
    x = ember.arange(6.0).reshape(2, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sum(axis=5)
    with pytest.raises(TypeError) as raised:
        ember.add(x1=x, x2="a")
    assert raised.value.__context__ is None


def _ember_namespaces():
    ember.ops.load_all()
    import ember.nn.functional as F
    return {"torch": ember, "Tensor": ember.Tensor, "nn.functional": F, "linalg": ember.linalg,
            "special": ember.special, "fft": ember.fft}


def _op_and_names(form):
    """(the op under a users' form, the keyword names its signature binds), or None."""
    op = form.__wrapped__ if hasattr(form, "__numpy_spellings__") else form
    if not isinstance(op, types.FunctionType):
        return None
    try:
        parameters = inspect.signature(op).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind == p.VAR_KEYWORD for p in parameters) and not hasattr(op, "__signature__"):
        return None  # sorts its keywords itself
    return op, {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def test_every_form_pickles_as_itself():
    forms = []
    for namespace in _ember_namespaces().values():
        for name in dir(namespace):
            value = inspect.getattr_static(namespace, name, None) \
                if isinstance(namespace, type) else getattr(namespace, name, None)
            if hasattr(value, "__numpy_spellings__"):
                forms.append(value)
    assert len(forms) > 500
    for form in forms:
        assert pickle.loads(pickle.dumps(form)) is form, form.__qualname__


def test_traced_programs_keep_the_spellings():
    class Net(ember.nn.Module):
        def forward(self, x):
            return x.sum(axis=1, keepdims=True) + ember.mean(x, axis=0)

    traced = ember.fx.symbolic_trace(Net())
    x = ember.arange(6.0).reshape(2, 3)
    assert ember.equal(traced(x), Net()(x))


# ---- beside PyTorch --------------------------------------------------------------------------

def _python_written(torch, kind, name):
    """Whether PyTorch's `kind.name` is a Python function (its parser never sees the call)."""
    if kind == "Tensor":
        return isinstance(inspect.getattr_static(torch.Tensor, name, None), types.FunctionType)
    owner = torch
    for part in () if kind == "torch" else kind.split("."):
        owner = getattr(owner, part)
    return isinstance(getattr(owner, name, None), types.FunctionType)


def test_the_forms_follow_pytorchs_parser(torch):
    """Every function and method taking one of the four names takes the spellings exactly
    where PyTorch binds it from C++."""
    wrong, checked = [], 0
    for kind, namespace in _ember_namespaces().items():
        theirs = torch.Tensor if kind == "Tensor" else \
            torch if kind == "torch" else getattr(torch, kind.split(".")[0]) \
            if "." not in kind else torch.nn.functional
        for name in dir(namespace):
            if name.startswith("_") or not hasattr(theirs, name):
                continue
            form = inspect.getattr_static(namespace, name, None) \
                if isinstance(namespace, type) else getattr(namespace, name, None)
            found = _op_and_names(form) if form is not None else None
            if found is None or not (found[1] & CANONICAL):
                continue
            checked += 1
            takes = bool(getattr(form, "__numpy_spellings__", None))
            if takes == _python_written(torch, kind, name):
                wrong.append(f"{kind}.{name}: {'takes' if takes else 'refuses'} the spellings")
    assert checked > 900
    assert not wrong, "\n".join(wrong)


def _calls(lib):
    x = lib.arange(6.0).reshape(2, 3)
    F = lib.nn.functional
    index = lib.zeros(2, 1, dtype=lib.long)
    return {
        "sum(axis, keepdims)": lambda: lib.sum(x, axis=0, keepdims=True),
        "t.std(keepdims)": lambda: x.std(1, keepdims=True),
        "t.median(axis)": lambda: x.median(axis=1),
        "t.topk(axis)": lambda: x.topk(1, axis=1),
        "t.cummax(axis)": lambda: x.cummax(axis=1),
        "var_mean(axis)": lambda: lib.var_mean(x, axis=1),
        "t.gather(axis)": lambda: x.gather(axis=1, index=index),
        "t.scatter(axis)": lambda: x.scatter(axis=1, index=index, value=1.0),
        "t.index_select(axis)": lambda: x.index_select(axis=1, index=index[0]),
        "take_along_dim(axis)": lambda: lib.take_along_dim(x, index, axis=1),
        "t.narrow(axis)": lambda: x.narrow(axis=1, start=0, length=1),
        "t.unbind(axis)": lambda: x.unbind(axis=0),
        "t.repeat_interleave(axis)": lambda: x.repeat_interleave(2, axis=1),
        "unsqueeze(axis)": lambda: lib.unsqueeze(x, axis=0),
        "t.squeeze(axis)": lambda: x[None].squeeze(axis=0),
        "cat(axis)": lambda: lib.cat([x, x], axis=1),
        "where(other)": lambda: lib.where(x > 1, x, other=-x),
        "matmul(x1, x2)": lambda: lib.matmul(x1=x, x2=x.T),
        "isclose(x, other)": lambda: lib.isclose(x=x, other=x),
        "allclose(x1)": lambda: lib.allclose(x1=x, other=x),
        "layer_norm(x)": lambda: lib.layer_norm(x=x, normalized_shape=(3,)),
        "F.linear(x)": lambda: F.linear(x=x, weight=x),
        "F.pairwise_distance(keepdims)": lambda: F.pairwise_distance(x, x, keepdims=True),
        "F.one_hot(x)": lambda: F.one_hot(x=lib.tensor([0, 2])),
        "special.softmax(axis)": lambda: lib.special.softmax(x, axis=1),
        "linalg.norm(axis)": lambda: lib.linalg.norm(x, axis=1),
        "Tensor.sum(t, axis)": lambda: lib.Tensor.sum(x, axis=0),
        "sum(1, axis)": lambda: lib.sum(x, 1, axis=0),
        "t.softmax(0, x)": lambda: x.softmax(0, x=1),
        "t.sum(x)": lambda: x.sum(x=x),
        "F.log_softmax(axis)": lambda: F.log_softmax(x, axis=1),
        "F.normalize(axis)": lambda: F.normalize(x, axis=1),
        "F.dropout(x)": lambda: F.dropout(x=x),
        "atleast_2d(x)": lambda: lib.atleast_2d(x=x),
        "roll(axis)": lambda: lib.roll(x, 1, axis=1),
    }


def _outcome(call):
    try:
        value = call()
    except Exception as error:  # noqa: BLE001 (the type is the outcome compared)
        return type(error).__name__
    if isinstance(value, tuple):
        return tuple(np.asarray(v.tolist()) for v in value)
    return np.asarray(value.tolist() if hasattr(value, "tolist") else value)


def test_calls_beside_pytorch(torch):
    theirs, ours = _calls(torch), _calls(ember)
    for name in theirs:
        want, got = _outcome(theirs[name]), _outcome(ours[name])
        if isinstance(want, str) or isinstance(got, str):
            assert got == want, name
        elif isinstance(want, tuple):
            assert all(np.allclose(g, w) for g, w in zip(got, want)), name
        else:
            assert np.allclose(got, want), name
