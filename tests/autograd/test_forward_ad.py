"""torch.autograd.forward_ad: dual levels, make_dual / unpack_dual, tangents through ops,
in-place writes and views, custom Functions' jvp, and the errors, against PyTorch."""
import numpy as np
import pytest

import ember


def _both(torch):
    return (ember, torch)


def _scenarios(lib):
    """Tangents of a run of ops on dual tensors, as nested lists (None where none)."""
    fw = lib.autograd.forward_ad
    x = lib.tensor([0.5, 1.0, -2.0])
    t = lib.tensor([1.0, 2.0, 3.0])
    got = {}

    def tan(name, value):
        tangent = fw.unpack_dual(value).tangent
        got[name] = None if tangent is None else tangent.tolist()
    with fw.dual_level() as level:
        got["level"] = level
        d = fw.make_dual(x, t)
        tan("pointwise", d.sin() * 2 + d.exp() / 3 - d.pow(2))
        tan("dot", d @ d)
        tan("reductions", lib.stack([d.sum(), d.mean(), d.max(), d.norm()]))
        tan("view", d[1:])
        tan("broadcast", (d.unsqueeze(1) * lib.ones(3, 2)).t())
        tan("softmax", lib.nn.functional.softmax(d.reshape(1, 3), 1))
        with lib.no_grad():
            tan("no_grad", d.tanh())
        z = d.clone()
        z.mul_(2)
        tan("inplace", z)
        w = lib.zeros(3)
        w.copy_(d)
        tan("copy_", w)
        w = lib.zeros(3)
        w[1:] = d[1:]
        tan("setitem", w)
        y = d.clone()
        row = y[1:]
        row.add_(d[:2])
        tan("base_after_view_write", y)
        tan("view_after_base_write", row)
        tan("argmax", d.argmax())
        tan("compare", d > 0)
        tan("plain", x)
        a, b = d.unbind(0)[:2]
        tan("unbind", a + b)
        m = lib.nn.Linear(3, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]]))
            m.bias.zero_()
        tan("linear", m(d))
    tan("after_exit", d)
    return got


def test_tangents_match_torch(torch):
    mine, theirs = _scenarios(ember), _scenarios(torch)
    assert mine.keys() == theirs.keys()
    for key in mine:
        if theirs[key] is None or isinstance(theirs[key], int):
            assert mine[key] == theirs[key], key
        else:
            np.testing.assert_allclose(mine[key], theirs[key], rtol=1e-5, atol=1e-6,
                                       err_msg=key)


def test_printing_matches_torch(torch):
    for lib in _both(torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([0.5, -1.0]))
            s = lib.tensor([3.0], requires_grad=True)
            out = (fw.make_dual(s, lib.ones(1)) * 2).sum()
            texts = (repr(d), repr(out.detach()), repr(fw.unpack_dual(d)))
        if lib is ember:
            mine = texts
        else:
            assert mine == texts


