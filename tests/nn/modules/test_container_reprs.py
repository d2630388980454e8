"""What print() shows for parameter containers and optimizers, as PyTorch prints them:
ParameterList/ParameterDict entries (one line for a single entry, the tensor type for a dict,
"Object of type" for a non-tensor), a plain dict's keys in sorted order, and a blank line
between an optimizer's parameter groups."""
import ember


def _reprs(lib):
    p = lambda *size: lib.nn.Parameter(lib.ones(*size))  # noqa: E731
    one = lib.nn.ParameterList([p(2, 3)])
    return [
        repr(one),
        repr(lib.nn.Sequential(one)),
        repr(lib.nn.ParameterList([p(2), lib.ones(3), 5])),
        repr(lib.nn.ParameterDict({"w": p(2), "v": p(1), "x": lib.ones(3), "n": 5})),
        list(lib.nn.ParameterDict({"w": p(2), "v": p(1)})),
        repr(lib.nn.ParameterDict()),
        repr(lib.optim.SGD([{"params": [p(1)]}, {"params": [p(1)], "lr": 0.5}], lr=0.1,
                           momentum=0.9)),
        repr(lib.optim.Adam([p(1)])),
    ]


def test_reprs_match_pytorchs(torch):
    for ours, theirs in zip(_reprs(ember), _reprs(torch)):
        assert ours == theirs
