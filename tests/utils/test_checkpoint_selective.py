"""Selective activation checkpointing (create_selective_checkpoint_contexts): the ops the
policy hears of (named as torch.ops.aten names them), gradients equal to plain backward,
recomputations that really skip the ops whose outputs were kept, and PyTorch's errors."""
import functools

import numpy as np
import pytest

import ember
from ember.ops import _aten
from ember.ops.conv import _graph_ops as ember_conv  # where the graph ops read conv_forward
from ember.ops._graph import Node
from ember.utils.checkpoint import (CheckpointPolicy, SAC_IGNORED_OPS, checkpoint,
                                    create_selective_checkpoint_contexts)


def _run(lib, fn, *args, policy, **options):
    """checkpoint(fn, *args) under `policy` with library `lib` (ember or torch)."""
    sac = lib.utils.checkpoint
    return sac.checkpoint(fn, *args, use_reentrant=False, context_fn=functools.partial(
        sac.create_selective_checkpoint_contexts, policy, **options))


def _recording_policy(lib, seen, save=()):
    def policy(ctx, op, *args, **kwargs):
        seen.append(str(op))
        return (lib.utils.checkpoint.CheckpointPolicy.MUST_SAVE if str(op) in save
                else lib.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE)
    return policy


# ---- torch.ops.aten ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["mm.default", "add.Tensor", "_softmax.default", "t.default"])
def test_aten_overloads_are_named_as_torch(torch, name):
    op_name, overload = name.split(".")
    mine = getattr(getattr(ember.ops.aten, op_name), overload)
    theirs = getattr(getattr(torch.ops.aten, op_name), overload)
    assert (repr(mine), str(mine), mine.name(), mine.__name__, mine.namespace) == \
        (repr(theirs), str(theirs), theirs.name(), theirs.__name__, theirs.namespace)
    packet, their_packet = mine.overloadpacket, theirs.overloadpacket
    assert (repr(packet), str(packet), packet.__name__) == \
        (repr(their_packet), str(their_packet), their_packet.__name__)
    assert set(packet.overloads()) <= set(their_packet.overloads())
    assert mine.overloadpacket is getattr(ember.ops.aten, op_name)
    assert repr(ember.ops.aten) == "'torch.ops.aten'"


def test_missing_aten_names_raise_as_torch(torch):
    messages = []
    for lib in (ember, torch):
        with pytest.raises(AttributeError) as error:
            lib.ops.aten.no_such_op
        with pytest.raises(AttributeError) as overload_error:
            lib.ops.aten.mm.no_such_overload
        messages.append((str(error.value), str(overload_error.value)))
    assert messages[0] == messages[1]


def test_aten_overloads_compute_their_op(torch):
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (4, 5), (3, 5)))
    for name, args in (("mm.default", (a, b)), ("addmm.default", (c, a, b)),
                       ("relu.default", (a,)), ("_softmax.default", (a, 1, False)),
                       ("gelu.default", (a,)), ("sigmoid.default", (a,)),
                       ("t.default", (a,)), ("add.Tensor", (a, a))):
        op_name, overload = name.split(".")
        results = []
        for lib in (ember, torch):
            op = getattr(getattr(lib.ops.aten, op_name), overload)
            results.append(op(*[lib.tensor(x) if isinstance(x, np.ndarray) else x
                                for x in args]).numpy())
        np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)
    out, mean, rstd = ember.ops.aten.native_layer_norm.default(ember.tensor(c), [5], None,
                                                                None, 1e-5)
    want = torch.ops.aten.native_layer_norm.default(torch.tensor(c), [5], None, None, 1e-5)
    for mine, theirs in zip((out, mean, rstd), want):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ember.ops.aten.mm(ember.tensor(a), ember.tensor(b)).numpy(),
                                  ember.mm(ember.tensor(a), ember.tensor(b)).numpy())