def test_reverse_over_forward_matches_torch(torch):
    def run(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor([0.5, 1.0, -2.0], requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, lib.tensor([1.0, 2.0, 3.0]))
            _, tangent = fw.unpack_dual((d * d.sin()).sum())
            tangent.backward()
        return tangent.item(), x.grad.tolist()
    mine, theirs = run(ember), run(torch)
    assert mine[0] == pytest.approx(theirs[0])
    assert mine[1] == pytest.approx(theirs[1])


def test_make_dual_errors_match_torch(torch):
    for lib in _both(torch):
        fw = lib.autograd.forward_ad
        x = lib.randn(3)
        with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
            fw.make_dual(x, lib.ones(3))
        with fw.dual_level():
            with pytest.raises(RuntimeError, match=r"Tensor is of size \[3\] while the given "
                                                   r"forward gradient is of size \[4\]"):
                fw.make_dual(x, lib.ones(4))
            with pytest.raises(ValueError, match="Expected tangent to be floating point or "
                                                 "complex, but got: torch.int64"):
                fw.make_dual(x, lib.ones(3, dtype=lib.int64))
            with pytest.raises(ValueError, match="Expected primal to be floating point"):
                fw.make_dual(lib.arange(3), lib.ones(3))
            with pytest.raises(RuntimeError, match="Invalid level given to _make_dual"):
                fw.make_dual(x, lib.ones(3), level=3)
            with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
                fw.enter_dual_level()
            with pytest.raises(RuntimeError, match="not the last one that was created"):
                fw.exit_dual_level(level=5)
        with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
            fw.exit_dual_level()
        assert fw.unpack_dual(x) == (x, None) and type(fw.unpack_dual(x)).__name__ == \
            "UnpackedDualTensor"


def test_inference_mode_carries_no_tangent(torch):
    for lib in _both(torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.randn(3), lib.ones(3))
            with lib.inference_mode():
                y = d * 2
            assert fw.unpack_dual(y).tangent is None


def test_dual_level_as_decorator_and_enter_exit():
    fw = ember.autograd.forward_ad

    @fw.dual_level()
    def tangent_of_square(x, t):
        return fw.unpack_dual(fw.make_dual(x, t) ** 2).tangent
    assert tangent_of_square(ember.tensor([3.0]), ember.tensor([1.0])).tolist() == [6.0]
    assert fw.enter_dual_level() == 0
    fw.exit_dual_level()


def _custom(lib):
    fw = lib.autograd.forward_ad
    seen = []

    class SinScaled(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_forward(x)
            ctx.save_for_backward(x)
            ctx.k = k
            return x.sin() * k, x * 2

        @staticmethod
        def jvp(ctx, tx, tk):
            (x,) = ctx.saved_tensors
            seen.append((tk, len(ctx.saved_tensors)))
            return tx * x.cos() * ctx.k, tx * 2

        @staticmethod
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            return g1 * x.cos() * ctx.k + 2 * g2, None

    class NoJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class WrongCount(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3, x * 1

        @staticmethod
        def jvp(ctx, t):
            return t

    xr = lib.tensor([0.1, 0.2], requires_grad=True)
    with fw.dual_level():
        d = fw.make_dual(xr, lib.tensor([1.0, -1.0]))
        a, b = SinScaled.apply(d, 2.0)
        tangents = fw.unpack_dual(a).tangent.tolist(), fw.unpack_dual(b).tangent.tolist()
        (a.sum() + b.sum()).backward()
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            NoJvp.apply(d)
        with pytest.raises(RuntimeError, match=r"invalid number of forward gradients \(expected "
                                               r"2 but got 1\)"):
            WrongCount.apply(d)
    return tangents, xr.grad.tolist(), seen


def test_custom_function_jvp_matches_torch(torch):
    mine, theirs = _custom(ember), _custom(torch)
    assert mine[0][0] == pytest.approx(theirs[0][0]) and mine[0][1] == theirs[0][1]
    assert mine[1] == pytest.approx(theirs[1])
    assert mine[2] == theirs[2]


def _jvp_of_kept_output(lib):
    """The forward-AD tutorial's Function: jvp multiplies by the output the forward kept on
    ctx; the jvp runs once that output is in the graph, so the tangent is differentiable."""
    fw = lib.autograd.forward_ad

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = lib.exp(x)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, t):
            seen.append(type(ctx.result.grad_fn).__name__)
            return t * ctx.result

        @staticmethod
        def backward(ctx, g):
            return g * ctx.result

    seen = []
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    with fw.dual_level():
        out = Exp.apply(fw.make_dual(x, lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)))
        tangent = fw.unpack_dual(out).tangent
    node = repr(out.grad_fn).split(" at ")[0]
    tangent.sum().backward()  # through the output: d/dx (t * exp(x)) = t * exp(x)
    return seen, tangent.requires_grad, tangent.tolist(), x.grad.tolist(), node


def test_custom_function_jvp_sees_outputs_in_the_graph(torch):
    mine, theirs = _jvp_of_kept_output(ember), _jvp_of_kept_output(torch)
    assert mine[0] == theirs[0] == ["ExpBackward"]
    assert mine[1] is theirs[1] is True
    assert mine[2] == pytest.approx(theirs[2]) and mine[3] == pytest.approx(theirs[3])
    assert mine[4] == theirs[4] == "<torch.autograd.function.ExpBackward object"


def test_tangent_through_an_op_whose_saved_result_requires_grad(torch):
    """tanh saves its result; with a weight that requires grad that result is in the reverse
    graph, and computing the tangent walks back through tanh's own node (it failed with an
    AttributeError before)."""
    def run(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=lib.float64)
        w = lib.tensor([[1.0, 0.5], [-0.5, 2.0]], dtype=lib.float64, requires_grad=True)
        with fw.dual_level():
            y = (fw.make_dual(x, lib.ones_like(x)) @ w).tanh()
            tangent = fw.unpack_dual(y).tangent
            tangent.sum().backward()
        return tangent.flatten().tolist() + w.grad.flatten().tolist()
    assert run(ember) == pytest.approx(run(torch))
