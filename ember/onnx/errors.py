"""`torch.onnx.errors`: what a failed export raises."""
import textwrap

__all__ = ["OnnxExporterError", "OnnxExporterWarning", "SymbolicValueError",
           "UnsupportedOperatorError"]


class OnnxExporterWarning(UserWarning):
    """Warnings from the exporter (a construct ONNX can only approximate)."""


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


class UnsupportedOperatorError(OnnxExporterError):
    """An operator of the captured graph has no ONNX form (at this opset)."""

    def __init__(self, name, version, supported_version):
        if supported_version is not None:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not "
                   f"supported. Support for this operator was added in version "
                   f"{supported_version}, try exporting with this version")
        elif name.startswith(("aten::", "prim::", "quantized::")):
            msg = f"Exporting the operator '{name}' to ONNX opset version {version} is not supported"
        else:
            msg = (f"ONNX export failed on an operator with unrecognized namespace {name}. If "
                   "you are trying to export a custom operator, make sure you registered it "
                   "with the right domain and version.")
        super().__init__(msg)


class SymbolicValueError(OnnxExporterError):
    """A value of the graph the exporter cannot express (`value` names it)."""

    def __init__(self, msg, value):
        super().__init__(f"{msg}  [Caused by the value '{value}'.]\n" +
                         textwrap.indent("(node defined in the exported program)", "    "))
