"""Python's protocols on the small value types a whole program touches (device, dtype, Size,
finfo/iinfo, Generator, layout, memory_format, Tensor), run as the same expressions under
ember and PyTorch: ==/!=/hash against each other and against str, int, tuple, None; `in`
lists, dicts and sets; sorting; copy and deepcopy; pickle protocols 2 and 5 (and unpickling in
a fresh process); repr/str/format specs; bool/len/iter/int/index; collections.abc and typing
checks; attribute reads, writes and deletes. Each result or exception (type and message) must
match PyTorch's.

Left out on purpose: `copy.copy(device) is device` (ember keeps one object per device, so
copies and unpickled devices are that object; PyTorch makes new, equal ones) and comparing a
finfo/iinfo with anything but a finfo/iinfo (PyTorch reads the other object's memory as if it
were a finfo: `torch.iinfo(torch.int8) == 3` is True), and pickling a memory format with
protocol 2 (PyTorch's fails, "cannot pickle 'module' object"; protocol 5 works in both)."""
import collections.abc as abc
import copy
import operator
import pickle
import re
import subprocess
import sys
import typing
import warnings

import pytest

import ember

OBJECTS = {
    "device cpu": lambda m: m.device("cpu"),
    "device cuda:1": lambda m: m.device("cuda:1"),
    "device cuda": lambda m: m.device("cuda"),
    "float32": lambda m: m.float32,
    "int64": lambda m: m.int64,
    "bool dtype": lambda m: m.bool,
    "Size": lambda m: m.Size([2, 3]),
    "Size()": lambda m: m.Size([]),
    "finfo": lambda m: m.finfo(m.float32),
    "finfo bfloat16": lambda m: m.finfo(m.bfloat16),
    "iinfo": lambda m: m.iinfo(m.int8),
    "Generator": lambda m: m.Generator(),
    "strided": lambda m: m.strided,
    "sparse_coo": lambda m: m.sparse_coo,
    "contiguous_format": lambda m: m.contiguous_format,
    "channels_last": lambda m: m.channels_last,
    "tensor": lambda m: m.tensor([1.5, 2.25]),
    "0-d tensor": lambda m: m.tensor(1.5),
    "0-d int tensor": lambda m: m.tensor(3),
    "complex tensor": lambda m: m.tensor([1 + 2j]),
}
_INFOS = {"finfo", "finfo bfloat16", "iinfo"}
_FORMATS = {"contiguous_format", "channels_last"}
OTHERS = {"'cpu'": "cpu", "'cuda:1'": "cuda:1", "'torch.float32'": "torch.float32",
          "'float32'": "float32", "0": 0, "3": 3, "(2, 3)": (2, 3), "None": None,
          "[2, 3]": [2, 3], "1.5": 1.5}
ABCS = {"Sequence": abc.Sequence, "Hashable": abc.Hashable, "Iterable": abc.Iterable,
        "Sized": abc.Sized, "Container": abc.Container, "Reversible": abc.Reversible,
        "Mapping": abc.Mapping, "Callable": abc.Callable, "typing.Sequence": typing.Sequence,
        "tuple": tuple}
SPECS = ["", ".3f", ">30", "d", "s", "e"]


