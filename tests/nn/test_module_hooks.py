"""nn.Module full backward hooks and pre hooks against PyTorch: the grad_input and
grad_output tuples they see (one place per argument / output; None or zeros where PyTorch
puts them), replacements they return, and PyTorch's errors and warning."""
import warnings

import pytest

import ember


def _fmt(grads):
    return tuple(None if g is None else (tuple(g.shape), [round(v, 5) for v in g.flatten().tolist()])
                 for g in grads)


def _linear(T):
    m = T.nn.Linear(3, 2)
    with T.no_grad():
        m.weight.copy_(T.arange(6.0).reshape(2, 3) / 10)
        m.bias.fill_(0.5)
    return m


class _Two:
    """forward(a, k, b) -> (a * b * k, a + 1): two tensors and a number in, two out."""

    @staticmethod
    def make(T):
        class Two(T.nn.Module):
            def forward(self, a, k, b):
                return a * b * k, a + 1
        return Two()


class _Mixed:
    """A parameter, a number between tensor inputs, a number and a parameter-only output."""

    @staticmethod
    def make(T):
        class Mixed(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = T.nn.Parameter(T.full((3,), 1.5))

            def forward(self, a, k, b):
                return a * self.w * k + b, 5, self.w * 2
        return Mixed()


def _run(T, make, inputs, loss, hook=None, pre=None):
    """Forward and backward with logging hooks; what the hooks saw, the input and parameter
    gradients (or the error), and PyTorch's warning text."""
    log = []
    m = make(T)

    def full_hook(mod, gi, go):
        log.append(("hook", _fmt(gi), _fmt(go)))
        return hook(T, gi, go) if hook else None

    def pre_hook(mod, go):
        log.append(("pre", _fmt(go)))
        return pre(T, go) if pre else None
    m.register_full_backward_hook(full_hook)
    m.register_full_backward_pre_hook(pre_hook)
    args = inputs(T)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            loss(m(*args)).backward()
        except RuntimeError as exc:
            return log, ("RuntimeError", str(exc))
    grads = [None if not isinstance(a, T.Tensor) or a.grad is None else _fmt((a.grad,))
             for a in args]
    params = [None if p.grad is None else _fmt((p.grad,)) for p in m.parameters()]
    notes = [str(w.message) for w in seen if "Full backward hook" in str(w.message)]
    return log, grads, params, notes


def _x(T, requires_grad=True):
    return T.ones(2, 3, requires_grad=requires_grad)


def _two_args(b_grad):
    return lambda T: (_x(T), 2.0, T.full((2, 3), 2.0, requires_grad=b_grad))


CASES = {
    "linear": (_linear, lambda T: (_x(T),), lambda o: o.sum()),
    "linear input needs no grad": (_linear, lambda T: (_x(T, False),), lambda o: o.sum()),
    "two inputs": (_Two.make, _two_args(True), lambda o: o[0].sum() + 3 * o[1].sum()),
    "second input needs no grad": (_Two.make, _two_args(False), lambda o: o[0].sum() + 3 * o[1].sum()),
    "one output used": (_Two.make, _two_args(True), lambda o: o[0].sum()),
    "mixed": (_Mixed.make, lambda T: (_x(T), 2.0, T.ones(2, 3)), lambda o: o[0].sum()),
    "mixed, only the parameter output": (_Mixed.make, lambda T: (_x(T), 2.0, T.ones(2, 3)),
                                         lambda o: o[2].sum()),
    "mixed, no input needs grad": (_Mixed.make, lambda T: (_x(T, False), 2.0, T.ones(2, 3)),
                                   lambda o: o[0].sum()),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hook_arguments(torch, case):
    make, inputs, loss = CASES[case]
    assert _run(ember, make, inputs, loss) == _run(torch, make, inputs, loss)


REPLACEMENTS = {
    "grad_input scaled": (lambda T, gi, go: (gi[0] * 10,), None),
    "grad_output scaled": (None, lambda T, go: (go[0] * 10,)),
    "grad_output as a list": (None, lambda T, go: [go[0] * 3]),
    "too many grad_inputs": (lambda T, gi, go: (gi[0], gi[0]), None),
    "too many grad_outputs": (None, lambda T, go: (go[0], go[0])),
}


@pytest.mark.parametrize("case", list(REPLACEMENTS))
def test_hook_replacements(torch, case):
    hook, pre = REPLACEMENTS[case]
    run = lambda T: _run(T, _linear, lambda T: (_x(T),), lambda o: o.sum(), hook, pre)  # noqa: E731
    assert run(ember) == run(torch)


def test_hook_replaces_one_of_two_inputs(torch):
    run = lambda T: _run(T, _Two.make, _two_args(True), lambda o: o[0].sum(),  # noqa: E731
                         hook=lambda T, gi, go: (gi[0] * 0, None, gi[2]))
    assert run(ember) == run(torch)
