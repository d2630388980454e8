"""A complex parameter is stepped as PyTorch steps it: as the real tensor of its (re, im)
pairs, each part its own coordinate with its own moments. (Complex arithmetic on the tensors
themselves gives other updates; ember's Adam left the imaginary parts where they were.)"""
import numpy as np
import pytest

import ember

CONFIGS = [
    ("Adam", {}), ("Adam", dict(amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", {}), ("Adam", dict(foreach=True)), ("RMSprop", dict(momentum=0.5, centered=True)),
    ("RMSprop", {}), ("Adagrad", dict(weight_decay=0.1)), ("Adadelta", {}), ("Adamax", {}),
    ("NAdam", {}), ("RAdam", {}), ("ASGD", {}), ("Rprop", {}), ("SGD", dict(momentum=0.9)),
]
_VALUES = [[1 + 1j, 2 - 1j, -0.5j], [0.25 - 2j, 3 + 0.5j, 1 + 0j]]
_GRADS = [[[0.1 - 0.2j, 0.3 + 0j, -1j], [0.5 + 0.5j, -0.2 + 0.1j, 0.3 - 0.3j]],
          [[-0.3 + 0.1j, 0.2 - 0.4j, 0.5j], [0.1 + 0j, 0.2 + 0.2j, -0.1 + 0.6j]]]


def _steps(lib, name, options, as_real=False):
    """Three steps from _VALUES with _GRADS; `as_real`: the same numbers as a float parameter
    of shape (2, 3, 2) (view_as_real's layout) instead of a complex one."""
    start = np.array(_VALUES, dtype=np.complex64)
    if as_real:
        start = start.view(np.float32).reshape(2, 3, 2)
    p = lib.nn.Parameter(lib.tensor(start))
    opt = getattr(lib.optim, name)([p], lr=0.1, **options)
    for grads in _GRADS * 2:
        g = np.array(grads, dtype=np.complex64)
        p.grad = lib.tensor(g.view(np.float32).reshape(2, 3, 2) if as_real else g)
        opt.step()
    out = p.detach().numpy()
    return out.view(np.float32).reshape(2, 3, 2) if not as_real else out


@pytest.mark.parametrize("name, options", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in
                                                        enumerate(CONFIGS)])
def test_a_complex_parameter_steps_as_its_real_view(name, options):
    np.testing.assert_allclose(_steps(ember, name, options),
                               _steps(ember, name, options, as_real=True), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name, options", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in
                                                        enumerate(CONFIGS)])
def test_a_complex_parameter_steps_as_in_torch(torch, name, options):
    np.testing.assert_allclose(_steps(ember, name, options), _steps(torch, name, options),
                               rtol=1e-5, atol=1e-6)


def test_complex_state_stays_complex_and_sparse_adam_refuses_complex():
    p = ember.nn.Parameter(ember.tensor([1 + 1j]))
    opt = ember.optim.Adam([p])
    p.grad = ember.tensor([0.5 - 0.5j])
    opt.step()
    assert opt.state[p]["exp_avg"].dtype == ember.complex64
    with pytest.raises(ValueError, match="SparseAdam does not support complex parameters"):
        ember.optim.SparseAdam([p])
