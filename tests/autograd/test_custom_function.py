"""Custom autograd Functions against PyTorch: forward/backward, needs_input_grad, double
backward, once_differentiable, mark_dirty, mark_non_differentiable, set_materialize_grads,
inputs returned as they are, and a wrong number of gradients."""
from ._compare import assert_same, assert_same_error


def _make_functions(T):
    class Exp(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            (r,) = ctx.saved_tensors
            return g * r

    class MulConst(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, y):
            ctx.k = k
            ctx.save_for_backward(x, y)
            return x * y * k

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            need = ctx.needs_input_grad
            return (g * y * ctx.k if need[0] else None, None,
                    g * x * ctx.k if need[2] else None)

    class Split(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    class Square(T.autograd.Function):  # setup_context style
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    return Exp, MulConst, Split, Square


def test_custom_function_basics(torch):
    def s(T):
        Exp, MulConst, Split, Square = _make_functions(T)
        x = T.tensor([0.5, 1.0], dtype=T.float64, requires_grad=True)
        y = T.tensor([2.0, 3.0], dtype=T.float64)
        e = Exp.apply(x)
        m = MulConst.apply(x, 4.0, y)
        a, b = Split.apply(x)
        q = Square.apply(x)
        names = [type(t.grad_fn).__name__ for t in (e, m, a, q)]
        (e.sum() + m.sum() + (a * b).sum() + q.sum()).backward()
        return names, x.grad, e.requires_grad, a.grad_fn is b.grad_fn
    assert_same(torch, s, approx=True)


def test_custom_function_needs_input_grad(torch):
    def s(T):
        seen = []

        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, k, b):
                return a * b

            @staticmethod
            def backward(ctx, g):
                seen.append(ctx.needs_input_grad)
                return g, None, g

        a = T.ones(2, requires_grad=True)
        b = T.ones(2)
        F.apply(a, 3, b).sum().backward()
        return seen
    assert_same(torch, s)


def test_custom_function_double_backward(torch):
    def s(T):
        _, _, _, Square = _make_functions(T)
        x = T.tensor([1.5, -2.0], dtype=T.float64, requires_grad=True)
        y = Square.apply(x) * x  # x**3
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (g2,) = T.autograd.grad(g.sum(), x)
        return g, g2
    assert_same(torch, s, approx=True)


def test_once_differentiable(torch):
    def s(T):
        class Cube(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            @T.autograd.function.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x * x * g

        x = T.tensor([2.0], requires_grad=True)
        (g,) = T.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        return g, g.requires_grad
    assert_same(torch, s)


def test_mark_dirty(torch):
    def s(T):
        class AddOne(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        a = T.tensor([1.0, 2.0], requires_grad=True)
        x = a * 1
        v = x._version
        y = AddOne.apply(x)
        info = (y is x, x._version - v, type(x.grad_fn).__name__)
        y.sum().backward()
        return info, a.grad, x
    assert_same(torch, s)


def test_mark_non_differentiable(torch):
    def s(T):
        class SortLike(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = T.tensor([1, 0])
                out = x * 1
                ctx.mark_non_differentiable(idx)
                return out, idx

            @staticmethod
            def backward(ctx, g, gi):
                return g

        x = T.tensor([1.0, 2.0], requires_grad=True)
        out, idx = SortLike.apply(x)
        out.sum().backward()
        return out.requires_grad, idx.requires_grad, x.grad
    assert_same(torch, s)


def test_set_materialize_grads(torch):
    def s(T):
        seen = []

        class Two(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, materialize):
                ctx.set_materialize_grads(materialize)
                return x * 1, x * 2

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1 is None, g2 is None))
                return (g1 if g1 is not None else T.zeros(2)) + \
                    (2 * g2 if g2 is not None else T.zeros(2)), None

        for flag in (True, False):
            x = T.tensor([1.0, 2.0], requires_grad=True)
            a, b = Two.apply(x, flag)
            a.sum().backward()
        return seen
    assert_same(torch, s)


def test_function_input_returned_as_is(torch):
    def s(T):
        class Identity(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 5

        x = T.tensor([1.0], requires_grad=True)
        y = Identity.apply(x)
        y.sum().backward()
        return y is x, x.grad
    assert_same(torch, s)


def test_function_wrong_gradient_count(torch):
    def s(T):
        class Bad(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y

            @staticmethod
            def backward(ctx, g):
                return g

        x = T.ones(1, requires_grad=True)
        Bad.apply(x, T.ones(1)).sum().backward()
    assert_same_error(torch, s)
