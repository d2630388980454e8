"""`torch.cuda.jiterator`: an elementwise CUDA kernel from a C++ template function written by
the user, compiled when first called. ember compiles it with CuPy's ElementwiseKernel (NVRTC),
with the user's code as the kernel's preamble."""
import re

from .._tensor import make_tensor
from ..device import backend_of, device as _device

_FUNCTION = re.compile(r"template\s*<(?P<template>[^>]*)>\s*(?P<result>[\w:<>]+)\s+"
                       r"(?P<name>\w+)\s*\((?P<params>[^)]*)\)")


def _parse(code_string):
    """The last templated function of `code_string` (the kernel; the others are helpers):
    its name and its parameters' names."""
    matches = list(_FUNCTION.finditer(code_string))
    if not matches:
        raise AssertionError("Couldn't find template function in code string")
    last = matches[-1]
    params = [p.strip().split()[-1] for p in last.group("params").split(",") if p.strip()]
    return last.group("name"), params


class _JittedFunction:
    def __init__(self, code_string, return_by_ref, num_outputs, **kwargs):
        self.code_string = code_string
        self.kernel_name, params = _parse(code_string)
        if return_by_ref:
            params = params[:len(params) - num_outputs]
        self.kwargs_dict = kwargs
        self.num_inputs = len(params) - len(kwargs)
        self.num_outputs = num_outputs
        self.return_by_ref = return_by_ref
        if self.num_inputs > 8:
            raise AssertionError("jiterator only supports up to 8 inputs")
        self._params = params
        self._kernels = {}
        self.is_cuda_available = backend_of(_device("cuda")).is_available()

    def _kernel(self, cp, extra_names):
        key = tuple(extra_names)
        kernel = self._kernels.get(key)
        if kernel is None:
            names = self._params[:self.num_inputs]
            inputs = ", ".join(f"T {n}" for n in names)
            extras = "".join(f", T {n}" for n in extra_names)
            outputs = ", ".join(f"T out{i}" for i in range(self.num_outputs))
            arguments = ", ".join(list(names) + list(extra_names))
            if self.return_by_ref:
                outs = ", ".join(f"out{i}" for i in range(self.num_outputs))
                body = f"{self.kernel_name}({arguments}, {outs})"
            else:
                body = f"out0 = {self.kernel_name}({arguments})"
            kernel = cp.ElementwiseKernel(inputs + extras, outputs, body,
                                          f"ember_jiterator_{self.kernel_name}",
                                          preamble=self.code_string)
            self._kernels[key] = kernel
        return kernel

    def __call__(self, *tensors, **kwargs):
        if not self.is_cuda_available:
            raise AssertionError("Jiterator is only supported on CUDA and ROCm GPUs, none "
                                 "are available.")
        if any(not t.is_cuda for t in tensors):
            raise RuntimeError("jiterator: all input tensors must live on a CUDA device")
        if len(tensors) != self.num_inputs:
            raise AssertionError(f"expected {self.num_inputs} inputs, got {len(tensors)}")
        for name in kwargs:
            if name not in self.kwargs_dict:
                raise AssertionError(f"{name} is not declared in function definition")
        values = {**self.kwargs_dict, **kwargs}
        extra_names = [n for n in self._params[self.num_inputs:] if n in values]
        cp = backend_of(_device("cuda")).xp
        arrays = [t._array for t in tensors]
        scalars = [cp.asarray(values[n], dtype=arrays[0].dtype) for n in extra_names]
        results = self._kernel(cp, extra_names)(*arrays, *scalars)
        results = results if isinstance(results, tuple) else (results,)
        outs = tuple(make_tensor(r, tensors[0].device) for r in results)
        return outs[0] if self.num_outputs == 1 else outs


def _create_jit_fn(code_string, **kwargs):
    """An elementwise CUDA function from `code_string` (a templated C++ function; the
    keyword arguments are its extra scalar parameters and their defaults)."""
    return _JittedFunction(code_string, return_by_ref=False, num_outputs=1, **kwargs)


def _create_multi_output_jit_fn(code_string, num_outputs, **kwargs):
    """As _create_jit_fn, for a function returning `num_outputs` results through its last
    (reference) parameters."""
    return _JittedFunction(code_string, return_by_ref=True, num_outputs=num_outputs, **kwargs)
