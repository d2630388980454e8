"""The Tensor: a backend array plus device and autograd metadata.

Operators and most methods are bound onto the class by `ember.ops` (this file does not
import it). What lives here is what a tensor *is*: its array, its view and version
bookkeeping, its autograd fields, and conversions to Python and NumPy.
"""
import builtins
import numbers
import warnings

import numpy as np

from . import _dtype_casts as _casts, dtypes as _dt
from . import _memory_format as _mf
from ._layout import strided as _strided
from ._size import Size, shape_of as _shape
from . import _state
from ._state import grad as _grad_state
from ._autograd_meta import _refresh_view_grad_fn
from .device import _BACKENDS, CPU, backend_of, canonical
from .utils.hooks import register as _register_hook

__all__ = ["Tensor", "Size", "VersionCounter", "is_tensor", "is_floating_point", "is_complex",
           "numel"]


class VersionCounter:
    """Bumped by every in-place write; shared by a tensor, its views and `detach()`."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = 0


_new = object.__new__
_FROM_NUMPY = _dt.FROM_NUMPY
_np_generic = np.generic


def _make(cls, array, device, base=None, version=None):
    t = _new(cls)
    if isinstance(array, _np_generic):  # NumPy ufuncs give scalars for 0-d arrays
        array = np.asarray(array)
    t._array = array
    t._device = device
    t._requires_grad = False
    t._grad_fn = None
    t._output_nr = 0
    t._vc = version if version is not None else VersionCounter()
    t._base = base
    t._view_fn = None
    t._grad = None
    if _grad_state.inference:  # made inside inference_mode: PyTorch's inference tensor
        t._inference = True
    return t


def _same_storage(t, src):
    """`t`, made on `src`'s memory but not as its view (detach, .data), reports src's storage:
    the offset into it (storage_offset) and its whole extent (untyped_storage, as_strided)."""
    root = src if src._base is None else src._base
    storage = root.__dict__.get("_storage")
    if storage is None and root is not src:
        storage = root._array
    if storage is not None:
        t.__dict__["_storage"] = storage
    if src._empty_offset is not None:
        t._empty_offset = src._empty_offset
    return t


def _copied_memory(t, memo):
    """(array, storage) for a deepcopy of `t`: its array in a copy of its storage, one copy
    per storage in a deepcopy (`memo`), so tensors copied together that shared memory (a
    base and its views) still share it, as in PyTorch; `storage` is that copy where `t` is
    a view into it, else None. Device arrays and unusual layouts are copied alone."""
    arr = t._array
    storage = t._base._array if t._base is not None else t.__dict__.get("_storage", arr)
    if type(arr) is not np.ndarray or type(storage) is not np.ndarray or \
            not storage.flags.c_contiguous:
        return arr.copy(), None
    key = ("ember storage", id(storage))
    copied = memo.get(key)
    if copied is None:
        copied = memo[key] = storage.copy()
    if storage is arr:
        return copied, None
    offset = arr.__array_interface__["data"][0] - storage.__array_interface__["data"][0]
    try:
        return np.ndarray(arr.shape, arr.dtype, buffer=copied, offset=offset,
                          strides=arr.strides), copied
    except (ValueError, TypeError):  # (a layout the buffer cannot take)
        return arr.copy(), None


_OWN_DTYPE = object()  # a tensor's grad_dtype left as its own dtype


class Tensor:
    __module__ = "ember"  # `<class 'torch.Tensor'>`, as PyTorch files it
    __slots__ = ("_array", "_device", "_requires_grad", "_grad_fn", "_output_nr", "_vc",
                 "_base", "_view_fn", "_grad", "__dict__", "__weakref__")
    # Rarely set fields live in the instance dict, with these class-level defaults.
    _hooks = None          # dict: id -> hook, on a leaf (a non-leaf's hooks sit on its grad_fn)
    _post_accumulate_grad_hooks = None  # dict: id -> hook(leaf), run after .grad is summed
    _retains_grad = False
    _grad_accumulator = None  # weakref to the leaf's AccumulateGrad node
    _fn_version = 0        # version at which a view's grad_fn was last derived from its base
    _is_param = False
    _creation_meta = None  # a view's PyTorch CreationMeta when not DEFAULT (ops/_graph.py)
    _inference = False     # made inside inference_mode (`is_inference()`)
    _fw_grad = None        # forward AD: (level, tangent or pending one, version): forward_grad
    _empty_offset = None   # an empty view's storage offset (ops/shape.py make_view_of)
    _grad_dtype = _OWN_DTYPE  # `grad_dtype` when set: a dtype, or None for any
    __array_priority__ = 1000  # NumPy defers to our reflected operators

    # ---- construction -----------------------------------------------------------------
    # `Tensor(2, 3)`, `Tensor([1, 2])`: the legacy constructor, bound as `__new__` by the ops
    # package (ember/ops/legacy_constructors.py's tensor_new); ops make their results with `_make`.

    @classmethod
    def _wrap(cls, array, device=CPU):
        return _make(cls, array, device)

    def __reduce_ex__(self, proto):
        # Plain pickling (multiprocessing, copy): the host array, the class, requires_grad.
        # ember.save writes PyTorch's checkpoint format through its own pickler instead.
        return (_rebuild, (type(self), self._host(), str(self._device), self._requires_grad,
                           {k: v for k, v in self.__dict__.items() if k != "_storage"} or None))

    # ---- metadata -----------------------------------------------------------------------
    @property
    def dtype(self):
        return _FROM_NUMPY[self._array.dtype]

    @property
    def device(self):
        return self._device

    @property
    def shape(self):
        return _shape(self._array.shape)

    def size(self, dim=None):
        if dim is None:
            return _shape(self._array.shape)
        _check_has_dims(self, dim)
        return self._array.shape[_wrap_dim(dim, self._array.ndim)]

    def dim(self):
        return self._array.ndim

    ndimension = dim

    @property
    def ndim(self):
        return self._array.ndim

    def numel(self):
        return self._array.size

    nelement = numel

    def element_size(self):
        return self._array.itemsize

    @property
    def itemsize(self):
        return self._array.itemsize

    @property
    def nbytes(self):
        return self._array.nbytes

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    @property
    def is_sparse(self):
        return False

    @property
    def is_quantized(self):
        return False

    @property
    def is_meta(self):
        return self._device.type == "meta"

    # Backends and layouts ember never produces: PyTorch's flags, always False here.
    is_xpu = is_mps = is_ipu = is_maia = is_mtia = is_xla = is_vulkan = property(
        lambda self: False)
    is_mkldnn = is_nested = is_sparse_csr = property(lambda self: False)

    def is_inference(self):
        return self._inference

    def is_distributed(self):
        return False

    def is_set_to(self, tensor):
        """True when both tensors view the same memory with the same size and strides."""
        if not isinstance(tensor, Tensor):
            raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not "
                            f"{type(tensor).__name__}")
        return (self._device == tensor._device and self.dtype == tensor.dtype and
                self.data_ptr() == tensor.data_ptr() and self.shape == tensor.shape and
                self.stride() == tensor.stride())

    def const_data_ptr(self):
        return self.data_ptr()

    def dim_order(self, *, ambiguity_check=False):
        """The dims from outermost to innermost in memory (ties keep their order). With
        `ambiguity_check` True, a tensor with another legal order (a size-1 dim, two equal
        strides) is refused; with a list of memory formats, unless exactly one of them
        describes it."""
        if self.is_sparse:
            raise AttributeError(f"Can't get dim order on sparse type: {self.type()} Use "
                                 "Tensor.to_dense() to convert to a dense tensor first.")
        if not isinstance(ambiguity_check, builtins.bool) and not (
                isinstance(ambiguity_check, list) and
                all(isinstance(f, _mf.memory_format) for f in ambiguity_check)):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                            "formats.")
        strides = self.stride()
        if ambiguity_check is not False:
            several = 1 in self._array.shape or any(
                a == b for a, b in zip(strides, strides[1:]))
            formats = ambiguity_check if isinstance(ambiguity_check, list) else []
            if several and sum(self.is_contiguous(memory_format=f) for f in formats) != 1:
                raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                                   "exact one of the given memory formats.")
        return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))

    @property
    def name(self):  # named tensors' per-tensor name; ember has none
        return None

    @property
    def grad_dtype(self):
        """The dtype a leaf's gradient has: the engine casts incoming gradients to it, and an
        assigned .grad must have it. The tensor's own dtype by default; None allows any."""
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self.dtype if self._grad_dtype is _OWN_DTYPE else self._grad_dtype

    @grad_dtype.setter
    def grad_dtype(self, value):
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, _dt.dtype):
            raise TypeError(f"grad_dtype must be a torch.dtype or None, but got "
                            f"{type(value).__name__}")
        self._grad_dtype = value

    def as_subclass(self, cls):
        """`self` as an instance of the Tensor subclass `cls`: the same memory, an alias in
        the autograd graph."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                            "Tensor is not possible. Make sure your class inherits from Tensor.")
        out = self.view_as(self)
        out.__class__ = cls
        return out

    def record_stream(self, s):
        """Marks memory as used by the stream `s`. ember's CUDA memory is CuPy's pool, which
        frees a block only after the work queued on it, so there is nothing to record."""
        if type(s).__name__ != "Stream":
            raise RuntimeError("unknown parameter type")

    def module_load(self, other, assign=False):
        """How `load_state_dict` turns the state-dict value `other` into this parameter's
        new value (a subclass may override it)."""
        return other.detach() if assign else self.copy_(other).detach()

    @property
    def layout(self):
        return _strided

    def get_device(self):
        return -1 if self._device.type == "cpu" else self._device.index

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def is_signed(self):
        return self.dtype.is_signed

    def stride(self, dim=None):
        if dim is not None:
            _check_has_dims(self, dim)
        item = self._array.itemsize
        strides = tuple(s // item for s in self._array.strides)
        # NumPy leaves a size-1 or empty axis's stride arbitrary; report PyTorch's.
        shape = self._array.shape
        if (0 in shape or 1 in shape) and not _mf.is_channels_last_strides(shape, strides):
            if 0 in shape and not any(strides):  # NumPy zeroes an empty array's strides
                return _mf.format_strides(shape, _mf.contiguous_format) if dim is None else \
                    _mf.format_strides(shape, _mf.contiguous_format)[_wrap_dim(dim, len(shape))]
            strides = _normalise_strides(shape, strides)
        return strides if dim is None else strides[_wrap_dim(dim, self._array.ndim)]

    def storage_offset(self):
        if self._empty_offset is not None:
            return self._empty_offset
        root = self if self._base is None else self._base
        # a root restrided in place (as_strided_, t_ ...) keeps its first array as `_storage`
        storage = root.__dict__.get("_storage")
        if storage is None:
            if root is self:
                return 0
            storage = root._array
        return (_data_ptr(self._array) - _data_ptr(storage)) // self._array.itemsize

    def data_ptr(self):
        if self._device.type == "meta":  # no memory behind it: PyTorch answers 0
            return 0
        return _data_ptr(self._array)

    def is_contiguous(self, memory_format=None):
        if memory_format is not None:
            fmt = _mf.parse(memory_format, "is_contiguous", _mf.contiguous_format)
            if fmt is not _mf.contiguous_format and fmt is not _mf.preserve_format:
                return _mf.is_contiguous_as(self._array.shape, self.stride(), fmt)
        if self._array.size == 0:
            return True
        expected = 1
        shape, strides = self._array.shape, self.stride()
        for size, stride in zip(reversed(shape), reversed(strides)):
            if size != 1:
                if stride != expected:
                    return size == 0
                expected *= size
        return True

    def _is_view(self):
        return self._base is not None

    # ---- autograd fields ----------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        flag = builtins.bool(flag)
        if self._grad_fn is not None and not flag:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if flag and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        if flag and self._inference and not _grad_state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = flag

    def requires_grad_(self, requires_grad=True):
        if type(requires_grad) is not bool:  # PyTorch's parser takes a bool, nothing else
            kind = type(requires_grad)  # named as its C type is (numpy's with their module)
            name = ("numpy." if kind.__module__ == "numpy" else "") + kind.__name__
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {name}")
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            # PyTorch's method words it differently from the property setter
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        if self._base is not None and self._fn_version != self._vc.value:
            _refresh_view_grad_fn(self)
        return self._grad_fn

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def grad(self):
        if self._grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you indeed "
                "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on "
                "the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you "
                "access the leaf Tensor instead.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value._array.shape != self._array.shape:
                raise RuntimeError(f"attempting to assign a gradient of size "
                                   f"'{list(value._array.shape)}' to a tensor of size "
                                   f"'{list(self._array.shape)}'. Please ensure that the gradient "
                                   "and the tensor are the same size")
            wanted = self.dtype if self._grad_dtype is _OWN_DTYPE else self._grad_dtype
            if wanted is not None and value.dtype is not wanted:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value.dtype._cpp_name}' to "
                    f"a tensor with grad_dtype '{wanted._scalar_name}'. The gradient "
                    "must match the tensor's grad_dtype (defaults to the tensor's dtype). You can "
                    "set the tensor's grad_dtype attribute with a specific dtype, or None to allow "
                    "any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and "
                    "its gradient may break downstream systems that assume they match.")
            if value._device != self._device:
                raise RuntimeError("assigned grad has data located on a different device")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        return self._retains_grad

    @property
    def _version(self):
        if self._inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc.value

    @property
    def data(self):
        """The same memory outside autograd, with a version counter of its own."""
        return _same_storage(_make(Tensor, self._array, self._device), self)

    @data.setter
    def data(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(other).__name__}")
        self._array = other._array
        self._device = other._device
        self.__dict__.pop("_storage", None)
        self.__dict__.pop("_empty_offset", None)
        if self._base is None:
            _same_storage(self, other)

    def detach(self):
        """The same memory and version counter, outside the graph."""
        return _same_storage(_make(Tensor, self._array, self._device, version=self._vc), self)

    def detach_(self):
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are "
                               "using DistributedDataParallel (DDP) for training, and "
                               "gradient_as_bucket_view is set as True, gradients are views of "
                               "DDP buckets, and hence detach_() cannot be called on these "
                               "gradients. To fix this error, please refer to the "
                               "Optimizer.zero_grad() function in torch/optim/optimizer.py as "
                               "the solution.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    def retain_grad(self):
        if self.grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if not self._retains_grad:
            self._retains_grad = True
            self._grad_fn._retain(self)

    def register_hook(self, hook):
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        if fn is not None:
            return fn._register_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = {}
        return _register_hook(self._hooks, hook)

    @property
    def _backward_hooks(self):
        """The tensor hooks registered with register_hook (id -> hook), or None, where
        PyTorch keeps them: on a leaf itself, on a non-leaf's grad_fn (per output)."""
        fn = self.grad_fn
        if fn is None:
            return self._hooks or None
        return (fn._pre_hooks or {}).get(self._output_nr) or None

    def register_post_accumulate_grad_hook(self, hook):
        """`hook(self)` runs after backward has accumulated into this leaf's .grad."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = {}
        return _register_hook(self._post_accumulate_grad_hooks, hook)

    # ---- conversions to Python and NumPy --------------------------------------------------
    def numpy(self, *, force=False):
        if force:
            return self.detach().cpu()._array
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if self._device.type != "cpu":
            raise TypeError(f"can't convert {self._device} device type tensor to numpy. "
                            "Use Tensor.cpu() to copy the tensor to host memory first.")
        if self.dtype._kind and self.dtype._kind is not _dt.UINT:  # NumPy-less in PyTorch
            raise TypeError(f"Got unsupported ScalarType {self.dtype._scalar_name}")
        return self._array

    def _host(self):
        """The array in host memory (a copy for device tensors)."""
        arr = self._array
        return arr if self._device.type == "cpu" else backend_of(self._device).to_host(arr)

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def tolist(self):
        arr = self._host()
        if arr.dtype == _dt.bfloat16.np:
            arr = arr.astype(np.float32)
        elif self.dtype._kind:
            return _casts.to_python(arr)
        return arr.tolist()

    def item(self):
        if self._array.size != 1:
            raise RuntimeError(f"a Tensor with {self._array.size} elements cannot be converted to Scalar")
        if self._device.type == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        arr = self._host()
        if arr.dtype == _dt.bfloat16.np:
            arr = arr.astype(np.float32)
        elif self.dtype._kind:
            if self.dtype._kind in _casts._OPAQUE:
                raise _casts.not_implemented("_local_scalar_dense_cpu", self.dtype)
            return _casts.to_python(arr.reshape(()))
        return arr.reshape(()).item()

    def __len__(self):
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self):
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __contains__(self, element):
        if isinstance(element, (Tensor, numbers.Number)):
            return builtins.bool((element == self).any().item())
        raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you passed in "
                           f"a {type(element)}.")

    def __reversed__(self):
        """The tensor flipped along dim 0 (a 0-dim tensor is its own reverse)."""
        return self if self._array.ndim == 0 else self.flip(0)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """NumPy hands back a ufunc's result (`np.exp(t)`, `np.add(t, 1)`) here: a tensor over
        it, 0-dim results too, as in PyTorch, whose bool results come back as uint8."""
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        _dt.from_numpy_dtype(array.dtype)  # PyTorch's TypeError for a dtype ember lacks
        return _make(Tensor, _dt.with_own_dtype(np.asarray(array)), CPU)

    def __bool__(self):
        n = self._array.size
        if n != 1:
            if n == 0:
                raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return builtins.bool(self.item())

    def __float__(self):
        if self._requires_grad:
            _warn_scalar_with_grad()
        return builtins.float(self._scalar("float"))

    def __int__(self):
        return builtins.int(self._scalar("int"))

    def __complex__(self):
        if self._requires_grad:
            _warn_scalar_with_grad()
        return builtins.complex(self._scalar("complex"))

    def _scalar(self, kind):
        if self._array.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        value = self.item()
        if kind != "complex" and value.__class__ is complex:
            # PyTorch's: a complex converts to a real number only when it is one
            if value.imag:
                raise RuntimeError("value cannot be converted to type "
                                   f"{'double' if kind == 'float' else 'int64_t'} without overflow")
            value = value.real
        return value

    def __index__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex or self._array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return builtins.int(self.item())

    def __hash__(self):
        return id(self)

    def __repr__(self, *, tensor_contents=None):
        from ._printing import tensor_repr  # here: `import ember` need not load the printer
        # a subclass prints under its own name (`MyT([1., 2.])`), as in PyTorch; str() goes
        # through type(self).__repr__, so a subclass's own __repr__ is print()'s too
        cls = type(self)
        return tensor_repr(self, "tensor(" if cls is Tensor else f"{cls.__name__}(",
                           tensor_contents)

    def __format__(self, spec):
        # as PyTorch: a plain 0-dim tensor formats as its number (f"{t}" too), anything
        # else as its repr, which takes no format spec
        if self._array.ndim == 0 and type(self) is Tensor and self._device.type != "meta":
            return self.item().__format__(spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def __dlpack__(self, stream=None, **kwargs):
        if self._requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        if self._device.type == "meta":  # (no memory to lend)
            raise BufferError("Cannot pack tensors on meta")
        if stream is not None:
            kwargs["stream"] = stream
        # max_version must reach the array: without it NumPy imports the memory read-only
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        if self._device.type == "meta":
            raise ValueError("Unknown device type meta for Dlpack")
        return self._array.__dlpack_device__()

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment.  If you were attempting to "
                               "deepcopy a module, this may be because of a torch.nn.utils."
                               "weight_norm usage, see https://github.com/pytorch/pytorch/pull/"
                               "103001")
        if id(self) in memo:
            return memo[id(self)]
        import copy  # here: `import ember` need not load it
        array, storage = _copied_memory(self, memo)
        new = _make(type(self), array, self._device)
        if storage is not None:
            new.__dict__["_storage"] = storage
        new._requires_grad = self._requires_grad
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        for k, v in self.__dict__.items():
            if not k.startswith("_grad_acc") and k != "_storage":
                new.__dict__[k] = copy.deepcopy(v, memo)
        memo[id(self)] = new
        return new

    @property
    def __cuda_array_interface__(self):
        return self._array.__cuda_array_interface__


# The tensor attributes PyTorch's C type refuses to write (its getters without setters)
READ_ONLY_ATTRIBUTES = (
    "T", "_version", "grad_fn", "is_leaf", "retains_grad", "output_nr", "name", "shape",
    "is_cuda", "is_mtia", "is_cpu", "is_xla", "is_xpu", "is_ipu", "is_sparse", "is_sparse_csr",
    "is_mkldnn", "is_mps", "is_maia", "is_vulkan", "is_quantized", "is_meta", "is_nested",
    "dtype", "layout", "device", "ndim", "nbytes", "itemsize")


def refuse_writes(names=READ_ONLY_ATTRIBUTES):
    """`t.dtype = ...` (or `del t.shape`) raises PyTorch's words, not Python's "property has
    no setter"; run once every property is on the class."""
    for name in names:
        prop = getattr(Tensor, name, None)
        if isinstance(prop, property) and prop.fset is None:
            def refuse(self, *value, name=name):
                raise AttributeError(f"attribute '{name}' of 'torch._C.TensorBase' objects is "
                                     "not writable")
            setattr(Tensor, name, property(prop.fget, refuse, refuse, prop.__doc__))


