"""Tensor.register_post_accumulate_grad_hook: called with the leaf after backward accumulated
its .grad (after the tensor's own hooks), never by autograd.grad; errors as PyTorch."""
import pytest

import ember


def _script(lib):
    log = []
    x = lib.ones(3, requires_grad=True)
    h = x.register_post_accumulate_grad_hook(lambda t: log.append(("x", t.grad.tolist())))
    x.register_hook(lambda g: log.append(("pre", g.tolist())))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    h.remove()
    (x * 1).sum().backward()
    # autograd.grad accumulates nothing: no call
    z = lib.ones(2, requires_grad=True)
    z.register_post_accumulate_grad_hook(lambda t: log.append("z"))
    lib.autograd.grad((z * 2).sum(), z)
    # backward(inputs=...) accumulates into the leaf: a call
    (z * 4).sum().backward(inputs=[z])
    # a parameter updated in the hook (optimizer-in-backward)
    p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))

    def step(t):
        with lib.no_grad():
            t.add_(t.grad, alpha=-0.5)
        t.grad = None
    p.register_post_accumulate_grad_hook(step)
    (p * p).sum().backward()
    log.append(("p", p.tolist(), p.grad))
    # two leaves in one graph, each hook once
    a, b = lib.ones(1, requires_grad=True), lib.ones(1, requires_grad=True)
    a.register_post_accumulate_grad_hook(lambda t: log.append("a"))
    b.register_post_accumulate_grad_hook(lambda t: log.append("b"))
    (a * b + a).sum().backward()
    return log


def test_post_accumulate_grad_hook_matches_torch(torch):
    ours, theirs = _script(ember), _script(torch)
    assert ours[:-2] == theirs[:-2]
    assert sorted(ours[-2:]) == sorted(theirs[-2:]) == ["a", "b"]


def test_post_accumulate_grad_hook_errors_match_torch(torch):
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered "
                                               "on non-leaf tensors"):
            (x * 2).register_post_accumulate_grad_hook(lambda t: None)
        with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                               "require gradient"):
            lib.ones(2).register_post_accumulate_grad_hook(lambda t: None)
        h = x.register_post_accumulate_grad_hook(lambda t: 5)
        with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
            (x * 2).sum().backward()
        h.remove()
        x.register_post_accumulate_grad_hook(lambda t: t.grad.mul_(0))
        with pytest.raises(RuntimeError, match="Tensor post accumulate grad hooks should return "
                                               "None."):
            (x * 2).sum().backward()


def test_a_hook_may_hand_the_leaf_back(torch):
    # PyTorch's own example: an optimizer step in the hook, returning `p.add_(...)` (the leaf)
    def run(lib):
        v = lib.tensor([0.0, 0.0, 0.0], requires_grad=True)
        v.register_post_accumulate_grad_hook(lambda p: p.add_(p.grad, alpha=-0.01))
        v.backward(lib.tensor([1.0, 2.0, 3.0]))
        return v.tolist()
    assert run(ember) == run(torch)
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: t.detach())  # another tensor
        with pytest.raises(RuntimeError, match="should return None"):
            (x * 2).sum().backward()


def test_grad_dtype(torch):
    def run(lib):
        out = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        out.append(str(x.grad_dtype))
        x.grad_dtype = lib.float16  # incoming gradients are cast to it
        (x * 2).sum().backward()
        out += [str(x.grad_dtype), str(x.grad.dtype), x.grad.tolist()]
        x.grad_dtype = None  # any dtype may be assigned
        x.grad = lib.ones(2, dtype=lib.float64)
        out += [x.grad_dtype, str(x.grad.dtype), str(lib.tensor([1.0]).grad_dtype)]
        y = lib.tensor([1.0, 2.0], requires_grad=True)
        y.grad_dtype = lib.float64
        for bad in (lambda: setattr(y, "grad", lib.ones(2)),
                    lambda: setattr(x * 2, "grad_dtype", lib.float16),
                    lambda: (x * 2).grad_dtype):
            with pytest.raises(RuntimeError) as raised:
                bad()
            out.append(str(raised.value).split(".")[0])
        return out
    assert run(ember) == run(torch)