def _aten_cases(rng):
    a, b = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (4, 5)))
    x4, w4 = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 5, 5), (4, 3, 3, 3)))
    b3, c3 = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 4), (2, 4, 5)))
    v = rng.standard_normal(4).astype(np.float32)
    return {
        "convolution.default": (x4, w4, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
        "bmm.default": (b3, c3), "baddbmm.default": (np.zeros((2, 3, 5), np.float32), b3, c3),
        "mv.default": (a, v), "dot.default": (v, v), "threshold.default": (a, 0.1, 2.0),
        "leaky_relu.default": (a, 0.2), "silu.default": (a,), "mish.default": (a,),
        "_log_softmax.default": (a, 0, False),
        "native_batch_norm.default": (x4, None, None, None, None, True, 0.1, 1e-5),
        "native_group_norm.default": (x4, None, None, 2, 3, 25, 1, 1e-5),
        "embedding.default": (b, np.array([0, 2, 1])), "rsub.Tensor": (a, a),
        "mul.Tensor": (a, 2.0), "pow.Tensor_Scalar": (a, 2), "where.self": (a > 0, a, -a),
        "sum.dim_IntList": (a, [1]), "mean.dim": (a, [0], True), "amax.default": (a, [1]),
        "transpose.int": (b3, 0, 2), "permute.default": (b3, [2, 0, 1]),
        "view.default": (a, [12]), "_unsafe_view.default": (a, [2, 6]),
        "expand.default": (v[:1], [3]), "squeeze.dim": (a[None], 0), "select.int": (a, 1, 2),
        "slice.Tensor": (a, 1, 1, 3), "cat.default": ([a, a], 0), "split.Tensor": (a, 2, 1),
        "size.default": (a,), "stride.default": (a,), "is_contiguous.default": (a,),
        "scaled_dot_product_attention.default": (b3, b3, b3),
        "_scaled_dot_product_flash_attention_for_cpu.default": (x4, x4, x4, 0.0, True),
        "max.default": (a,), "max.dim": (a, 1), "min.dim": (a, 0, True),
    }


def _values(result):
    if isinstance(result, (tuple, list)):
        return [_values(r) for r in result]
    return result.detach().numpy() if hasattr(result, "detach") else result


def test_aten_overloads_take_torchs_arguments(torch):
    for name, args in _aten_cases(np.random.default_rng(1)).items():
        op_name, overload = name.split(".")
        results = []
        for lib in (ember, torch):
            op = getattr(getattr(lib.ops.aten, op_name), overload)
            results.append(_values(op(*[
                lib.tensor(x) if isinstance(x, np.ndarray) else
                [lib.tensor(y) for y in x] if isinstance(x, list) and
                isinstance(x[0], np.ndarray) else x for x in args])))
        mine, theirs = results
        if not isinstance(mine, list):
            mine, theirs = [mine], [theirs]
        for m, t in zip(mine, theirs):
            np.testing.assert_allclose(np.asarray(m, dtype=float), np.asarray(t, dtype=float),
                                       rtol=1e-4, atol=1e-5, err_msg=name)


def _node_classes():
    found, stack = set(), [Node]
    while stack:
        for sub in stack.pop().__subclasses__():
            found.add(sub.__name__)
            stack.append(sub)
    return found


def test_every_table_entry_runs_an_ember_op_and_names_graph_nodes_of_ember():
    ember.ops.load_all()  # every op family loaded, so every node class exists
    nodes = _node_classes()
    for qualified, _, node_names in _aten.TABLE:
        namespace, op_name, overload = qualified.split(".")
        assert callable(getattr(getattr(getattr(ember.ops, namespace), op_name),
                                overload)._resolved()), qualified
        for node in node_names:
            assert node in nodes, (qualified, node)


def test_ignored_ops_are_torchs_as_far_as_ember_has_them(torch):
    import torch.utils.checkpoint as torch_checkpoint
    theirs = {str(op) for op in torch_checkpoint.SAC_IGNORED_OPS}
    mine = {str(op) for op in SAC_IGNORED_OPS}
    assert mine <= theirs and "aten.detach.default" in mine and "prim.device.default" in mine
    # the ones left out are metadata queries ember's tensors do not answer
    assert theirs - mine <= {"aten.is_non_overlapping_and_dense.default",
                             "aten.is_strides_like_format.default"}


# ---- which ops the policy hears of ---------------------------------------------------------
def _mlp(lib):
    lib.manual_seed(0)
    lin1, lin2 = lib.nn.Linear(4, 5), lib.nn.Linear(5, 3)
    return lambda x: lin2(lib.nn.functional.gelu(lin1(x))).relu()


def test_the_policy_hears_of_the_ops_torch_names_for_an_mlp(torch):
    lists, contexts = [], []
    for lib in (ember, torch):
        seen = []
        policy = _recording_policy(lib, seen)

        def spying(ctx, op, *args, **kwargs):
            contexts.append((ctx.is_recompute, type(ctx.op_output).__name__))
            return policy(ctx, op, *args, **kwargs)

        x = lib.randn(2, 4, requires_grad=True)
        out = _run(lib, _mlp(lib), x, policy=spying)
        forward = list(seen)
        out.sum().backward()
        assert seen == forward  # the policy is asked in the forward only
        lists.append(seen)
    assert lists[0] == lists[1] == ["aten.t.default", "aten.addmm.default", "aten.gelu.default",
                                    "aten.t.default", "aten.addmm.default", "aten.relu.default"]
    assert set(contexts) == {(False, "Tensor")}


_HEAVY = {"aten.convolution.default", "aten.bmm.default", "aten.mm.default",
          "aten._softmax.default", "aten.native_layer_norm.default", "aten.sigmoid.default",
          "aten.tanh.default", "aten.silu.default", "aten.mean.default"}


def _block(lib):
    lib.manual_seed(0)
    conv, norm = lib.nn.Conv2d(2, 3, 3), lib.nn.LayerNorm(4)
    F = lib.nn.functional

    def block(x, q):
        h = conv(x).sigmoid()
        a = norm(q)
        s = lib.softmax(a @ a.transpose(1, 2), -1)
        s = F.dropout(s, 0.2, True)
        return h.sum() + (s @ a).tanh().sum() + F.silu(a).mean()
    return block


def test_the_policy_hears_of_convolutions_products_and_norms_as_torch(torch):
    lists = []
    for lib in (ember, torch):
        seen = []
        lib.manual_seed(1)
        x, q = lib.randn(1, 2, 5, 5, requires_grad=True), lib.randn(2, 3, 4, requires_grad=True)
        _run(lib, _block(lib), x, q, policy=_recording_policy(lib, seen)).backward()
        lists.append([name for name in seen if name in _HEAVY])
    assert lists[0] == lists[1]


# ---- gradients and recomputation ----------------------------------------------------------
def _dropout_mlp():
    ember.manual_seed(0)
    lin1, lin2 = ember.nn.Linear(6, 8), ember.nn.Linear(8, 4)
    params = [lin1.weight, lin1.bias, lin2.weight, lin2.bias]

    def fn(x):
        h = ember.nn.functional.dropout(ember.nn.functional.gelu(lin1(x)), 0.3, True)
        return (lin2(h) @ ember.ones(4, 4)).relu()
    return fn, params


def _grads_and_products(monkeypatch, run, x, params):
    """The gradients of run(x).sum() and how many matrix products the whole step ran."""
    count = [0]
    matmul = np.matmul

    def counting(*args, **kwargs):
        count[0] += 1
        return matmul(*args, **kwargs)
    monkeypatch.setattr(np, "matmul", counting)
    for t in [x] + params:
        t.grad = None
    ember.manual_seed(3)
    run(x).sum().backward()
    monkeypatch.setattr(np, "matmul", matmul)
    return [t.grad.clone() for t in [x] + params], count[0]


@pytest.mark.parametrize("saved, recomputed_products", [
    (["addmm", "mm"], 0), (["addmm"], 1), ([], 3), (True, 0)])
def test_saved_products_are_not_recomputed_and_gradients_equal_plain(monkeypatch, saved,
                                                                     recomputed_products):
    fn, params = _dropout_mlp()
    x = ember.randn(5, 6, requires_grad=True)
    plain, plain_products = _grads_and_products(monkeypatch, fn, x, params)
    if saved is True:  # a policy answering True (MUST_SAVE) for every op
        policy = lambda ctx, op, *args, **kwargs: True  # noqa: E731
    else:
        policy = [getattr(ember.ops.aten, name).default for name in saved]
    got, products = _grads_and_products(
        monkeypatch, lambda t: _run(ember, fn, t, policy=policy), x, params)
    assert products == plain_products + recomputed_products
    for mine, want in zip(got, plain):  # dropout drew the same mask in the recomputation
        np.testing.assert_array_equal(mine.numpy(), want.numpy())


def test_a_saved_convolution_is_not_recomputed(monkeypatch):
    ember.manual_seed(0)
    conv = ember.nn.Conv2d(2, 3, 3)
    x = ember.randn(2, 2, 6, 6, requires_grad=True)
    calls = [0]
    forward = ember_conv.conv_forward

    def counting(*args, **kwargs):
        calls[0] += 1
        return forward(*args, **kwargs)
    monkeypatch.setattr(ember_conv, "conv_forward", counting)
    results = []
    for run in (lambda t: conv(t).tanh(),
                lambda t: _run(ember, lambda u: conv(u).tanh(), t,
                               policy=[ember.ops.aten.convolution.default]),
                lambda t: _run(ember, lambda u: conv(u).tanh(), t, policy=[])):
        calls[0] = 0
        conv.zero_grad()
        run(x).sum().backward()
        results.append((calls[0], conv.weight.grad.clone()))
    (plain, plain_grad), (saved, saved_grad), (recomputed, _) = results
    assert saved == plain and recomputed == plain + 1
    np.testing.assert_array_equal(saved_grad.numpy(), plain_grad.numpy())


def test_ops_the_policy_runs_are_not_the_regions():
    fn, params = _dropout_mlp()
    x = ember.randn(5, 6, requires_grad=True)

    def policy(ctx, op, *args, **kwargs):  # looks at an input with ops of its own
        return bool((args[0] * 2).sum() > -1e9)
    grads = []
    for each in ([], policy):
        ember.manual_seed(3)
        grads.append(ember.autograd.grad(_run(ember, fn, x, policy=each).sum(), x)[0])
    plain, got = grads
    np.testing.assert_allclose(got.numpy(), plain.numpy(), rtol=1e-6, atol=1e-7)


def test_a_policy_answer_that_is_no_policy_recomputes_as_torch():
    fn, params = _dropout_mlp()
    x = ember.randn(5, 6, requires_grad=True)
    _run(ember, fn, x, policy=lambda ctx, op, *args, **kwargs: 1).sum().backward()
    assert x.grad is not None


# ---- errors --------------------------------------------------------------------------------
def _error(call):
    with pytest.raises(Exception) as info:
        call()
    return type(info.value).__name__, str(info.value)


def _mutating(lib):
    def fn(x):
        a = x @ x
        a.add_(1)
        return a.sin()
    return fn


@pytest.mark.parametrize("case", ["packet", "not_an_op", "not_callable", "reentrant",
                                  "debug", "mutated", "second_backward", "other_op"])
def test_errors_match_torch(torch, case):
    import torch.utils.checkpoint  # noqa: F401
    errors = []
    for lib in (ember, torch):
        sac = lib.utils.checkpoint
        make = sac.create_selective_checkpoint_contexts
        y = lib.randn(3, 3, requires_grad=True)
        save_mm = [lib.ops.aten.mm.default]
        if case == "packet":
            call = lambda: make([lib.ops.aten.mm])  # noqa: E731
        elif case == "not_an_op":
            call = lambda: make([lib.ops.aten.mm.default, 1])  # noqa: E731
        elif case == "not_callable":
            call = lambda: make(3)  # noqa: E731
        elif case == "reentrant":
            call = lambda: sac.checkpoint(  # noqa: E731
                lambda t: t.sin(), y, use_reentrant=True,
                context_fn=functools.partial(make, save_mm))
        elif case == "debug":
            call = lambda: sac.checkpoint(  # noqa: E731
                lambda t: t.sin(), y, use_reentrant=False, debug=True,
                context_fn=functools.partial(make, save_mm))
        elif case == "mutated":
            call = lambda: _run(lib, _mutating(lib), y, policy=save_mm).sum().backward()  # noqa
        elif case == "other_op":  # the recomputation runs an op the forward did not
            calls = []

            def changing(t):
                calls.append(1)
                return (t @ t).sin() if len(calls) == 1 else (t * t).sin()
            call = lambda: _run(lib, changing, y, policy=save_mm).sum().backward()  # noqa
        else:
            out = _run(lib, lambda t: (t @ t).sin(), y, policy=save_mm).sum()
            out.backward(retain_graph=True)
            call = out.backward
        errors.append(_error(call))
    assert errors[0] == errors[1]


def test_a_mutated_cache_entry_is_allowed_when_asked(torch):
    grads = []
    for lib in (ember, torch):
        y = lib.tensor(np.arange(9.0).reshape(3, 3) / 10, requires_grad=True)
        _run(lib, _mutating(lib), y, policy=[lib.ops.aten.mm.default],
             allow_cache_entry_mutation=True).sum().backward()
        grads.append(y.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


def test_the_region_is_closed_after_forward_and_backward():
    from ember._state import selective_checkpoint, selective_checkpoint_anywhere
    fn, _ = _dropout_mlp()
    x = ember.randn(5, 6, requires_grad=True)
    out = _run(ember, fn, x, policy=[ember.ops.aten.mm.default])
    assert selective_checkpoint.mode is None and selective_checkpoint_anywhere.count == 0
    out.sum().backward()
    assert selective_checkpoint.mode is None and selective_checkpoint_anywhere.count == 0
    policy = CheckpointPolicy.MUST_SAVE
    assert create_selective_checkpoint_contexts(lambda *a, **k: policy)[0] is not None
    assert checkpoint is ember.utils.checkpoint.checkpoint


def test_torch_names_resolve_to_ember_under_compat():
    import subprocess
    import sys
    code = ("import ember.compat; ember.compat.install(); import functools, torch\n"
            "from torch.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts\n"
            "x = torch.ones(2, 2, requires_grad=True)\n"
            "ctx = functools.partial(create_selective_checkpoint_contexts, "
            "[torch.ops.aten.mm.default])\n"
            "checkpoint(lambda t: (t @ t).sin(), x, use_reentrant=False, "
            "context_fn=ctx).sum().backward()\n"
            "print(torch.ops.aten.mm.default, type(x).__module__.split('.')[0], "
            "x.grad.shape == (2, 2))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["aten.mm.default", "ember", "True"]


def test_a_kept_custom_operator_is_not_run_again_as_in_torch(torch):
    """A custom operator (torch.library.custom_op) is one op to the policy, as in PyTorch:
    kept, its kernel does not run in the recomputation."""
    import torch.utils.checkpoint  # noqa: F401
    results, grads = [], []
    for lib in (ember, torch):
        calls = [0]

        @lib.library.custom_op("sac_selective_test::scale", mutates_args=())
        def scale(x: lib.Tensor, s: float) -> lib.Tensor:
            calls[0] += 1
            return x * s

        def setup_context(ctx, inputs, output):
            ctx.s = inputs[1]
        scale.register_autograd(lambda ctx, g: (g * ctx.s, None), setup_context=setup_context)
        op = lib.ops.sac_selective_test.scale.default
        outcome = [repr(op), str(op), op.name()]
        for policy in ("function", [op], []):
            seen = []
            if policy == "function":
                policy = _recording_policy(lib, seen, save=("sac_selective_test.scale.default",))
            calls[0] = 0
            x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
            out = _run(lib, lambda t: lib.ops.sac_selective_test.scale(t.sin(), 2.0).cos(), x,
                       policy=policy)
            out.sum().backward()
            outcome.append((calls[0], seen))
            grads.append(x.grad.numpy())
        results.append(outcome)
    assert results[0] == results[1]
    assert [calls for calls, _ in results[0][3:]] == [1, 1, 2]
    for mine, theirs in zip(grads[:3], grads[3:]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5)
