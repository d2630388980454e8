"""`torch.distributed.tensor.parallel.style`: how one module is parallelized.

`ColwiseParallel` shards a Linear's output features (an Embedding's embedding dimension),
`RowwiseParallel` its input features (an Embedding's rows), `SequenceParallel` runs a norm or
dropout on activations sharded along the sequence, and `PrepareModuleInput` /
`PrepareModuleOutput` only move activations between layouts. At the module's boundary each
produces what PyTorch's does: the local tensor when `use_local_output`, else the DTensor.
Inside, the module computes on local shards (see `_layouts`).

Where ember's differ: a local output is a plain Tensor (PyTorch's an AsyncCollectiveTensor,
a Tensor subclass). A parameter's gradient is always the DTensor of the parameter's layout,
its values already reduced: PyTorch leaves a SequenceParallel parameter's gradient
Partial(sum) (summed when the optimizer's ops meet it) and gives a RowwiseParallel
Embedding's weight a Replicate gradient; `full_tensor()` is the same. RowwiseParallel sets
the module's forward (an nn.Linear's bias must be added once, after the partial sums are
reduced), so a subclass's own forward is not called."""
from abc import ABC, abstractmethod
from functools import partial
from types import MethodType

from ....nn import functional as F
from ....nn.modules.linear import Linear
from ....nn.modules.sparse import Embedding
from ...._tensor import Tensor
from .._api import DTensor, distribute_module
from .._utils import compute_local_shape_and_global_offset
from ..placement_types import Partial, Placement, Replicate, Shard
from . import _layouts as L

__all__ = ["ParallelStyle", "RowwiseParallel", "SequenceParallel", "ColwiseParallel",
           "PrepareModuleInput", "PrepareModuleInputOutput", "PrepareModuleOutput"]


class ParallelStyle(ABC):
    """A way to parallelize a module: `parallelize_module` calls its `_apply`."""
    src_data_rank = 0

    @abstractmethod
    def _apply(self, module, device_mesh):
        ...


def _output_fn(output_layouts, use_local_output, produced, mod, outputs, device_mesh):
    """The module's output (the DTensor it made, or the local tensor of the layout
    `produced(mod, local)` names) laid out as `output_layouts`."""
    if not isinstance(outputs, DTensor):
        outputs = produced(mod, outputs, device_mesh)
    outputs = L.redistribute(outputs, device_mesh, output_layouts)
    return outputs.to_local() if use_local_output else outputs


def _input_fn(input_layouts, desired_input_layouts, sum_grad, mod, inputs, device_mesh):
    """The first input as the local tensor of `desired_input_layouts`; `sum_grad` when the
    module reads it replicated against sharded weights (its gradient is then a summand)."""
    local = L.local_of(inputs[0], device_mesh, input_layouts, desired_input_layouts)
    if sum_grad:
        local = L.all_reduce_grad(local, device_mesh)
    return (local,) + tuple(inputs[1:])


def _repr(style, **fields):
    return f"{type(style).__name__}(" + ", ".join(f"{k}={v}" for k, v in fields.items()) + ")"


class ColwiseParallel(ParallelStyle):
    """Shard an nn.Linear's weight and bias on dim 0 (an nn.Embedding's weight on dim 1): the
    replicated input gives an output sharded on its last dimension."""

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        super().__init__()
        self.input_layouts = (input_layouts or Replicate(),)
        self.output_layouts = (output_layouts or Shard(-1),)
        self.desired_input_layouts = (Replicate(),)
        self.use_local_output = use_local_output

    def _partition_fn(self, dim, name, module, device_mesh):
        for pname, param in list(module.named_parameters(recurse=False)):
            module.register_parameter(pname, L.distributed_parameter(
                param, device_mesh, [Shard(dim)], self.src_data_rank))

    @staticmethod
    def _produced(features_dim, mod, local, device_mesh):
        """The local output is the shard of the last dimension, whose whole size is the
        weight's on `features_dim`."""
        shape = list(local.shape)
        shape[-1] = mod.weight._shape[features_dim]
        return DTensor(local, device_mesh, (Shard(local.dim() - 1),), shape)

    def _apply(self, module, device_mesh):
        if isinstance(module, Linear):
            dim, features_dim = 0, 0
        elif isinstance(module, Embedding):
            dim, features_dim = 1, 1
        else:
            raise NotImplementedError("ColwiseParallel currently only support nn.Linear and "
                                      "nn.Embedding!")
        sum_grad = isinstance(module, Linear)  # an Embedding's input is indices
        return distribute_module(
            module, device_mesh, partial(self._partition_fn, dim),
            partial(_input_fn, self.input_layouts, self.desired_input_layouts, sum_grad),
            partial(_output_fn, self.output_layouts, self.use_local_output,
                    partial(self._produced, features_dim)))

    def __repr__(self):
        return _repr(self, input_layouts=self.input_layouts,
                     output_layouts=self.output_layouts,
                     use_local_output=self.use_local_output)


