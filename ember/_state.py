"""Process state the ops read on every call: grad mode (thread-local, as in PyTorch), the
default device, the current CUDA device, autocast, anomaly mode and the profiler. Kept on
the ground floor so every floor can read it; the modules users call (`ember.cuda`,
`ember.autograd`, `ember.amp` ...) set it."""
# threading.local is _thread._local itself: taking it from _thread spares `import ember` the
# threading module (about 1 ms), which nothing else that `import ember` loads needs
from _thread import _local as ThreadLocal


class _GradState(ThreadLocal):
    def __init__(self):
        self.enabled = True      # no_grad / enable_grad / set_grad_enabled
        self.inference = False   # inference_mode
        self.layout_enforced = True   # autograd.enforce_grad_layout_policy
        self.multithreading = True    # autograd.set_multithreading_enabled


grad = _GradState()



class _SavedTensorHooks(ThreadLocal):
    """torch.autograd.graph.saved_tensors_hooks: the (pack, unpack) pairs in force, innermost
    last, and the error message while disable_saved_tensors_hooks forbids them (thread-local,
    as PyTorch's). Read by the ops' one place that saves a tensor for backward."""
    def __init__(self):
        self.stack = []
        self.disabled = None


saved_tensor_hooks = _SavedTensorHooks()


class saved_tensor_hooks_anywhere:
    """How many saved_tensors_hooks contexts are open in any thread: what saving reads
    first, as a plain class attribute is cheaper to read than a thread-local one."""
    count = 0


class _SelectiveCheckpoint(ThreadLocal):
    """The selective activation checkpoint region running in this thread: the object
    (ember.utils.checkpoint's caching or replaying half) told of each op the graph records,
    or None. Thread-local, as PyTorch's dispatch modes."""
    def __init__(self):
        self.mode = None


selective_checkpoint = _SelectiveCheckpoint()


class selective_checkpoint_anywhere:
    """How many selective checkpoint regions are open in any thread: what `record` reads
    first (a plain class attribute), so ops pay nothing when none is open."""
    count = 0


class forward_ad:
    """Forward-mode AD (torch.autograd.forward_ad): the open dual level, or None. A tensor's
    tangent is kept with the level it was made at (`Tensor._fw_grad`), so closing the level
    forgets every tangent at once. Process-wide, as PyTorch's levels; `resolve` is the
    function (installed by ember.autograd.forward_ad) that computes a pending tangent."""
    level = None
    resolve = None

_default_devices = []


def default_device():
    """The device factory functions use when none is given (None means the CPU)."""
    return _default_devices[-1] if _default_devices else None


def set_default_device(device):
    _default_devices.clear()
    if device is not None:
        _default_devices.append(device)


def push_default_device(dev):
    _default_devices.append(dev)


def pop_default_device():
    _default_devices.pop()


cuda_device = 0  # torch.cuda.current_device(): the index a bare 'cuda' device means
cuda_sync_debug_mode = 0  # torch.cuda.set_sync_debug_mode: 0 quiet, 1 warn, 2 error on a sync


class _AutocastThread(ThreadLocal):
    def __init__(self):
        self.dtypes = {}        # device type -> the lower-precision dtype autocast casts to
        self.raised_by_hand = False  # set_autocast_enabled holds `autocast.active` raised


class autocast:
    """`active` counts the autocast regions open in any thread: the one flag an op reads on
    its hot path (0 almost always); the per-thread policy is only looked at when it is not."""
    active = 0
    thread = _AutocastThread()


class anomaly:
    """Anomaly detection (process-wide, as PyTorch's): the engine reads it once per backward."""
    enabled = False
    check_nan = True


class deterministic:
    """`use_deterministic_algorithms` and, under it, whether memory a factory leaves
    uninitialised (`empty`, the grown part of `resize_`) is filled with NaN or the largest
    integer, so a read of it shows at once (`torch.utils.deterministic`)."""
    enabled = False
    warn_only = False
    fill_uninitialized_memory = True


class sparse_invariants:
    """torch.sparse.check_sparse_tensor_invariants: whether sparse constructors not told
    check_invariants= check their indices (PyTorch's default: no, with a warning once)."""
    enabled = False


# torch.set_warn_always: PyTorch's warn-once warnings (`warn_once`) then warn on every call
warn_always = False
_warned_once = set()


def warn_once(message, category=UserWarning):
    """PyTorch's TORCH_WARN_ONCE: warn with `message` the first time this process meets it,
    and on every call while torch.set_warn_always(True) is in force (calls then do not use up
    the once, as PyTorch's do not). The warning names the line outside ember that called in,
    as a warning from PyTorch's C++ names the Python line that called it (however many of
    ember's own frames lie between: a public op's NumPy-spellings form is one more)."""
    if not warn_always:
        if message in _warned_once:
            return
        _warned_once.add(message)
    import sys
    import warnings
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


_PACKAGE = __file__[:-len("_state.py")]  # ember's own directory


def alert_not_deterministic(caller):
    """PyTorch's alert from an op with no deterministic implementation (on the CPU: put_
    without accumulate, whose repeated indices leave one of their values): an error under
    use_deterministic_algorithms(True), a warning with warn_only."""
    if not deterministic.enabled:
        return
    if deterministic.warn_only:
        import warnings
        warnings.warn(f"{caller} does not have a deterministic implementation, but you set "
                      "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file "
                      "an issue at https://github.com/pytorch/pytorch/issues to help us "
                      "prioritize adding deterministic support for this operation.", stacklevel=3)
        return
    raise RuntimeError(f"{caller} does not have a deterministic implementation, but you set "
                       "'torch.use_deterministic_algorithms(True)'. You can turn off determinism "
                       "just for this operation, or you can use the 'warn_only=True' option, if "
                       "that's acceptable for your application. You can also file an issue at "
                       "https://github.com/pytorch/pytorch/issues to help us prioritize adding "
                       "deterministic support for this operation.")


def uninitialized(xp, shape, np_dtype):
    """Memory for `empty`: left as it is, unless determinism asks for it filled."""
    if not (deterministic.enabled and deterministic.fill_uninitialized_memory):
        from ._dtype_casts import empty
        return empty(xp, shape, np_dtype)
    return xp.full(shape, _uninitialized_fill(xp, np_dtype), dtype=np_dtype)


def _uninitialized_fill(xp, np_dtype):
    kind = xp.dtype(np_dtype).kind
    if kind == "b":
        return True
    if kind in "iu":
        return xp.iinfo(np_dtype).max
    return float("nan")


class flop_counter:
    """What counts FLOPs (torch.utils.flop_counter.FlopCounterMode), or None: a function told
    of each matrix product, convolution and convolution backward as PyTorch's ATen op
    (name, arguments, keyword arguments, result). Read by those ops as they compute, and by
    first-order backward formulas (which then run as ops, to be counted), so nothing pays
    more than one attribute read while nothing counts."""
    active = None


class profiler:
    """The recording profiler, or None (read once per backward by the engine, and by the op
    wrappers that exist only while one records)."""
    active = None


class matmul_precision:
    """torch.set_float32_matmul_precision: "highest" (float32 products in float32), "high" or
    "medium" (TF32 allowed on a GPU). One setting behind it and
    `torch.backends.cuda.matmul.allow_tf32`, as in PyTorch: setting either shows in the
    other."""
    float32 = "highest"