def _warn_scalar_with_grad():
    _state.warn_once("Converting a tensor with requires_grad=True to a scalar may lead to "
                     "unexpected behavior.\nConsider using tensor.detach() first.")


def _rebuild(cls, array, device, requires_grad, state):
    dev = canonical(device)
    array = _dt.with_own_dtype(array)  # an unpickled array's dtype is a copy of NumPy's own
    if dev.type != "cpu":
        array = backend_of(dev).from_host(array, dev.index)
    t = _make(cls, array, dev)
    t._requires_grad = requires_grad
    if state:
        t.__dict__.update(state)
    return t


# ---- helpers the ops share -------------------------------------------------------------
def _check_has_dims(t, dim):
    """size(dim) and stride(dim) of a 0-dim tensor: PyTorch's IndexError, whatever the dim."""
    if not t._array.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


def _wrap_dim(dim, ndim):
    """A dim in [-ndim, ndim) made non-negative, or PyTorch's IndexError."""
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n if ndim > 0 else 0


def _normalise_strides(shape, strides):
    """PyTorch's strides for size-0/1 axes: the product of the sizes to the right."""
    out = list(strides)
    expected = 1
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] <= 1:
            out[i] = expected
        expected *= max(shape[i], 1)
    return tuple(out)


def _data_ptr(arr):
    if isinstance(arr, np.ndarray):
        return arr.__array_interface__["data"][0]
    return arr.data.ptr


def make_tensor(array, device=CPU):
    """A new leaf tensor over `array` (the ops' constructor)."""
    return _make(Tensor, array, device)


def xp_of(t):
    """The array module of a tensor's device (NumPy, CuPy): what an op computes with."""
    return _BACKENDS[t._device.type].xp


def is_tensor(obj):
    return isinstance(obj, Tensor)


def _tensor_argument(fname, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def _query(name):
    """torch.`name`(input): the method's answer, for a tensor argument only."""
    def query(input):
        _tensor_argument(name, input)
        return getattr(input, name)()
    query.__name__ = query.__qualname__ = name
    return query


is_floating_point, is_complex, numel, get_device, is_inference, is_distributed = (
    _query(name) for name in ("is_floating_point", "is_complex", "numel", "get_device",
                              "is_inference", "is_distributed"))