def _rowwise_linear_forward(self, input):
    """The sum over the ranks of the input shard times the weight shard (a Partial), laid
    out as the style's output; then the replicated bias, once."""
    mesh, output_layouts = self._ember_rowwise
    local = F.linear(input, self.weight)
    out = DTensor(local, mesh, (Partial(),), local.shape)
    out = L.redistribute(out, mesh, output_layouts)
    if self.bias is None:
        return out
    return DTensor(out.to_local() + _bias_for(self.bias, mesh, out.placements[0],
                                              out.ndim),
                   mesh, out.placements, out.shape)


def _bias_for(bias, mesh, layout, ndim):
    """The replicated bias to add to this rank's output of `layout`: a shard of the last
    dimension adds its piece (the gradient gathered back); a shard of another dimension
    all of it (each rank's gradient then a summand)."""
    if isinstance(layout, Shard):
        if layout.dim % ndim == ndim - 1:
            return L.local_of(bias, mesh, (Replicate(),), (Shard(0),))
        return L.all_reduce_grad(bias, mesh)
    if isinstance(layout, Partial):
        raise NotImplementedError("ember: RowwiseParallel(output_layouts=Partial()) of an "
                                  "nn.Linear with a bias is not supported")
    return bias


def _rowwise_embedding_forward(self, input):
    """Each rank looks up the indices within its rows (zeros elsewhere): the sum over the
    ranks is the lookup."""
    mesh = self._ember_rowwise[0]
    weight = self.weight
    rows, start = weight.shape[0], _row_offset(weight, mesh)
    shifted = input - start
    mine = (shifted >= 0) & (shifted < rows)
    padding_idx = self.padding_idx
    if padding_idx is not None:
        padding_idx = padding_idx % self.num_embeddings - start
        padding_idx = padding_idx if 0 <= padding_idx < rows else None
    looked_up = F.embedding(shifted * mine, weight, padding_idx, self.max_norm,
                            self.norm_type, self.scale_grad_by_freq, self.sparse)
    local = looked_up * mine.unsqueeze(-1).to(looked_up.dtype)
    out = DTensor(local, mesh, (Partial(),), local.shape)
    return L.redistribute(out, mesh, self._ember_rowwise[1])


def _row_offset(weight, mesh):
    return compute_local_shape_and_global_offset(weight._shape, mesh, weight.placements)[1][0]


class RowwiseParallel(ParallelStyle):
    """Shard an nn.Linear's weight on dim 1, its bias replicated (an nn.Embedding's weight on
    dim 0): the input sharded on its last dimension (replicated indices for an Embedding)
    gives partial sums, reduced to the output layout (default Replicate)."""

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        super().__init__()
        self.input_layouts = (input_layouts or Shard(-1),)
        self.output_layouts = (output_layouts or Replicate(),)
        self.use_local_output = use_local_output

    def _partition_linear_fn(self, name, module, device_mesh):
        module.register_parameter("weight", L.distributed_parameter(
            module.weight, device_mesh, [Shard(1)], self.src_data_rank))
        if getattr(module, "bias", None) is not None:
            module.register_parameter("bias", L.distributed_parameter(
                module.bias, device_mesh, [Replicate()], self.src_data_rank))

    def _partition_embedding_fn(self, name, module, device_mesh):
        for pname, param in list(module.named_parameters(recurse=False)):
            module.register_parameter(pname, L.distributed_parameter(
                param, device_mesh, [Shard(0)], self.src_data_rank))

    def _apply(self, module, device_mesh):
        if isinstance(module, Linear):
            partition_fn, forward = self._partition_linear_fn, _rowwise_linear_forward
            self.desired_input_layouts = (Shard(-1),)
        elif isinstance(module, Embedding):
            if module.max_norm is not None or module.scale_grad_by_freq:
                # both would count the rows other ranks hold (masked to local row 0) as looked up
                raise NotImplementedError("ember: RowwiseParallel of an nn.Embedding with "
                                          "max_norm or scale_grad_by_freq is not supported")
            partition_fn, forward = self._partition_embedding_fn, _rowwise_embedding_forward
            self.desired_input_layouts = (Replicate(),)
        else:
            raise NotImplementedError("RowwiseParallel currently only support nn.Linear and "
                                      "nn.Embedding!")
        distribute_module(
            module, device_mesh, partition_fn,
            partial(_input_fn, self.input_layouts, self.desired_input_layouts, False),
            partial(_output_fn, self.output_layouts, self.use_local_output, None))
        # the forward makes the DTensor of the output layout (see _rowwise_linear_forward)
        module._ember_rowwise = (device_mesh, self.output_layouts)
        module.forward = MethodType(forward, module)
        return module

    def __repr__(self):
        return _repr(self, input_layouts=self.input_layouts,
                     output_layouts=self.output_layouts,
                     use_local_output=self.use_local_output)


