"""`torch.onnx`: export a model to an ONNX file, through the `onnx` package
(`pip install ember[onnx]`). The graph is what `ember.export` captures from the model's own
execution on the example inputs; each op is mapped to ONNX operators (see `_lower_*`), and
an op with no mapping raises `UnsupportedOperatorError` naming it."""
import contextlib
import enum

from . import errors
from ._export import is_in_onnx_export
from .errors import OnnxExporterError, UnsupportedOperatorError

__all__ = ["export", "is_in_onnx_export", "errors", "OnnxExporterError", "TrainingMode",
           "OperatorExportTypes", "select_model_mode_for_export", "producer_name",
           "producer_version", "UnsupportedOperatorError", "ONNXProgram"]

producer_name = "pytorch"
producer_version = "2.13.0"


class TrainingMode(enum.IntEnum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class ONNXProgram:
    """What `export` returns: the ONNX model (`model_proto`), which `save` writes and calling
    runs in ONNX Runtime (when installed) on ember tensors, returning ember tensors."""

    def __init__(self, model_proto):
        self.model_proto = model_proto
        self._session = None

    def save(self, destination, *, include_initializers=True, keep_initializers_as_inputs=False,
             external_data=None):
        from ._export import _write
        proto = self.model_proto
        if not include_initializers:
            proto = type(proto)()
            proto.CopyFrom(self.model_proto)
            del proto.graph.initializer[:]
        _write(proto, destination)

    def __call__(self, *args, **kwargs):
        import numpy as np

        from ..ops.creation import tensor
        from .._tensor import Tensor
        if self._session is None:
            import onnxruntime
            self._session = onnxruntime.InferenceSession(
                self.model_proto.SerializeToString(), providers=["CPUExecutionProvider"])
        values = [a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)]
        feeds = {i.name: np.asarray(v.detach().cpu().numpy())
                 for i, v in zip(self._session.get_inputs(), values)}
        return [tensor(o) for o in self._session.run(None, feeds)]

    def __repr__(self):
        return f"ONNXProgram(model_proto=<{len(self.model_proto.graph.node)} nodes>)"


@contextlib.contextmanager
def select_model_mode_for_export(model, mode):
    """Put `model` in the mode a `TrainingMode` asks for, for the block."""
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"'mode' should be a torch.onnx.TrainingMode enum, but got "
                        f"'{type(mode)}'.")
    was = model.training
    if mode != TrainingMode.PRESERVE:
        model.train(mode == TrainingMode.TRAINING)
    try:
        yield
    finally:
        model.train(was)


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, external_data=True,
           dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True,
           verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX,
           do_constant_folding=True, custom_opsets=None, export_modules_as_functions=False,
           autograd_inlining=True):
    """Write `model` run on `args` to `f` as an ONNX model (opsets 17-23, default 20).
    `dynamic_axes` ({name: {axis: label}} or {name: [axes]}) leaves those axes free in the
    file. Returns an `ONNXProgram` (None with `dynamo=False`, as PyTorch's older path)."""
    from ._export import export_model
    if isinstance(args, dict):  # a trailing dict of keyword arguments, as PyTorch allows
        args, kwargs = (), args
    elif isinstance(args, tuple) and args and isinstance(args[-1], dict) and kwargs is None:
        args, kwargs = args[:-1], args[-1]
    proto = export_model(model, args, f, kwargs=kwargs, input_names=input_names,
                 output_names=output_names, opset_version=opset_version,
                 dynamic_axes=dynamic_axes, export_params=export_params,
                 do_constant_folding=do_constant_folding, training=training)
    return ONNXProgram(proto) if dynamo else None
