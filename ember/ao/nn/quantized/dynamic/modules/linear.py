"""The dynamically quantized Linear layer (PyTorch's `torch.ao.nn.quantized.dynamic.Linear`,
which prints as `DynamicQuantizedLinear`).

ember has no quantized tensors (no qint8 dtype a tensor can hold), so the quantized weight
lives inside the module: a NumPy-backed int8 tensor with its per-tensor scale and zero point
kept beside it. `weight()` answers the dequantized float weight (PyTorch answers a qint8
tensor). The forward does what PyTorch's x86/fbgemm kernel does:
  1. choose the input's scale and zero point from its min and max, for uint8 codes with
     `reduce_range` (0..127: one bit spare, so that the kernel's 16-bit pairwise sums of
     uint8 x int8 products never saturate, and PyTorch keeps that range on every CPU);
  2. quantize the input with them (round half to even);
  3. multiply the integer codes, accumulating exactly (int32 in fbgemm);
  4. scale the integer sums back to float32 (input scale x weight scale) and add the bias.
With dtype=float16 the weight is stored rounded to float16 and the product is taken in float32.
CPU only, forward only (as PyTorch's)."""
import numpy as np

from ...... import dtypes as _dt
from ...... import _qscheme
from ......nn.modules.linear import Linear as FloatLinear, NonDynamicallyQuantizableLinear
from ......nn.modules.module import Module
from ......ops.creation import tensor

__all__ = ["Linear", "LinearPackedParams"]

# fbgemm's floor for an activation scale (a smaller one is widened to this)
_SMALL_SCALE_THRESHOLD = 6.1e-5


def choose_activation_qparams(low, high, qmin=0, qmax=255, reduce_range=True):
    """fbgemm's ChooseQuantizationParams for an affine uint8 input: (scale, zero_point)."""
    if reduce_range:
        qmin, qmax = qmin // 2, qmax // 2
    low, high = min(float(np.float32(low)), 0.0), max(float(np.float32(high)), 0.0)
    scale = (high - low) / (qmax - qmin)
    if np.float32(scale) == 0 or np.isinf(np.float32(1) / np.float32(scale)):
        scale = 0.1
    if scale < _SMALL_SCALE_THRESHOLD:
        widen = _SMALL_SCALE_THRESHOLD / scale
        scale = _SMALL_SCALE_THRESHOLD
        if low == 0:
            high = _SMALL_SCALE_THRESHOLD * (qmax - qmin)
        elif high == 0:
            low = -_SMALL_SCALE_THRESHOLD * (qmax - qmin)
        else:
            low, high = low * widen, high * widen
    scale = float(np.float32(scale))
    from_min, from_max = qmin - low / scale, qmax - high / scale
    # start from the end whose rounding error is smaller
    error_min = abs(qmin) - abs(low / scale)
    error_max = abs(qmax) - abs(high / scale)
    initial = from_min if error_min < error_max else from_max
    zero_point = qmin if initial < qmin else qmax if initial > qmax else int(np.rint(initial))
    return scale, zero_point


def int8_matmul(rows, weight_codes, weight_scale, weight_zero_point):
    """rows @ W^T for float32 `rows` (n, in) and int8 weight codes (out, in): the input is
    quantized here, per call, and the integer sums scaled back to float32 (no bias)."""
    low = rows.min() if rows.size else 0.0
    high = rows.max() if rows.size else 0.0
    x_scale, x_zero_point = choose_activation_qparams(low, high)
    codes = np.rint(rows * np.float32(1.0 / x_scale) + np.float32(x_zero_point))
    x_codes = np.clip(codes, 0, 255) - x_zero_point
    w_codes = weight_codes.astype(np.float64) - weight_zero_point
    # float64 BLAS sums integer products exactly (every sum is far below 2**53), the same
    # integers fbgemm accumulates in int32, and many times faster than NumPy's int matmul
    sums = x_codes.astype(np.float64) @ w_codes.T
    return sums.astype(np.float32) * (np.float32(x_scale) * np.float32(weight_scale))


def quantize_weight(weight, observer):
    """(int8 codes, scale, zero_point) of a float weight, with the observer's parameters."""
    observer(weight)
    scale, zero_point = observer.calculate_qparams()
    scale, zero_point = float(scale[0]), int(zero_point[0])
    values = weight.detach().float().numpy()
    codes = np.clip(np.rint(values * np.float32(1.0 / scale)) + zero_point, -128, 127)
    return codes.astype(np.int8), scale, zero_point


