"""torch.export's handling of the model's state: every parameter and buffer is lifted, in the
model's order (as PyTorch's graph signature lists them), a non-persistent buffer goes with the
constants, exporting a training-mode BatchNorm leaves the model as it was while the program
updates the running statistics, and a declared Dim's range is checked on the example."""
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.export import Dim, export


def _cnn_class(nn, F):
    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn, self.fc = nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), \
                nn.Linear(4, 2)
            self.unused = nn.Parameter(F.pad(self.fc.bias.detach(), (0, 1)))
            self.register_buffer("shift", self.fc.bias.detach().clone() * 0, persistent=False)

        def forward(self, x):
            y = F.relu(self.bn(self.conv(x))).mean((2, 3))
            return self.fc(y) + self.shift
    return CNN


def _specs(ep):
    return [(s.kind.name, s.arg.name, s.target, s.persistent)
            for s in ep.graph_signature.input_specs]


def test_input_specs_match_pytorchs_for_a_cnn_with_batchnorm(torch):
    import numpy as np
    theirs_model = _cnn_class(torch.nn, torch.nn.functional)().eval()
    ours_model = _cnn_class(nn, F)().eval()
    ours_model.load_state_dict({k: ember.tensor(v.detach().numpy())
                                for k, v in theirs_model.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype("float32")
    theirs = torch.export.export(theirs_model, (torch.from_numpy(x),))
    ours = export(ours_model, (ember.tensor(x),))
    assert _specs(ours) == _specs(theirs)
    assert set(ours.state_dict) == set(theirs.state_dict)
    assert set(ours.constants) == set(theirs.constants) == {"shift"}
    other = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype("float32")
    want = theirs.module()(torch.from_numpy(other)).detach().numpy()
    got = ours.module()(ember.tensor(other)).detach().numpy()
    assert np.allclose(got, want, atol=1e-5)


def test_exporting_a_training_batchnorm_leaves_the_model_and_the_program_updates_stats():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)).train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    x = ember.randn(2, 3, 6, 6)
    ep = export(model, (x,))
    for key, value in model.state_dict().items():
        assert ember.equal(value, before[key]), key
    out = ep.module()(x)
    assert ember.allclose(out, model(x), atol=1e-5)  # both now take one step of statistics
    assert int(ep.state_dict["1.num_batches_tracked"]) == 2
    assert ember.allclose(ep.state_dict["1.running_mean"], model[1].running_mean)


def test_a_dim_range_is_checked_on_the_example():
    model = nn.Linear(3, 2)
    ok = export(model, (ember.randn(4, 3),), dynamic_shapes=({0: Dim("b", min=2, max=8)},))
    assert ok.module()(ember.randn(6, 3)).shape == (6, 2)
    with pytest.raises(RuntimeError, match=r"4 not in range \[5, int_oo\]"):
        export(model, (ember.randn(4, 3),), dynamic_shapes=({0: Dim("b", min=5)},))
    with pytest.raises(RuntimeError, match=r"4 not in range \[2, 3\]"):
        export(model, (ember.randn(4, 3),), dynamic_shapes={"input": {0: Dim("b", max=3)}})


def test_module_is_a_graph_module_holding_the_state_again(torch):
    import numpy as np
    theirs = torch.export.export(_cnn_class(torch.nn, torch.nn.functional)().eval(),
                                 (torch.randn(2, 3, 8, 8),)).module()
    model = _cnn_class(nn, F)().eval()
    ours = export(model, (ember.randn(2, 3, 8, 8),)).module()
    assert isinstance(ours, ember.fx.GraphModule)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    x = ember.randn(2, 3, 8, 8)
    assert np.allclose(ours(x).detach().numpy(), model(x).detach().numpy(), atol=1e-5)
    for program, lib in ((ours, ember), (theirs, torch)):  # the batch was exported static
        with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] == 2"):
            program(lib.randn(3, 3, 8, 8))
    ours(x).sum().backward()  # the parameters train where they now live
    assert ours.get_parameter("fc.weight").grad is not None