def _cases(name):
    """name -> f(module) for every expression run on the object called `name`."""
    of = OBJECTS[name]
    cases = {"== self": lambda m: (lambda o: (o == o, o != o))(of(m)),
             "== fresh": lambda m: (of(m) == of(m), of(m) != of(m)),
             "hash": lambda m: (lambda o: hash(o) == hash(o))(of(m)),
             "in list": lambda m: (lambda o: o in [o])(of(m)),
             "in set": lambda m: (lambda o: o in {o})(of(m)),
             "in dict": lambda m: (lambda o: o in {o: 1})(of(m)),
             "sorted": lambda m: sorted([of(m), of(m)]),
             "<": lambda m: of(m) < of(m),
             "copy ==": lambda m: (lambda o: copy.copy(o) == o)(of(m)),
             "deepcopy ==": lambda m: (lambda o: copy.deepcopy(o) == o)(of(m)),
             "deepcopy repr": lambda m: repr(copy.deepcopy(of(m))),
             "repr": lambda m: repr(of(m)), "str": lambda m: str(of(m)),
             "f-string !r": lambda m: f"{of(m)!r}", "bool": lambda m: bool(of(m)),
             "len": lambda m: len(of(m)), "iter": lambda m: [repr(x) for x in of(m)],
             "int": lambda m: int(of(m)), "index": lambda m: operator.index(of(m)),
             "float": lambda m: float(of(m)), "call": lambda m: of(m)(),
             "[0]": lambda m: of(m)[0], "[0:1]": lambda m: of(m)[0:1],
             "+ (1,)": lambda m: of(m) + (1,), "(1,) +": lambda m: (1,) + of(m),
             "* 2": lambda m: of(m) * 2, "2 *": lambda m: 2 * of(m),
             "* 1.5": lambda m: of(m) * 1.5,
             "getattr": lambda m: of(m).no_such_attribute}
    for attr in ("no_such_attribute", "type", "index", "itemsize", "is_signed", "eps", "bits",
                 "device", "dtype", "shape", "manual_seed", "__doc__"):
        cases[f"set {attr}"] = lambda m, attr=attr: setattr(of(m), attr, 1)
        cases[f"del {attr}"] = lambda m, attr=attr: delattr(of(m), attr)
    for protocol in (2, 5):
        if protocol == 2 and name in _FORMATS:  # PyTorch's fails: see the docstring
            continue
        cases[f"pickle {protocol}"] = lambda m, p=protocol: (
            lambda o: (lambda back: (repr(back), back == o))(pickle.loads(pickle.dumps(o, p))))(
            of(m))
    for spec in SPECS:
        cases[f"format {spec!r}"] = lambda m, spec=spec: format(of(m), spec)
    for abc_name, kind in ABCS.items():
        cases[f"isinstance {abc_name}"] = lambda m, kind=kind: isinstance(of(m), kind)
    for text, value in OTHERS.items():
        if name in _INFOS:  # PyTorch reads a non-finfo's memory as a finfo: see the docstring
            continue
        cases[f"== {text}"] = lambda m, v=value: (of(m) == v, of(m) != v, v == of(m),
                                                  v != of(m), of(m) in [v])
        cases[f"in {{{text}: 1}}"] = lambda m, v=value: (
            of(m) in {v: 1} if isinstance(v, abc.Hashable) else None)
    for other in OBJECTS:
        if other != name and not ((name in _INFOS) ^ (other in _INFOS)):
            cases[f"== {other}"] = lambda m, o2=OBJECTS[other]: (of(m) == o2(m), of(m) != o2(m))
    return cases


_C_NAME = re.compile(r"torch\.(?:_C\.)?(device|dtype|Size|finfo|iinfo|layout|memory_format|"
                     r"Generator)\b")


def _normal(m, r):
    """A result in words both libraries share: Python values as they are, their objects by
    repr (addresses dropped)."""
    if isinstance(r, (bool, int, float, str, type(None))):
        return type(r).__name__, re.sub(r"0x[0-9a-f]+", "0x", r) if isinstance(r, str) else r
    if type(r) in (list, tuple):
        return type(r).__name__, [_normal(m, x) for x in r]
    return type(r).__name__, re.sub(r"0x[0-9a-f]+", "0x", repr(r))


def _outcome(m, case):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _normal(m, case(m))
    except Exception as exc:  # noqa: BLE001 (compares any error)
        # Python's own messages name a C type by its full name ('torch.device') where they
        # name a Python class by its bare one ('device'): the same error either way
        return "error", type(exc).__name__, _C_NAME.sub(r"\1", str(exc))


@pytest.mark.parametrize("name", list(OBJECTS))
def test_protocols_match_pytorch(torch, name):
    differ = {case: (mine, theirs) for case, f in _cases(name).items()
              if (mine := _outcome(ember, f)) != (theirs := _outcome(torch, f))}
    assert not differ