class LinearPackedParams(Module):
    """The weight and bias of a quantized Linear, kept together as PyTorch packs them. State
    keys are PyTorch's (`dtype`, `_packed_params`); for qint8 the `_packed_params` tuple is
    (int8 weight codes, bias, scale, zero_point), since ember has no qint8 tensor to carry
    the scale inside the weight; for float16 it is (weight, bias), as PyTorch's."""
    _version = 3

    def __init__(self, dtype=_dt.qint8):
        super().__init__()
        self.dtype = dtype
        self._codes = None          # int8 tensor (qint8) or float16 tensor (float16)
        self._scale, self._zero_point = 1.0, 0
        self._bias = None

    def set_weight_bias(self, codes, bias, scale=1.0, zero_point=0):
        self._codes, self._bias = codes, bias
        self._scale, self._zero_point = float(scale), int(zero_point)

    def _weight_bias(self):
        if self.dtype is _dt.qint8:
            codes = self._codes.numpy().astype(np.float32)
            weight = (codes - np.float32(self._zero_point)) * np.float32(self._scale)
        else:
            weight = self._codes.numpy().astype(np.float32)
        return tensor(weight), self._bias

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        if self.dtype is _dt.qint8:
            destination[prefix + "_packed_params"] = (self._codes, self._bias, self._scale,
                                                      self._zero_point)
        else:
            destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for key in ("dtype", "_packed_params"):
            if prefix + key not in state_dict:
                missing_keys.append(prefix + key)
        if prefix + "dtype" in state_dict and prefix + "_packed_params" in state_dict:
            self.dtype = state_dict.pop(prefix + "dtype")
            packed = state_dict.pop(prefix + "_packed_params")
            if self.dtype is _dt.qint8:
                if len(packed) != 4:
                    error_msgs.append(
                        f"{prefix}_packed_params: a qint8 weight needs (codes, bias, scale, "
                        "zero_point); PyTorch's quantized-tensor checkpoints cannot be read")
                else:
                    self.set_weight_bias(packed[0].to(_dt.int8), *packed[1:])
            else:
                weight, bias = packed
                self.set_weight_bias(weight.to(_dt.float16), bias)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def __repr__(self):
        return repr(self._weight_bias())


class Linear(Module):
    """y = x W^T + b with W quantized (qint8 per tensor, or float16) and x quantized on the
    fly in each call."""
    _version = 4

    def __init__(self, in_features, out_features, bias_=True, dtype=_dt.qint8):
        super().__init__()
        if dtype not in (_dt.qint8, _dt.float16):
            raise RuntimeError("Unsupported dtype specified for quantized Linear!")
        self.in_features, self.out_features = in_features, out_features
        bias = tensor(np.zeros(out_features, np.float32)) if bias_ else None
        codes_dtype = np.int8 if dtype is _dt.qint8 else np.float16
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(tensor(np.zeros((out_features, in_features),
                                                            codes_dtype)), bias, 1.0, 0)
        self.scale, self.zero_point = 1.0, 0
        self.version = 4

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self):
        text = (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"dtype={self._packed_params.dtype}")
        if self._packed_params.dtype is _dt.qint8:
            text += f", qscheme={_qscheme.per_tensor_affine}"
        return text

    def __repr__(self):
        # the packed weight is an implementation detail: it does not print as a child
        return f"{self._get_name()}({self.extra_repr()})"

    def weight(self):
        """The dequantized float32 weight (PyTorch answers the qint8 tensor itself)."""
        return self._packed_params._weight_bias()[0]

    def bias(self):
        return self._packed_params._bias

    def _weight_bias(self):
        return self._packed_params._weight_bias()

    def set_weight_bias(self, w, b, scale=1.0, zero_point=0):
        """`w`: int8 codes with their scale and zero point (qint8), or a float weight (float16)."""
        if self._packed_params.dtype is _dt.qint8:
            self._packed_params.set_weight_bias(w.to(_dt.int8), b, scale, zero_point)
        else:
            self._packed_params.set_weight_bias(w.detach().to(_dt.float16), b)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = tensor(self.scale)
        destination[prefix + "zero_point"] = tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        if prefix + "scale" in state_dict:
            self.scale = float(state_dict.pop(prefix + "scale"))
        if prefix + "zero_point" in state_dict:
            self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, x):
        if x.device.type != "cpu":
            raise NotImplementedError(
                "Could not run 'quantized::linear_dynamic' with arguments from the "
                f"'{x.device.type.upper()}' backend.")
        if x.dtype is not _dt.float32:
            raise RuntimeError(f"expected scalar type Float but found {x.dtype._scalar_name}")
        packed = self._packed_params
        rows = x.detach().numpy().reshape(-1, self.in_features)
        if packed.dtype is _dt.qint8:
            out = int8_matmul(rows, packed._codes.numpy(), packed._scale, packed._zero_point)
        else:
            out = rows @ packed._codes.numpy().astype(np.float32).T
        if packed._bias is not None:
            out = out + packed._bias.detach().numpy().astype(np.float32)
        return tensor(out.astype(np.float32).reshape(*x.shape[:-1], self.out_features))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized copy of a float `nn.Linear` whose `qconfig` says how."""
        from .....quantization.qconfig import default_dynamic_qconfig
        if type(mod) not in cls._FLOAT_MODULE:
            raise AssertionError(
                "nn.quantized.dynamic.Linear.from_float only works for one of "
                f"{[float_mod.__name__ for float_mod in cls._FLOAT_MODULE]}")
        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        observer = qconfig.weight()
        dtype = observer.dtype
        if dtype not in (_dt.qint8, _dt.float16):
            raise RuntimeError("The only supported dtypes for dynamic quantized linear are qint8"
                               f" and float16 got: {dtype}")
        qlinear = cls(mod.in_features, mod.out_features, dtype=dtype)
        bias = None if mod.bias is None else mod.bias.detach().float()
        if dtype is _dt.qint8:
            codes, scale, zero_point = quantize_weight(mod.weight, observer)
            qlinear.set_weight_bias(tensor(codes), bias, scale, zero_point)
        else:
            qlinear.set_weight_bias(mod.weight.detach().float(), bias)
        return qlinear


Linear._FLOAT_MODULE = [FloatLinear, NonDynamicallyQuantizableLinear]
