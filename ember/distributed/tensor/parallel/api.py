"""`torch.distributed.tensor.parallel.api`: `parallelize_module`, which applies a plan of
parallel styles to a module and its submodules."""
import warnings
from fnmatch import fnmatch

from .style import ParallelStyle

__all__ = ["parallelize_module"]


def parallelize_module(module, device_mesh=None, parallelize_plan=None, *, src_data_rank=0):
    """Parallelize `module` over the 1-d `device_mesh` by `parallelize_plan`: a
    ParallelStyle for the module itself, or a dict from submodule paths to styles, where
    each dot-separated part of a path may hold `fnmatch` wildcards (`"layers.*.w1"`) and
    `""` is the module itself. Parameters are taken from group rank `src_data_rank` (None:
    each rank keeps its own). Returns `module`."""
    if device_mesh is None:
        raise RuntimeError("No device mesh is currently active!")
    if parallelize_plan is None:
        warnings.warn("No parallelize_plan is provided and auto-parallel is not supported at "
                      "the moment, so this parallelize_module call will do nothing.",
                      stacklevel=2)
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        parallelize_plan.src_data_rank = src_data_rank
        return parallelize_plan._apply(module, device_mesh)
    if not isinstance(parallelize_plan, dict):
        raise TypeError(f"Expect Union[ParallelStyle, Dict[str, ParallelStyle]] for "
                        f"parallelize_plan, {type(parallelize_plan)} found!")
    for path, style in parallelize_plan.items():
        if path == "":
            parallelize_module(module, device_mesh, style)
            continue
        token, *rest = path.split(".")
        children = [child for name, child in module.named_children() if fnmatch(name, token)]
        if not children:
            warnings.warn(f"Parallelize plan key '{path}' could not be resolved: no submodule "
                          f"matching token '{token}' in module {module}, skipping this plan "
                          f"entry.", stacklevel=2)
            continue
        for child in children:
            parallelize_module(child, device_mesh, {".".join(rest): style} if rest else style,
                               src_data_rank=src_data_rank)
    return module
