"""Anomaly detection: a NaN gradient raises PyTorch's error naming the node."""
import warnings

import pytest

import ember


def _nan_backward(m):
    x = m.tensor([0.0, 1.0], requires_grad=True)
    y = (x.sqrt() * 0).sum()  # 0 * inf = nan in SqrtBackward0
    y.backward()
    return x.grad


def test_nan_in_backward_raises_naming_the_node():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = ember.autograd.detect_anomaly()
    with mode:
        assert ember.is_anomaly_enabled()
        with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in "
                                               r"its 0th output\."):
            _nan_backward(ember)
    assert not ember.is_anomaly_enabled()
    assert bool(_nan_backward(ember).isnan().any())  # off: the NaN passes through silently


def test_matches_pytorch_message():
    torch = pytest.importorskip("torch")
    messages = []
    for m in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly():
                with pytest.raises(RuntimeError) as err:
                    _nan_backward(m)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_set_detect_anomaly_function_context_and_check_nan():
    ember.autograd.set_detect_anomaly(True)
    try:
        assert ember.is_anomaly_enabled() and ember.is_anomaly_check_nan_enabled()
    finally:
        ember.autograd.set_detect_anomaly(False)
    assert not ember.is_anomaly_enabled()
    with ember.autograd.set_detect_anomaly(True, check_nan=False):
        assert ember.is_anomaly_enabled() and not ember.is_anomaly_check_nan_enabled()
        _nan_backward(ember)  # check_nan=False: no error
    assert not ember.is_anomaly_enabled() and ember.is_anomaly_check_nan_enabled()

    @ember.autograd.set_detect_anomaly(True)
    def run():
        return ember.is_anomaly_enabled()
    ember.autograd.set_detect_anomaly(False)
    assert run() and not ember.is_anomaly_enabled()


def _failing_step(lib):
    def layer(x):
        return x.sqrt()  # the forward call the report must name
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    return (layer(x) * 0).sum()


def test_a_failing_backward_reports_where_its_forward_ran(torch):
    # PyTorch's anomaly mode records each node's forward stack and, when the node's backward
    # fails, warns "Error detected in <node>" with that stack before raising
    reports = []
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                loss = _failing_step(lib)
                node = loss.grad_fn.next_functions[0][0].next_functions[0][0]
                assert node.name() == "SqrtBackward0" and "traceback_" in node.metadata
                with pytest.raises(RuntimeError, match="'SqrtBackward0' returned nan values"):
                    loss.backward()
        messages = [str(w.message) for w in seen if "Error detected" in str(w.message)]
        assert len(messages) == 1
        reports.append(messages[0])
    for report in reports:
        assert report.startswith("Error detected in SqrtBackward0. Traceback of forward call "
                                 "that caused the error:\n")
        assert "in layer\n    return x.sqrt()" in report
        assert "ember/ops" not in report  # ember's own machinery is left out
    assert not ember.ones(1, requires_grad=True).sqrt().grad_fn.metadata  # only in the mode
