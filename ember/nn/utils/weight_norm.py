"""Weight Normalization from https://arxiv.org/abs/1602.07868 (as torch.nn.utils.weight_norm).

The classic, hook-based form: `weight` is replaced by parameters `weight_g` (magnitude) and
`weight_v` (direction), and a forward pre-hook recomputes `weight = v * (g / ||v||)` before every
forward call.
"""
import warnings

from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]

_DEPRECATION = ("`torch.nn.utils.weight_norm` is deprecated in favor of "
                "`torch.nn.utils.parametrizations.weight_norm`.")


def _norm_except_dim(v, pow=2, dim=0):
    """torch.norm_except_dim: the `pow`-norm over every dim but `dim`, keeping dims (shape 1
    there); dim == -1 means over the whole tensor (a 0-d result)."""
    if dim == -1:
        return v.norm(pow)
    nd = v.dim()
    if not -nd <= dim < max(nd, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}],"
                         f" but got {dim})")
    d = dim % max(nd, 1)
    if nd <= 1:  # nothing to reduce: |v| per element (torch: v.view(n, -1).norm(pow, 1))
        return v.reshape(-1, 1).norm(pow, dim=1).reshape(v.shape)
    others = tuple(i for i in range(nd) if i != d)
    return v.norm(pow, dim=others, keepdim=True)


def _weight_norm(v, g, dim=0):
    """torch._weight_norm: v * (g / norm_except_dim(v, 2, dim))."""
    if v.device != g.device:
        raise RuntimeError(f"weight_norm: expected v and g to be on the same device, but "
                           f"got v on {v.device} and g on {g.device}")
    return v * (g / _norm_except_dim(v, 2, dim))


class WeightNorm:
    name: str
    dim: int

    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn(_DEPRECATION, FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}")

        if dim is None:
            dim = -1

        fn = WeightNorm(name, dim)

        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying weight normalization")
        # remove w from parameter list
        del module._parameters[name]

        # add g and v as new parameters and express w as g/||v|| * v
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))

        # recompute weight before every forward()
        module.register_forward_pre_hook(fn)

        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    r"""Apply weight normalization to a parameter in the given module.

    .. math::
         \mathbf{w} = g \dfrac{\mathbf{v}}{\|\mathbf{v}\|}

    Replaces the parameter `name` by `name + '_g'` (magnitude, the norm over every dim but `dim`,
    keeping dims) and `name + '_v'` (direction); a forward pre-hook recomputes the weight before
    every forward call. `dim=None` computes one norm over the whole tensor.

    Returns the module.
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    r"""Remove the weight normalization reparameterization from a module: `name` becomes a plain
    parameter holding the current normalized weight."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module

    raise ValueError(f"weight_norm of '{name}' not found in {module}")
