"""ember.library: custom operators with schemas inferred as PyTorch infers them, kernels per
device, autograd formulas giving PyTorch's gradients (the same script run by PyTorch and
through ember.compat), torch.ops namespaces, Library/define/impl, and opcheck."""
import itertools
import os
import subprocess
import sys
import typing

import numpy as np
import pytest

import ember
from ember import Tensor, library

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_names = itertools.count()


def _unique(stem):
    """Operators are global, as in PyTorch: each test defines its own names."""
    return f"embertest::{stem}_{next(_names)}"


SCRIPT = '''
import torch
from torch import Tensor

@torch.library.custom_op("demo::scaled_sin", mutates_args=())
def scaled_sin(x: Tensor, scale: float, *, shift: float = 0.0) -> Tensor:
    return (x * scale).sin() + shift

@scaled_sin.register_fake
def _(x, scale, *, shift=0.0):
    return torch.empty_like(x)

def setup_context(ctx, inputs, keyword_only_inputs, output):
    x, scale = inputs
    ctx.save_for_backward(x)
    ctx.scale = scale
    ctx.shift = keyword_only_inputs["shift"]

def backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * ctx.scale * (x * ctx.scale).cos(), None

torch.library.register_autograd("demo::scaled_sin", backward, setup_context=setup_context)

@torch.library.custom_op("demo::pair", mutates_args=())
def pair(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    return a * b, a + b

def pair_backward(ctx, g1, g2):
    a, b = ctx.saved_tensors
    return g1 * b + g2, g1 * a + g2

pair.register_autograd(pair_backward,
                       setup_context=lambda ctx, inputs, output: ctx.save_for_backward(*inputs))

@torch.library.custom_op("demo::weighted", mutates_args=())
def weighted(xs: list[Tensor], w: Tensor) -> list[Tensor]:
    return [x * w for x in xs]

def weighted_setup(ctx, inputs, output):
    xs, w = inputs
    ctx.save_for_backward(w, *xs)

def weighted_backward(ctx, grads):
    w, *xs = ctx.saved_tensors
    return [g * w for g in grads], sum((g * x).sum() for g, x in zip(grads, xs))

weighted.register_autograd(weighted_backward, setup_context=weighted_setup)
xs = [torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0], requires_grad=True)]
w = torch.tensor(2.0, requires_grad=True)
for _ in range(2):
    out = weighted(xs, w)
    out[0].sum().backward()
    print(type(out).__name__, xs[0].grad.tolist(), xs[1].grad.tolist(), w.grad.item())

x = torch.linspace(-1.0, 1.0, 5, dtype=torch.float64, requires_grad=True)
y = torch.ops.demo.scaled_sin(x, 2.0, shift=0.5)
m, s = pair(y, x)
(m.sum() + (s * s).sum()).backward()
print(type(y.grad_fn).__name__)
print(torch.ops.demo.scaled_sin.default._schema)
print(scaled_sin)
for v in (y.detach(), x.grad):
    print(" ".join(f"{t:.12f}" for t in v.tolist()))
print(torch.library.opcheck(scaled_sin, (x, 2.0), {"shift": 0.5},
                            test_utils=("test_schema", "test_autograd_registration",
                                        "test_faketensor")))
'''