class SequenceParallel(ParallelStyle):
    """Replicate the module's parameters (no communication: each rank keeps its values) and
    run it on the input sharded on `sequence_dim` (LayerNorm, RMSNorm, Dropout: modules
    computing each position alone). The output is the DTensor sharded likewise; the
    parameters' gradients are summed over the ranks."""

    def __init__(self, *, sequence_dim=1, use_local_output=False):
        super().__init__()
        self.sequence_sharding = (Shard(sequence_dim),)
        self.use_local_output = use_local_output

    @staticmethod
    def _replicate_module_fn(name, module, device_mesh):
        for pname, param in list(module.named_parameters(recurse=False)):
            module.register_parameter(pname, L.replicated_parameter(param, device_mesh))

    @staticmethod
    def _prepare_input_fn(sequence_sharding, mod, inputs, device_mesh):
        x = inputs[0]
        if isinstance(x, DTensor):
            x = L.redistribute(x, device_mesh, sequence_sharding).to_local()
        elif not isinstance(x, Tensor):
            raise ValueError(f"expecting input of {mod} to be a torch.Tensor or DTensor, but "
                             f"got {x}")
        return (x,) + tuple(inputs[1:])

    @staticmethod
    def _produced(sequence_sharding, mod, local, device_mesh):
        return DTensor.from_local(local, device_mesh, sequence_sharding)

    def _apply(self, module, device_mesh):
        return distribute_module(
            module, device_mesh, self._replicate_module_fn,
            partial(self._prepare_input_fn, self.sequence_sharding),
            partial(_output_fn, self.sequence_sharding, self.use_local_output,
                    partial(self._produced, self.sequence_sharding)))

    def __repr__(self):
        fields = {}
        if len(self.sequence_sharding) == 1:
            fields["sequence_dim"] = self.sequence_sharding[0].dim
        return _repr(self, **fields, use_local_output=self.use_local_output)


def _as_tuple(layouts):
    return (layouts,) if isinstance(layouts, Placement) else layouts


class PrepareModuleInput(ParallelStyle):
    """Lay out the module's inputs (positional by `input_layouts`, keyword by
    `input_kwarg_layouts`; None leaves one as it is) as the desired layouts before its
    forward: DTensors, or their local tensors when `use_local_output`."""

    def __init__(self, *, input_layouts=None, desired_input_layouts=None,
                 input_kwarg_layouts=None, desired_input_kwarg_layouts=None,
                 use_local_output=False):
        self.input_layouts = _as_tuple(input_layouts)
        self.desired_input_layouts = _as_tuple(desired_input_layouts)
        self.use_local_output = use_local_output
        if self.input_layouts is not None:
            if self.desired_input_layouts is None:
                raise AssertionError("desired module inputs should not be None!")
            if len(self.input_layouts) != len(self.desired_input_layouts):
                raise AssertionError("input_layouts and desired_input_layouts should have "
                                     "same length!")
        self.with_kwargs = input_kwarg_layouts is not None
        self.input_kwarg_layouts = input_kwarg_layouts or {}
        self.desired_input_kwarg_layouts = desired_input_kwarg_layouts or {}
        if self.with_kwargs and (len(self.input_kwarg_layouts)
                                 != len(self.desired_input_kwarg_layouts)):
            raise AssertionError("input_kwarg_layouts and desired_input_kwarg_layouts should "
                                 "have same length!")

    def _prepare_input_arg(self, value, mesh, layout, desired):
        if layout is None:
            return value
        if not isinstance(value, DTensor) and not isinstance(value, Tensor):
            raise AssertionError("expecting input to be a torch.Tensor!")
        dt = L.to_dtensor(value, mesh, (layout,))
        if desired is not None and layout != desired:
            dt = dt.redistribute(mesh, (desired,))
        return dt.to_local() if self.use_local_output else dt

    def _prepare_input_fn(self, inputs, device_mesh):
        if self.input_layouts is None:
            return inputs
        if not isinstance(inputs, tuple):
            inputs = (inputs,)
        if len(inputs) != len(self.input_layouts):
            raise ValueError("module inputs and input_layouts should have same length!")
        return tuple(self._prepare_input_arg(x, device_mesh, layout, desired) for x, layout,
                     desired in zip(inputs, self.input_layouts, self.desired_input_layouts))

    def _prepare_input_kwarg_fn(self, inputs, kwarg_inputs, device_mesh):
        args = self._prepare_input_fn(inputs, device_mesh)
        kwargs = {key: self._prepare_input_arg(value, device_mesh,
                                               self.input_kwarg_layouts.get(key),
                                               self.desired_input_kwarg_layouts.get(key))
                  for key, value in kwarg_inputs.items()}
        return args, kwargs

    def _apply(self, module, device_mesh):
        if self.with_kwargs:
            module.register_forward_pre_hook(
                lambda _, inputs, kwargs: self._prepare_input_kwarg_fn(inputs, kwargs,
                                                                       device_mesh),
                with_kwargs=True)
        else:
            module.register_forward_pre_hook(
                lambda _, inputs: self._prepare_input_fn(inputs, device_mesh))
        return module

    def __repr__(self):
        return _repr(self, input_layouts=self.input_layouts,
                     desired_input_layouts=self.desired_input_layouts,
                     input_kwarg_layouts=self.input_kwarg_layouts,
                     desired_input_kwarg_layouts=self.desired_input_kwarg_layouts,
                     use_local_output=self.use_local_output)