def test_c_type_names_in_messages(torch):
    """Where ember raises the error itself, it names the type as PyTorch's C type does."""
    for expr in ("m.device('cpu').foo", "m.float32.foo", "m.Size([1]).foo", "m.strided.foo",
                 "m.finfo().foo", "setattr(m.finfo(), 'eps', 1)", "m.Generator().foo",
                 "format(m.float32, '>9')", "format(m.Size([1]), 'x')",
                 "setattr(m.ones(1), 'dtype', m.int8)", "del m.ones(1).shape",
                 "pickle.dumps(m.iinfo(m.int8))", "copy.copy(m.finfo())"):
        got = []
        for m in (ember, torch):
            with pytest.raises(Exception) as info:
                exec(expr, {"m": m, "pickle": pickle, "copy": copy})
            got.append((type(info.value), str(info.value)))
        assert got[0] == got[1], expr


def test_tensor_format_specs(torch):
    """f"{t:.3f}" formats a one-element tensor's number; a bigger tensor takes only "" (its
    str) and refuses a spec; integer and bool tensors take their number's specs."""
    tensors = [lambda m: m.tensor(3.14159), lambda m: m.tensor([3.14159]),
               lambda m: m.tensor(7), lambda m: m.tensor(True),
               lambda m: m.tensor(2.5, requires_grad=True) * 2, lambda m: m.tensor([1.5, 2.0]),
               lambda m: m.ones(2, 2), lambda m: m.tensor(1 + 2j), lambda m: m.tensor([]),
               lambda m: m.tensor(1.5, dtype=m.bfloat16)]
    for make in tensors:
        for spec in ("", ".3f", ">10", "<8", "^9", "d", ".2e", "g", "+.1f", ",", "x", "%"):
            case = lambda m, make=make, spec=spec: format(make(m), spec)  # noqa: E731
            assert _outcome(ember, case) == _outcome(torch, case), (make(torch), spec)
    assert f"{ember.float32}|{ember.int64!r}|{ember.device('cuda', 1)}" == \
        f"{torch.float32}|{torch.int64!r}|{torch.device('cuda', 1)}"


def test_tensor_operator_with_unsupported_operand(torch):
    """The op's TypeError becomes NotImplemented: Python's own message, and the other
    operand's reflected method gets its turn."""
    class Other:
        def __radd__(self, tensor):
            return "Other.__radd__"

        def __rmatmul__(self, tensor):
            return "Other.__rmatmul__"
    for m in (ember, torch):
        t = m.tensor([1.0, 2.0])
        assert t + Other() == "Other.__radd__" and t @ Other() == "Other.__rmatmul__"
    exprs = ("t + (1,)", "(1,) + t", "t - 'a'", "[1] * t", "t @ None", "None @ t", "t += {}",
             "t ** []", "t // 'a'", "t & (1,)", "t << None", "t % object()")
    for expr in exprs:
        got = []
        for m in (ember, torch):
            scope = {"t": m.tensor([1.0, 2.0])}
            with pytest.raises(TypeError) as info:
                exec(expr, scope)
            got.append(str(info.value))
        assert got[0] == got[1], expr


def test_unpickled_in_a_fresh_process(torch):
    """What ember pickles loads in a process that has not imported ember yet, the same
    values PyTorch's would be."""
    names = ["device cpu", "device cuda:1", "float32", "bool dtype", "Size", "strided",
             "contiguous_format", "tensor", "0-d int tensor"]
    data = pickle.dumps([OBJECTS[n](ember) for n in names], protocol=5)
    script = "import pickle, sys; print([repr(o) for o in pickle.loads(sys.stdin.buffer.read())])"
    out = subprocess.run([sys.executable, "-c", script], input=data, capture_output=True,
                         check=True).stdout.decode()
    assert out.strip() == repr([repr(OBJECTS[n](torch)) for n in names])
