"""Every wrong call of the table raises in ember the exception type PyTorch raises for it (and
the near-misses that PyTorch accepts, ember accepts too). PyTorch's outcomes are recorded in
expected.json (record.py writes it), so this runs without torch; the parity test re-runs
torch to keep the record true."""
import json
import os

import pytest

import ember
from .cases import CASES, outcome

with open(os.path.join(os.path.dirname(__file__), "expected.json")) as _f:
    EXPECTED = json.load(_f)

# Calls where ember still raises another type than PyTorch (each one a bug to fix, not a
# difference to keep): strict xfails, so a fix shows up as a pass to remove from here.
KNOWN_DIFFERENT = set()


def test_table_is_large_and_recorded():
    names = [name for name, _ in CASES]
    assert len(names) == len(set(names)), "duplicate ids in the wrong-call table"
    assert len(names) >= 500
    assert set(names) == set(EXPECTED), "rerun `python -m tests.wrong_calls.record`"
    assert sum(v == "ok" for v in EXPECTED.values()) >= 100  # the accepted neighbours count


CALLS = dict(CASES)


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True)) if name in KNOWN_DIFFERENT else name
    for name in sorted(EXPECTED)])
def test_wrong_call_raises_as_pytorch(name):
    ember.manual_seed(0)
    assert outcome(CALLS[name], ember) == EXPECTED[name]


def test_recorded_outcomes_are_pytorchs(torch):
    torch.manual_seed(0)
    stale = {name: (EXPECTED[name], got) for name, call in CASES
             if (got := outcome(call, torch)) != EXPECTED[name]}
    assert not stale, f"expected.json disagrees with this PyTorch: {stale}"
