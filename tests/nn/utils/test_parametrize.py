"""nn.utils.parametrize and nn.utils.parametrizations against PyTorch: the swapped class and
its repr, state_dict keys, values and gradients through the parametrization, assignment
through right_inverse, caching, removal, and the errors of the common wrong calls."""
import copy

import numpy as np
import pytest

import ember
from ember import nn


def _same_weights(lib_pair, seed=0):
    """(ember module, torch module) built by `lib_pair(lib)` with the same weights (seeded:
    a test's power iterations must not depend on which tests ran before it)."""
    ember.manual_seed(seed)
    e_mod, t_mod = lib_pair(ember), lib_pair(__import__("torch"))
    import torch
    with torch.no_grad():
        for (k, t), (k2, e) in zip(t_mod.state_dict().items(), e_mod.state_dict().items()):
            assert k == k2
            t.copy_(torch.from_numpy(e.numpy().copy()))
    return e_mod, t_mod


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def _scale(lib):
    class Scale(lib.nn.Module):
        def forward(self, X):
            return 2 * X
    return Scale()


def _load_into_torch(e_mod, t_mod):
    """Give torch's module ember's state (the random parts: power-iteration vectors, the
    random completion of an orthogonal base), ember's generator not being torch's."""
    import torch
    t_mod.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy())
                           for k, v in e_mod.state_dict().items()})


def _grads(mod):
    return {n: p.grad.numpy().copy() for n, p in mod.named_parameters()}


def _run(lib, mod, x):
    out = mod(lib.tensor(x))
    out.pow(2).sum().backward()
    return out.detach().numpy()


def _check_parity(e_mod, t_mod, x, rtol=1e-5, atol=1e-6):
    import torch
    assert repr(e_mod) == repr(t_mod)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert [n for n, _ in e_mod.named_parameters()] == [n for n, _ in t_mod.named_parameters()]
    np.testing.assert_allclose(_run(ember, e_mod, x), _run(torch, t_mod, x), rtol=rtol,
                               atol=atol)
    ge, gt = _grads(e_mod), _grads(t_mod)
    for k in gt:
        np.testing.assert_allclose(ge[k], gt[k], rtol=rtol, atol=atol, err_msg=k)


def test_register_custom_parametrization_matches_torch(torch):
    e_mod, t_mod = _same_weights(lambda lib: lib.nn.Linear(4, 4))
    for lib, mod in ((ember, e_mod), (torch, t_mod)):
        lib.nn.utils.parametrize.register_parametrization(mod, "weight", _symmetric(lib))
        lib.nn.utils.parametrize.register_parametrization(mod, "weight", _scale(lib))
        assert type(mod).__name__ == "ParametrizedLinear"
        assert lib.nn.utils.parametrize.type_before_parametrizations(mod) is lib.nn.Linear
        assert lib.nn.utils.parametrize.is_parametrized(mod)
        assert lib.nn.utils.parametrize.is_parametrized(mod, "weight")
        assert not lib.nn.utils.parametrize.is_parametrized(mod, "bias")
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    _check_parity(e_mod, t_mod, x)
    np.testing.assert_allclose(e_mod.parametrizations.weight.original.detach().numpy(),
                               t_mod.parametrizations.weight.original.detach().numpy())