class PrepareModuleOutput(ParallelStyle):
    """Lay out the module's outputs (None leaves one as it is) as the desired layouts after
    its forward: their local tensors when `use_local_output` (the default), else DTensors."""

    def __init__(self, *, output_layouts, desired_output_layouts, use_local_output=True):
        self.output_layouts = _as_tuple(output_layouts)
        self.desired_output_layouts = _as_tuple(desired_output_layouts)
        self.use_local_output = use_local_output
        if len(self.output_layouts) != len(self.desired_output_layouts):
            raise AssertionError("output_layouts and desired_output_layouts should have same "
                                 "length!")

    def _prepare_out_fn(self, outputs, device_mesh):
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        if len(outputs) != len(self.output_layouts):
            raise ValueError("module outputs and output_layouts should have same length!")
        prepared = []
        for out, layout, desired in zip(outputs, self.output_layouts,
                                        self.desired_output_layouts):
            if layout is not None:
                out = L.to_dtensor(out, device_mesh, (layout,))
                if layout != desired:
                    out = out.redistribute(device_mesh, (desired,))
                out = out.to_local() if self.use_local_output else out
            prepared.append(out)
        return prepared[0] if len(prepared) == 1 else tuple(prepared)

    def _apply(self, module, device_mesh):
        module.register_forward_hook(
            lambda _, inputs, outputs: self._prepare_out_fn(outputs, device_mesh))
        return module

    def __repr__(self):
        return _repr(self, output_layouts=self.output_layouts,
                     desired_output_layouts=self.desired_output_layouts,
                     use_local_output=self.use_local_output)


class PrepareModuleInputOutput(ParallelStyle):
    """`PrepareModuleInput` and `PrepareModuleOutput` on one module (`use_local_input` is the
    former's `use_local_output`)."""

    def __init__(self, *, input_layouts=None, desired_input_layouts=None,
                 input_kwarg_layouts=None, desired_input_kwarg_layouts=None,
                 use_local_input=False, output_layouts, desired_output_layouts,
                 use_local_output=True):
        self.prepare_module_input = PrepareModuleInput(
            input_layouts=input_layouts, desired_input_layouts=desired_input_layouts,
            input_kwarg_layouts=input_kwarg_layouts,
            desired_input_kwarg_layouts=desired_input_kwarg_layouts,
            use_local_output=use_local_input)
        self.prepare_module_output = PrepareModuleOutput(
            output_layouts=output_layouts, desired_output_layouts=desired_output_layouts,
            use_local_output=use_local_output)

    def _apply(self, module, device_mesh):
        self.prepare_module_input._apply(module, device_mesh)
        self.prepare_module_output._apply(module, device_mesh)
        return module

    def __repr__(self):
        i, o = self.prepare_module_input, self.prepare_module_output
        return _repr(self, input_layouts=i.input_layouts,
                     desired_input_layouts=i.desired_input_layouts,
                     input_kwarg_layouts=i.input_kwarg_layouts,
                     desired_input_kwarg_layouts=i.desired_input_kwarg_layouts,
                     use_local_input=i.use_local_output, output_layouts=o.output_layouts,
                     desired_output_layouts=o.desired_output_layouts,
                     use_local_output=o.use_local_output)
