"""Optimizer's state-dict hooks and `profile_hook_step`, against PyTorch: the order hooks run
in (`prepend`), what their return values replace, and handle removal."""
import ember


def _optimizer(lib):
    p = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = lib.ones(2)
    opt.step()
    return opt


def _trace(lib):
    opt, calls = _optimizer(lib), []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre-a"))
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre-b"), prepend=True)

    def tag(o, sd):
        calls.append("post-tag")
        sd["tag"] = 1

    def replace(o, sd):
        calls.append(("post-replace", sorted(sd)))
        return {**sd, "replaced": True}
    opt.register_state_dict_post_hook(replace)
    opt.register_state_dict_post_hook(tag, prepend=True)
    sd = opt.state_dict()
    keys = sorted(sd)

    def change_lr(o, loaded):
        calls.append("load-pre")
        loaded = dict(loaded)
        loaded["param_groups"] = [dict(g, lr=0.5) for g in loaded["param_groups"]]
        return loaded
    handle = opt.register_load_state_dict_pre_hook(change_lr)
    opt.register_load_state_dict_post_hook(lambda o: calls.append(("load-post", o.param_groups[0]["lr"])))
    opt.register_load_state_dict_post_hook(lambda o: calls.append("load-post-first"), prepend=True)
    opt.load_state_dict({"state": sd["state"], "param_groups": sd["param_groups"]})
    handle.remove()
    opt.load_state_dict({"state": sd["state"], "param_groups": sd["param_groups"]})
    return calls, keys, opt.param_groups[0]["lr"]


def test_state_dict_hooks_as_pytorch(torch):
    assert _trace(ember) == _trace(torch)


def _profiled_step(lib, decorate):
    calls = []

    def step(self, closure=None, scale=1):
        calls.append(("step", scale))
        return "done"
    if decorate:  # wrapped by hand, and marked so the optimizer does not wrap it again
        step = lib.optim.Optimizer.profile_hook_step(step)
        step.hooked = True
    # else: a user's own step, which the optimizer wraps when first made
    Counting = type("Counting", (lib.optim.Optimizer,), {"step": step})
    p = lib.nn.Parameter(lib.ones(2))
    opt = Counting([p], {"lr": 0.1})
    opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"scale": 3}))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", kwargs)))
    with lib.autograd.profiler.profile() as prof:
        out = opt.step()
    names = [e.name for e in prof.function_events if e.name.startswith("Optimizer.step#")]
    return out, calls, names


def test_profile_hook_step_as_pytorch(torch):
    for decorate in (True, False):
        assert _profiled_step(ember, decorate) == _profiled_step(torch, decorate)