def test_assignment_goes_through_right_inverse(torch):
    vals = np.arange(16, dtype=np.float32).reshape(4, 4)
    results = []
    for lib in (ember, torch):
        mod = lib.nn.Linear(4, 4)
        original = mod.weight
        lib.nn.utils.parametrize.register_parametrization(mod, "weight", _symmetric(lib))
        assert mod.parametrizations.weight.original is original
        mod.weight = lib.tensor(vals)
        assert mod.parametrizations.weight.original is original
        results.append((original.detach().numpy().copy(), mod.weight.detach().numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)


def test_assignment_without_right_inverse_errors_as_torch(torch):
    for lib in (ember, torch):
        mod = lib.nn.Linear(2, 2)
        lib.nn.utils.parametrize.register_parametrization(mod, "weight", _scale(lib))
        with pytest.raises(RuntimeError, match="parametrization Scale does not implement "
                                               "right_inverse."):
            mod.weight = lib.zeros(2, 2)


def test_cached_computes_once(torch):
    for lib in (ember, torch):
        mod = lib.nn.Linear(3, 3)
        lib.nn.utils.parametrize.register_parametrization(mod, "weight", _symmetric(lib))
        assert mod.weight is not mod.weight
        with lib.nn.utils.parametrize.cached():
            w = mod.weight
            assert mod.weight is w
        assert mod.weight is not w


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations_matches_torch(torch, leave):
    e_mod, t_mod = _same_weights(lambda lib: lib.nn.Linear(3, 3))
    for lib, mod in ((ember, e_mod), (torch, t_mod)):
        lib.nn.utils.parametrize.register_parametrization(mod, "weight", _symmetric(lib))
        lib.nn.utils.parametrize.register_parametrization(mod, "bias", _scale(lib))
        lib.nn.utils.parametrize.remove_parametrizations(mod, "weight", leave_parametrized=leave)
        assert type(mod).__name__ == "ParametrizedLinear"
        lib.nn.utils.parametrize.remove_parametrizations(mod, "bias", leave_parametrized=leave)
        assert type(mod) is lib.nn.Linear
        assert not hasattr(mod, "parametrizations")
        assert isinstance(mod.weight, lib.nn.Parameter)
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    _check_parity(e_mod, t_mod, x)


def test_unsafe_allows_shape_change_and_errors_match_torch(torch):
    def make(lib):
        class Flat(lib.nn.Module):
            def forward(self, X):
                return X.reshape(-1)
        return Flat()
    for lib in (ember, torch):
        P = lib.nn.utils.parametrize
        mod = lib.nn.Linear(3, 2)
        with pytest.raises(ValueError, match="Registering a parametrization may not change the "
                                             "shape of the tensor, unless `unsafe` flag"):
            P.register_parametrization(mod, "weight", make(lib))
        assert type(mod) is lib.nn.Linear
        P.register_parametrization(mod, "weight", make(lib), unsafe=True)
        assert tuple(mod.weight.shape) == (6,)
        assert mod.parametrizations.weight.unsafe
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                             "parametrized element with name 'nothing'"):
            P.register_parametrization(mod, "nothing", make(lib))
        with pytest.raises(ValueError, match="does not have a parametrization on bias"):
            P.remove_parametrizations(mod, "bias")
        with pytest.raises(ValueError, match="ParametrizationList requires one or more "
                                             "modules."):
            P.ParametrizationList([], lib.zeros(2))


def test_parametrized_module_serialises_only_by_state_dict(torch):
    for lib in (ember, torch):
        mod = lib.nn.Linear(2, 2)
        lib.nn.utils.parametrize.register_parametrization(mod, "weight", _scale(lib))
        clone = copy.deepcopy(mod)
        assert type(clone).__name__ == "ParametrizedLinear"
        assert clone.parametrizations.weight.original is not mod.parametrizations.weight.original
        with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only "
                                               "supported through state_dict()"):
            mod.__getstate__()


def test_buffer_parametrization_and_transfer(torch):
    results = []
    for lib in (ember, torch):
        P = lib.nn.utils.parametrize
        mod = lib.nn.BatchNorm1d(3)
        P.register_parametrization(mod, "running_var", _scale(lib))
        keys = list(mod.state_dict())
        src = lib.nn.Linear(3, 3)
        P.register_parametrization(src, "weight", _symmetric(lib))
        dst = lib.nn.Linear(3, 3)
        P.transfer_parametrizations_and_params(src, dst)
        assert dst.parametrizations.weight.original is src.parametrizations.weight.original
        results.append(keys)
    assert results[0] == results[1]


# ---- parametrizations ---------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(torch, dim):
    e_mod, t_mod = _same_weights(lambda lib: lib.nn.Conv1d(2, 3, 3))
    for lib, mod in ((ember, e_mod), (torch, t_mod)):
        lib.nn.utils.parametrizations.weight_norm(mod, dim=dim)
    sd_e, sd_t = e_mod.state_dict(), t_mod.state_dict()
    for k in sd_t:
        assert tuple(sd_e[k].shape) == tuple(sd_t[k].shape), k
        np.testing.assert_allclose(sd_e[k].numpy(), sd_t[k].numpy(), rtol=1e-6, atol=1e-7)
    x = np.random.default_rng(2).standard_normal((2, 2, 6)).astype(np.float32)
    _check_parity(e_mod, t_mod, x)