def test_same_script_same_gradients_as_torch(torch, tmp_path):
    script = tmp_path / "custom_op.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT)
    theirs = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                            text=True, timeout=300)
    ours = subprocess.run([sys.executable, "-m", "ember.compat", str(script)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout


def test_infer_schema_matches_torch(torch):
    import torch.library

    def make(T, dtype_type):
        def f(x: T, y: typing.Optional[T], n: int = 2, *, s: float = 1.0,
              flag: bool = False, name: str = "a", dims: list[int] = None,
              dt: typing.Optional[dtype_type] = None) -> tuple[T, T]:
            pass

        def g(xs: list[T], ys: typing.Sequence[typing.Optional[T]],
              z: typing.Union[int, float, bool], w: typing.Optional[list[float]] = None) -> int:
            pass

        def h(x: T, out: T) -> None:
            pass
        return f, g, h
    for ours, theirs in zip(make(Tensor, ember.dtype), make(torch.Tensor, torch.dtype)):
        for mutates in ((), "unknown", [n for n in ("out", "xs") if n in
                                        ours.__code__.co_varnames[:ours.__code__.co_argcount]]):
            assert library.infer_schema(ours, mutates_args=mutates) == \
                torch.library.infer_schema(theirs, mutates_args=mutates)


def test_schema_errors():
    with pytest.raises(ValueError, match="Parameter x must have a type annotation"):
        library.custom_op(_unique("a"), lambda x: x, mutates_args=())

    def bad_return(x: Tensor) -> dict:
        pass
    with pytest.raises(ValueError, match="Return has unsupported type"):
        library.infer_schema(bad_return, mutates_args=())

    def f(x: Tensor) -> Tensor:
        return x.clone()
    with pytest.raises(ValueError, match=r"\{'y'\} in mutates_args were not found"):
        library.custom_op(_unique("b"), f, mutates_args={"y"})
    with pytest.raises(ValueError, match="qualified operator name"):
        library.custom_op("nocolons", f, mutates_args=())
    with pytest.raises(TypeError, match="mutates_args"):
        library.custom_op(_unique("c"), f)
    with pytest.raises(ValueError, match="prim is a reserved namespace"):
        library.custom_op("prim::f", f, mutates_args=())


def test_namespace_taken_by_ember_ops_warns():
    def f(x: Tensor) -> Tensor:
        return x + 1
    name = _unique("clash").split("::")[1]
    with pytest.warns(UserWarning, match="ember.ops.linalg is ember's own"):
        op = library.custom_op(f"linalg::{name}", f, mutates_args=())
    assert op(ember.zeros(1)).tolist() == [1.0]  # the operator itself works
    assert not hasattr(ember.ops.linalg, name)


def test_no_autograd_formula_fails_at_backward():
    op = library.custom_op(_unique("plain"), lambda x: x * 2, mutates_args=(),
                           schema="(Tensor x) -> Tensor")
    x = ember.ones(3, requires_grad=True)
    y = op(x)
    assert y.requires_grad
    name = op._qualname.replace("::", ".")
    with pytest.raises(RuntimeError, match=f"Trying to backward through {name}.default but "
                                           "no autograd formula was registered"):
        y.sum().backward()
    assert op(x.detach()).requires_grad is False


def test_output_must_not_alias_an_input():
    def same(x: Tensor) -> Tensor:
        return x
    op = library.custom_op(_unique("alias"), same, mutates_args=())
    with pytest.raises(RuntimeError, match="must not also be an input"):
        op(ember.ones(2))


def test_kernels_per_device(fake_cuda):
    def cpu_impl(x: Tensor) -> Tensor:
        return x + 1
    op = library.custom_op(_unique("dev"), cpu_impl, mutates_args=(), device_types="cpu")
    assert op(ember.zeros(2)).tolist() == [1.0, 1.0]
    with pytest.raises(NotImplementedError, match="no kernel is registered for device type "
                                                  "'cuda'"):
        op(ember.zeros(2, device="cuda"))

    @op.register_kernel("cuda")
    def _(x):
        return x + 2
    assert op(ember.zeros(2, device="cuda")).cpu().tolist() == [2.0, 2.0]
    assert library.get_kernel(op, "CPU") is cpu_impl


def test_mutating_op_and_ops_namespace():
    def add_into(x: Tensor, out: Tensor) -> None:
        out.add_(x)
    qualname = _unique("inplace")
    op = library.custom_op(qualname, add_into, mutates_args={"out"})
    ns, name = qualname.split("::")
    out = ember.zeros(3)
    assert getattr(getattr(ember.ops, ns), name)(ember.ones(3), out) is None
    assert out.tolist() == [1.0, 1.0, 1.0]
    assert op._schema == "(Tensor x, Tensor(a1!) out) -> ()"
    assert repr(getattr(ember.ops, ns)) == f"'torch.ops.{ns}'"
    with pytest.raises(AttributeError):
        ember.ops.no_such_namespace_here  # noqa: B018
    assert library.opcheck(op, (ember.ones(3), ember.zeros(3))) == {
        "test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
        "test_faketensor": "SUCCESS", "test_aot_dispatch_dynamic": "SUCCESS"}


def test_library_define_and_impl():
    ns = _unique("lib").split("::")[1]
    lib = library.Library(ns, "DEF")
    assert lib.define("twice(Tensor x, int n=2) -> Tensor") == "twice"
    lib.impl("twice", lambda x, n=2: x * n, "CompositeImplicitAutograd")
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = getattr(ember.ops, ns).twice(x)
    assert y.tolist() == [2.0, 4.0]
    assert getattr(ember.ops, ns).twice(x, 3).tolist() == [3.0, 6.0]
    library.define(f"{ns}::half", "(Tensor x) -> Tensor")
    library.impl(f"{ns}::half", "cpu", lambda x: x / 2)
    assert getattr(ember.ops, ns).half(ember.ones(1)).tolist() == [0.5]
    with pytest.raises(ValueError, match="Unsupported kind"):
        library.Library(ns, "BAD")
    with pytest.raises(RuntimeError, match="multiple times"):
        library.define(f"{ns}::half", "(Tensor x) -> Tensor")


def test_opcheck_finds_problems():
    def sneaky(x: Tensor) -> Tensor:
        x.mul_(2)
        return x.clone()
    op = library.custom_op(_unique("sneaky"), sneaky, mutates_args=())
    x = ember.ones(2)
    with pytest.raises(library.OpCheckError, match="mutated its argument 'x'"):
        library.opcheck(op, (x,), test_utils="test_schema")
    assert x.tolist() == [1.0, 1.0]  # opcheck works on copies

    def square(x: Tensor) -> Tensor:
        return x * x
    op = library.custom_op(_unique("square"), square, mutates_args=())
    results = library.opcheck(op, (ember.ones(2, requires_grad=True),),
                              raise_exception=False)
    assert results["test_schema"] == "SUCCESS"
    assert "register_autograd" in str(results["test_autograd_registration"])
    assert "register_fake" in str(results["test_faketensor"])
    op.register_fake(lambda x: ember.empty(3))
    with pytest.raises(library.OpCheckError, match=r"fake implementation is \(3,\)"):
        library.opcheck(op, (ember.ones(2),), test_utils=["test_faketensor"])
    with pytest.raises(ValueError, match="test_utils must be a subset"):
        library.opcheck(op, (ember.ones(2),), test_utils=["test_nothing"])


def test_tensor_list_inputs_and_outputs_take_gradients():
    def weighted(xs: list[Tensor], w: Tensor) -> list[Tensor]:
        return [x * w for x in xs]
    op = library.custom_op(_unique("listed"), weighted, mutates_args=())

    def setup(ctx, inputs, output):
        xs, w = inputs
        assert isinstance(xs, list) and isinstance(output, list)
        ctx.save_for_backward(w, *xs)

    def backward(ctx, grads):
        w, *xs = ctx.saved_tensors
        return [g * w for g in grads], sum((g * x).sum() for g, x in zip(grads, xs))
    op.register_autograd(backward, setup_context=setup)
    xs = [ember.tensor([1.0, 2.0], requires_grad=True), ember.tensor([3.0], requires_grad=True)]
    w = ember.tensor(2.0, requires_grad=True)
    out = op(xs, w)
    assert isinstance(out, list) and [o.tolist() for o in out] == [[2.0, 4.0], [6.0]]
    (out[0].sum() + 10 * out[1].sum()).backward()
    assert xs[0].grad.tolist() == [2.0, 2.0] and xs[1].grad.tolist() == [20.0]
    assert w.grad.item() == 1.0 + 2.0 + 30.0


def test_backward_agrees_with_gradcheck():
    def cube(x: Tensor) -> Tensor:
        return x ** 3
    op = library.custom_op(_unique("cube"), cube, mutates_args=())
    op.register_autograd(lambda ctx, g: g * 3 * ctx.saved_tensors[0] ** 2,
                         setup_context=lambda ctx, inputs, output: ctx.save_for_backward(
                             inputs[0]))
    x = ember.tensor(np.linspace(-1, 1, 4), requires_grad=True)
    assert ember.autograd.gradcheck(op, (x,))


def test_tags_are_pytorchs(torch):
    assert [(m.name, m.value) for m in ember.Tag] == \
        [(m.name, m.value) for m in torch.Tag.__members__.values()]
    assert ember.library.Tag is ember.Tag and str(ember.Tag.pointwise) == "Tag.pointwise"
    assert ember.JITException is ember.jit.Error


def test_register_autocast_casts_eligible_inputs_and_turns_autocast_off(torch):
    seen = {}
    for lib, name in ((ember, "emberlib_ac::mix"), (torch, "torchlib_ac::mix")):
        @lib.library.custom_op(name, mutates_args=())
        def mix(x: lib.Tensor, y: lib.Tensor, n: lib.Tensor) -> lib.Tensor:
            seen.setdefault(lib.__name__, []).append(
                (str(x.dtype), str(y.dtype), str(n.dtype), lib.is_autocast_enabled("cpu")))
            return x + y.to(x.dtype) + n.to(x.dtype)
        lib.library.register_autocast(name, "cpu", lib.bfloat16)
        args = (lib.ones(2), lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.int64))
        with lib.autocast("cpu", dtype=lib.bfloat16):
            inside = mix(*args)
        outside = mix(*args)
        seen[lib.__name__].append((str(inside.dtype), str(outside.dtype)))
    assert seen["ember"] == seen["torch"]
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        ember.library.register_autocast("emberlib_ac::mix", "tpu", ember.float16)


def test_register_vmap_keeps_the_rule_and_vmap_agrees():
    @ember.library.custom_op("emberlib_vm::double", mutates_args=())
    def double(x: ember.Tensor) -> ember.Tensor:
        return x * 2

    def rule(info, in_dims, x):
        return x * 2, in_dims[0]
    assert ember.library.register_vmap("emberlib_vm::double", rule) is rule
    assert ember.vmap(double)(ember.arange(6.0).reshape(3, 2)).tolist() == \
        [[0.0, 2.0], [4.0, 6.0], [8.0, 10.0]]
    with pytest.raises(TypeError, match="Expected vmap rule to be a function"):
        ember.library.register_vmap("emberlib_vm::double", 3)
