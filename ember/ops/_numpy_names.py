"""NumPy's spellings of four parameter names, which PyTorch's C++ argument parser takes for
every function it binds: `axis` for `dim`, `keepdims` for `keepdim`, `x`, `a` or `x1` for
`input` and `x2` for `other`, each where the op has the parameter and the call does not name
it itself (`x.sum(axis=1, keepdims=True)`, `torch.max(x, axis=0)`, `torch.add(x1=a, x2=b)`).
The functions PyTorch writes in Python do not take them (`torch.norm`, `Tensor.split`,
`F.softmax`, most of nn.functional), and ember's do not where PyTorch's do not.

ember's ops are Python functions whose parameters carry PyTorch's names, so a NumPy spelling
fails their binding. Where users reach an op (a public name, a Tensor method, the C++-bound
nn.functional names, torch.linalg/special/fft) it is bound as a thin wrapper that calls the op
as given and, only where that raised TypeError and the call used a NumPy spelling, calls it
again with the names renamed: the common call pays one frame and no keyword work. Internal
callers use the ops themselves. `tests/test_numpy_names.py` checks the tables below against
PyTorch's."""
import functools
import inspect
import types

# NumPy's spelling -> PyTorch's parameter name
SPELLINGS = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input",
             "x2": "other"}
# functions and Tensor methods that take one of PyTorch's names above but that PyTorch writes
# in Python, so its parser never sees them
PYTHON_WRITTEN = {
    "torch": frozenset({"lstsq", "matrix_rank", "norm", "solve", "split", "stft", "symeig",
                        "unique", "unique_consecutive"}),
    "Tensor": frozenset({"istft", "lstsq", "module_load", "norm", "solve", "split", "stft",
                         "symeig", "to_sparse_coo", "unflatten", "unique", "unique_consecutive"}),
}
# the nn.functional names PyTorch binds from C++ (the rest of that namespace is Python)
CPP_FUNCTIONAL = frozenset({
    "adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "celu_", "channel_shuffle",
    "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "cosine_similarity", "elu_", "gelu", "hardshrink", "hardtanh_",
    "leaky_relu_", "linear", "logsigmoid", "native_channel_shuffle", "one_hot",
    "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu", "relu_", "rrelu_",
    "selu_", "softplus", "softshrink", "threshold_"})

# where users reach ops (PyTorch's namespaces) -> where ember's modules have them, for pickle
HOMES = {"torch": ("ember", ""), "Tensor": ("ember", "Tensor."),
         "SparseTensor": ("ember._sparse", "SparseTensor."),
         "nn.functional": ("ember.nn.functional", ""), "linalg": ("ember.linalg", ""),
         "special": ("ember.special", ""), "fft": ("ember.fft", "")}

_FORMS = {}  # (op, parsed, refusing out=) -> the form users call (maybe the op itself)


def _parameters(function):
    """The names `function` binds by keyword."""
    if not hasattr(function, "__signature__") and not hasattr(function, "__wrapped__"):
        code = function.__code__
        return frozenset(code.co_varnames[code.co_posonlyargcount:
                                          code.co_argcount + code.co_kwonlyargcount])
    try:  # a signature declared for a (*args, **kwargs) form: the names it binds
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return frozenset()
    return frozenset(p.name for p in parameters
                     if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def _renamed(kwargs, spellings):
    """`kwargs` with its NumPy spellings renamed; None where it has none, or where one names a
    parameter also named otherwise (PyTorch then refuses the spelling as an unknown keyword,
    which is the error already raised)."""
    if spellings.keys().isdisjoint(kwargs):
        return None
    renamed = {}
    for key, value in kwargs.items():
        key = spellings.get(key, key)
        if key in renamed:
            return None
        renamed[key] = value
    return renamed


def _form(function, spellings, refuses_out):
    """`function` taking `spellings` (called as given first: a call that names its parameters
    pays one frame and no keyword work) and, where it `refuses_out` (a Tensor method), refusing
    out= as PyTorch's methods do (`np.sum(t)` passes out=None, a TypeError in PyTorch)."""
    name, own = function.__name__, _parameters(function) - {"out"}

    @functools.wraps(function)
    def call(*args, **kwargs):
        if refuses_out and "out" in kwargs:  # named as PyTorch's parser names it: the first
            unknown = next(key for key in kwargs if key not in own)  # unknown keyword
            raise TypeError(f"{name}() got an unexpected keyword argument '{unknown}'")
        try:
            return function(*args, **kwargs)
        except TypeError:
            renamed = _renamed(kwargs, spellings)
            if renamed is None:
                raise
        return function(*args, **renamed)
    return call


def for_users(function, namespace, name):
    """What `function` is bound as where users call it as `<namespace>.<name>` (`namespace`
    one of HOMES): a form taking the NumPy spellings where PyTorch's parser binds that name,
    and refusing out= as a Tensor method; the function itself where it needs neither. One
    form per function and kind of binding, wherever it is bound; pickle finds a function form
    at `ember.<name>` where that is the function's own name, else where it was first bound."""
    if not isinstance(function, types.FunctionType):  # a class, a callable object, a value
        return function
    parameters = _parameters(function)
    refuses_out = namespace in ("Tensor", "SparseTensor") and "out" in parameters
    parsed = name not in PYTHON_WRITTEN.get(namespace, ()) and \
        (namespace != "nn.functional" or name in CPP_FUNCTIONAL)
    form = _FORMS.get((function, parsed, refuses_out))
    if form is None:
        spellings = {spelling: canonical for spelling, canonical in SPELLINGS.items()
                     if parsed and canonical in parameters and spelling not in parameters}
        form = function
        if spellings or refuses_out:
            form = _form(function, spellings, refuses_out)
            form.__numpy_spellings__ = spellings  # marks a form (tests unwrap it to the op)
            form.__module__, form.__qualname__ = HOMES[namespace][0], HOMES[namespace][1] + name
            _FORMS[form, parsed, refuses_out] = form
        _FORMS[function, parsed, refuses_out] = form
    if namespace == "torch" and form is not function and name == function.__name__:
        form.__module__, form.__qualname__ = "ember", name
    return form


def accept_in(namespace, names, kind):
    """Bind the users' form of each function the module namespace `namespace` (a dict) holds
    under `names`, `kind` being its key of HOMES."""
    for name in names:
        value = namespace.get(name)
        if value is not None:
            namespace[name] = for_users(value, kind, name)


def binds(value, op):
    """Whether a public name's `value` is `op` or a form of it (the names by which checkpoints
    and saved programs refer to an op)."""
    return value is op or (hasattr(value, "__numpy_spellings__") and value.__wrapped__ is op)