def test_weight_norm_loads_hook_based_checkpoint(torch):
    t_old = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2))
    old_sd = {k: ember.tensor(v.detach().numpy()) for k, v in t_old.state_dict().items()}
    mod = ember.nn.utils.parametrizations.weight_norm(ember.nn.Linear(3, 2))
    mod.load_state_dict(old_sd)
    np.testing.assert_allclose(mod.weight.detach().numpy(), t_old.weight.detach().numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("make,kwargs", [
    (lambda lib: lib.nn.Linear(5, 4), {}),
    (lambda lib: lib.nn.Conv2d(2, 3, 3), dict(n_power_iterations=3)),
    (lambda lib: lib.nn.ConvTranspose2d(2, 3, 3), {}),
    (lambda lib: lib.nn.Linear(5, 4), dict(dim=1, eps=1e-6)),
])
def test_spectral_norm_matches_torch(torch, make, kwargs):
    e_mod, t_mod = _same_weights(make)
    for lib, mod in ((ember, e_mod), (torch, t_mod)):
        lib.manual_seed(3)
        lib.nn.utils.parametrizations.spectral_norm(mod, **kwargs)
    sd_e, sd_t = e_mod.state_dict(), t_mod.state_dict()
    assert list(sd_e) == list(sd_t)
    # 15 power iterations from a random start: u and v are the top singular pair (up to sign)
    sn = e_mod.parametrizations.weight[0]
    mat = sn._reshape_weight_to_matrix(e_mod.parametrizations.weight.original).detach().numpy()
    U, S, Vh = np.linalg.svd(mat.astype(np.float64))
    assert abs(abs(U[:, 0] @ sn._u.numpy()) - 1) < 2e-2
    assert abs(abs(Vh[0] @ sn._v.numpy()) - 1) < 2e-2
    _load_into_torch(e_mod, t_mod)
    shape = (2, 5) if isinstance(e_mod, nn.Linear) else (1, 2, 5, 5)
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    _check_parity(e_mod, t_mod, x, rtol=1e-4, atol=1e-5)
    e_mod.eval()
    t_mod.eval()
    np.testing.assert_allclose(e_mod.weight.detach().numpy(), t_mod.weight.detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_spectral_norm_errors_match_torch(torch):
    for lib in (ember, torch):
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                             r"of \[-2, 1\] but got 2\)"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), dim=2)
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but "
                                             "got n_power_iterations=0"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2),
                                                        n_power_iterations=0)
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), name="w")


@pytest.mark.parametrize("orth_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("trivial", [True, False])
def test_orthogonal_matches_torch(torch, orth_map, shape, trivial):
    e_mod, t_mod = _same_weights(lambda lib: lib.nn.Linear(shape[1], shape[0]).double())
    for lib, mod in ((ember, e_mod), (torch, t_mod)):
        lib.manual_seed(4)
        lib.nn.utils.parametrizations.orthogonal(mod, orthogonal_map=orth_map,
                                                 use_trivialization=trivial)
    sd_e, sd_t = e_mod.state_dict(), t_mod.state_dict()
    assert list(sd_e) == list(sd_t)
    for k in sd_t:
        if trivial and shape[0] != shape[1] and k.endswith("base"):
            # completed by random columns: only the first ones are determined
            k_cols = min(shape)
            sd_e[k], sd_t[k] = sd_e[k][:, :k_cols], sd_t[k][:, :k_cols]
        np.testing.assert_allclose(sd_e[k].numpy(), sd_t[k].numpy(), rtol=1e-7, atol=1e-9,
                                   err_msg=k)
    _load_into_torch(e_mod, t_mod)
    x = np.random.default_rng(4).standard_normal((2, shape[1]))
    _check_parity(e_mod, t_mod, x, rtol=1e-7, atol=1e-9)
    if trivial or (orth_map or ("matrix_exp" if shape[0] == shape[1] else "householder")) \
            == "householder":
        q = np.linalg.qr(np.random.default_rng(5).standard_normal(shape
                                                                  if shape[0] >= shape[1]
                                                                  else shape[::-1]))[0]
        q = q if shape[0] >= shape[1] else q.T
        for lib, mod in ((ember, e_mod), (torch, t_mod)):
            mod.weight = lib.tensor(q)
        np.testing.assert_allclose(e_mod.weight.detach().numpy(), t_mod.weight.detach().numpy(),
                                   rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(e_mod.weight.detach().numpy(), q, atol=1e-9)


def test_orthogonal_errors_match_torch(torch):
    for lib in (ember, torch):
        O = lib.nn.utils.parametrizations.orthogonal
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a "
                                             "tensor of 1 dimensions."):
            O(lib.nn.Linear(2, 2), "bias")
        with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", '
                                             '"cayley", "householder". Got: qr'):
            O(lib.nn.Linear(2, 2), orthogonal_map="qr")
        mod = O(lib.nn.Linear(2, 2), use_trivialization=False)
        with pytest.raises(NotImplementedError, match="It is not possible to assign to the "
                                                      "matrix exponential"):
            mod.weight = lib.eye(2)
        mod = O(lib.nn.Linear(2, 3))
        with pytest.raises(ValueError, match=r"Expected a matrix or batch of matrices of shape "
                                             r"torch.Size\(\[3, 2\]\). Got a tensor of shape "
                                             r"torch.Size\(\[2, 2\]\)."):
            mod.weight = lib.eye(2)
