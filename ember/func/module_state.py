"""`torch.func.stack_module_state` (the parameters and buffers of several copies of a model,
stacked along a new leading dimension, ready for `vmap(functional_call(...))` ensembling) and
`replace_all_batch_norm_modules_` (batch norm that uses batch statistics only, as vmap over a
model needs)."""
from ..nn.modules.batchnorm import _BatchNorm
from ..ops.shape import stack

__all__ = ["stack_module_state", "replace_all_batch_norm_modules_"]


def _stacked_leaf(tensors, name):
    grads = [t.requires_grad for t in tensors]
    if any(grads) and not all(grads):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    # a fresh leaf the optimizer can own, not a view of the models' tensors
    return result.detach().requires_grad_() if all(grads) else result


def stack_module_state(models):
    """(params, buffers): each name mapped to its tensors of every model, stacked."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stacked_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    buffers = {k: _stacked_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers


def _drop_running_stats(module):
    if isinstance(module, _BatchNorm) and module.track_running_stats:
        module.running_mean = None
        module.running_var = None
        module.num_batches_tracked = None
        module.track_running_stats = False


def replace_all_batch_norm_modules_(root):
    """In place: every batch norm module under `root` (root included) stops tracking running
    statistics (running_mean, running_var and num_batches_tracked become None); returns root."""
    _drop_running_stats(root)
    for module in root.modules():
        _drop_running_stats(module)
    return root
