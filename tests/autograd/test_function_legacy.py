"""torch.autograd.function's FunctionMeta, InplaceFunction, NestedIOFunction, and the grad
mode switches set_multithreading_enabled / enforce_grad_layout_policy."""
import warnings

import pytest

import ember
from ember.autograd.function import Function, FunctionMeta, InplaceFunction, NestedIOFunction


def test_function_meta_is_functions_metaclass(torch):
    assert type(Function) is FunctionMeta
    assert type(torch.autograd.Function) is torch.autograd.function.FunctionMeta
    assert ember.autograd.NestedIOFunction is NestedIOFunction


def _inplace(lib):
    class Double(lib.autograd.function.InplaceFunction):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn = Double(inplace=True)
    x = lib.ones(2, requires_grad=True)
    Double.apply(x).sum().backward()
    return fn.inplace, len(caught), x.grad.tolist(), Double.apply(x).grad_fn.name()


def test_inplace_function_matches_torch(torch):
    assert _inplace(ember) == _inplace(torch)


def test_nested_io_function_runs_nested_inputs_and_gradients():
    class Mix(NestedIOFunction):
        def forward_extended(self, a, bs):
            self.save_for_backward(a, (bs[0],))
            return a * 2, (bs[0] * a,)

        def backward_extended(self, ga, gb):
            a, (b,) = self.saved_tensors
            return ga * 2 + gb[0] * b, (gb[0] * a,)
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        fn = Mix()
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = ember.tensor([3.0, 4.0], requires_grad=True)
    doubled, (product,) = fn(a, (b,))
    assert doubled.tolist() == [2.0, 4.0] and product.tolist() == [3.0, 8.0]
    assert doubled.grad_fn.name() == "MixBackward"
    (doubled.sum() + product.sum()).backward()
    assert a.grad.tolist() == [5.0, 6.0] and b.grad.tolist() == [1.0, 2.0]


def _layouts(lib):
    p = lib.empty(2, 3, 4).permute(2, 0, 1).requires_grad_()
    strides = []
    (p * 2).sum().backward()
    strides.append(p.grad.stride())
    p.grad = None
    with lib.autograd.enforce_grad_layout_policy(False):
        (p * 2).sum().backward()  # a gradient the engine owns keeps its layout
        strides.append(p.grad.stride())
        p.grad = None
        p.backward(lib.ones(4, 2, 3))  # the caller's gradient is copied, laid out as p
        strides.append(p.grad.stride())
    p.grad = None
    lib.autograd.grad_mode.enforce_grad_layout_policy(False)  # a plain call switches ...

    @lib.autograd.grad_mode.enforce_grad_layout_policy(True)
    def enforced():
        (p * 2).sum().backward()
        return p.grad.stride()
    strides.append(enforced())
    p.grad = None
    (p * 2).sum().backward()  # ... and the decorator restored it after the call
    strides.append(p.grad.stride())
    lib.autograd.grad_mode.enforce_grad_layout_policy(True)
    return strides


def test_enforce_grad_layout_policy_matches_torch(torch):
    assert _layouts(ember) == _layouts(torch)


def test_set_multithreading_enabled_gives_the_same_gradients(torch):
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.set_multithreading_enabled(False):
            (x * x).sum().backward()
        assert x.grad.tolist() == [2.0, 4.0]
        switch = lib.autograd.grad_mode.set_multithreading_enabled(True)
        assert switch.clone().mode is True


def _error(call):
    with pytest.raises(Exception) as info:
        call()
    return type(info.value), str(info.value)


def test_gradient_count_and_legacy_calls_as_pytorch(torch):
    """A backward may return extra gradients only as trailing Nones; calling an instance
    (the pre-1.3 style) is PyTorch's RuntimeError."""
    def functions(lib):
        def make(grads):
            class Double(lib.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x * 2

                @staticmethod
                def backward(ctx, g):
                    return grads(g)
            return Double
        return make(lambda g: (g, None)), make(lambda g: (g, lib.ones(1))), make(lambda g: g)
    results = []
    for lib in (torch, ember):
        x = lib.ones(3, requires_grad=True)
        trailing_none, extra, plain = functions(lib)
        trailing_none.apply(x).sum().backward()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            results.append((x.grad.tolist(), _error(lambda: extra.apply(x).sum().backward()),
                            _error(lambda: plain()(x))))
    assert results[0] == results[1]
