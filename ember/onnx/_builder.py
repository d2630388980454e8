"""The ONNX graph an export writes: named values, nodes, initializers, through the `onnx`
package's helpers. Lowerings (the `_lower_*` modules) only call `GraphBuilder.op` and
`GraphBuilder.const`; this file is the one place that knows the protobuf."""
import numpy as np

from .. import dtypes
from .errors import OnnxExporterError

__all__ = ["GraphBuilder", "Value", "onnx_dtype"]


def _onnx():
    try:
        import onnx
    except ImportError:
        raise ModuleNotFoundError("torch.onnx.export needs the `onnx` package: "
                                  "pip install ember[onnx]") from None
    return onnx


_ONNX_TYPES = {  # ember dtype name -> onnx.TensorProto enum name
    "float32": "FLOAT", "float64": "DOUBLE", "float16": "FLOAT16", "bfloat16": "BFLOAT16",
    "int8": "INT8", "int16": "INT16", "int32": "INT32", "int64": "INT64", "uint8": "UINT8",
    "uint16": "UINT16", "uint32": "UINT32", "uint64": "UINT64", "bool": "BOOL",
    "complex64": "COMPLEX64", "complex128": "COMPLEX128",
}


def onnx_dtype(dtype):
    """The TensorProto element type of an ember dtype."""
    name = str(dtype).replace("torch.", "")
    if name not in _ONNX_TYPES:
        raise OnnxExporterError(f"ONNX has no element type for {dtype}")
    return getattr(_onnx().TensorProto, _ONNX_TYPES[name])


class Value:
    """A tensor in the graph: its name, and its shape (ints, or strings for dynamic axes)
    and ember dtype once known."""
    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape=None, dtype=None):
        self.name, self.shape, self.dtype = name, shape, dtype

    @property
    def rank(self):
        if self.shape is None:
            raise OnnxExporterError(f"the rank of ONNX value {self.name!r} is not known")
        return len(self.shape)

    def __repr__(self):
        return f"Value({self.name!r}, {self.shape}, {self.dtype})"


class GraphBuilder:
    def __init__(self, opset):
        self.opset = opset
        self.nodes, self.initializers = [], []
        self.inputs, self.outputs = [], []
        self._used = set()
        self._consts = {}  # (dtype, shape, bytes) -> Value, so equal constants are shared
        self.current = None  # the name of the op being lowered (one lowering serves several)

    def fresh(self, hint):
        """A value name not used yet, from `hint`."""
        base = "".join(c if c.isalnum() or c in "_." else "_" for c in str(hint)) or "v"
        name, k = base, 1
        while name in self._used:
            name, k = f"{base}_{k}", k + 1
        self._used.add(name)
        return name

    def op(self, op_type, inputs, outputs=1, name_hint=None, **attrs):
        """Append an `op_type` node; `inputs` are Values (or None for an omitted optional
        input). Returns its output Value, or a tuple of `outputs` of them when > 1."""
        onnx = _onnx()
        outs = [Value(self.fresh(f"{name_hint or op_type.lower()}")) for _ in range(outputs)]
        names = [("" if v is None else v.name) for v in inputs]
        while names and names[-1] == "":
            names.pop()
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(onnx.helper.make_node(op_type, names, [o.name for o in outs],
                                                name=self.fresh(f"n_{op_type}"), **attrs))
        return outs[0] if outputs == 1 else tuple(outs)

    def const(self, value, dtype=None, name_hint="const"):
        """A constant tensor (an initializer), shared between equal constants."""
        arr = np.asarray(value, dtype=dtype)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key not in self._consts:
            v = Value(self.fresh(name_hint), tuple(arr.shape), dtypes.from_numpy_dtype(arr.dtype))
            self.initializers.append(_onnx().numpy_helper.from_array(arr, v.name))
            self._consts[key] = v
        return self._consts[key]

    def ints(self, values):
        """A 1-d int64 constant (the shapes, axes and indices ONNX takes as inputs)."""
        return self.const(np.asarray(values, dtype=np.int64).reshape(-1), name_hint="ints")

    def scalar(self, number, like):
        """A 0-d constant of `like`'s dtype (for arithmetic with a Python number)."""
        return self.const(np.asarray(number, dtype=_numpy_dtype(like.dtype)), name_hint="scalar")

    def add_input(self, name, shape, dtype):
        v = Value(self.fresh(name), tuple(shape), dtype)
        self.inputs.append(v)
        return v

    def add_parameter(self, name, array):
        """A named initializer (a parameter or buffer of the model)."""
        array = np.asarray(array)
        v = Value(self.fresh(name), tuple(array.shape), dtypes.from_numpy_dtype(array.dtype))
        self.initializers.append(_onnx().numpy_helper.from_array(array, v.name))
        return v

    def model(self, graph_name="main_graph", output_names=None):
        onnx = _onnx()
        helper = onnx.helper

        def info(v):
            shape = None if v.shape is None else [d if isinstance(d, str) else int(d)
                                                  for d in v.shape]
            return helper.make_tensor_value_info(v.name, onnx_dtype(v.dtype), shape)

        used = {name for node in self.nodes for name in node.input} | \
            {v.name for v in self.outputs}
        initializers = [t for t in self.initializers if t.name in used]  # (no dead constants)
        graph = helper.make_graph(self.nodes, graph_name, [info(v) for v in self.inputs],
                                  [info(v) for v in self.outputs], initializers)
        from . import producer_name, producer_version
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  producer_name=producer_name,
                                  producer_version=producer_version)
        model.ir_version = min(model.ir_version, 10)  # what current runtimes read
        return model


def _numpy_dtype(dtype):
    return np.float32 if dtype is None else dtype.np
