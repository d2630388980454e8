"""The floors of DESIGN.md, checked: every import in `ember/` (top-level or inside a function)
goes to the importer's own floor or a lower one. A lower floor never reaches up, so each
floor can be read, loaded and tested standing on the floors below it."""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "ember"

# Module (or package prefix) -> floor; the longest matching prefix wins. Keep in step with
# DESIGN.md's floor table.
FLOORS = {
    # 1: the ground: process state, dtypes, devices and their backends, layouts, hooks
    "ember._state": 1, "ember.dtypes": 1, "ember.device": 1, "ember._layout": 1,
    "ember._dtype_casts": 1, "ember._lazy": 1, "ember._frozen": 1, "ember._size": 1,
    "ember._meta": 1,
    "ember._memory_format": 1, "ember._allocator": 1, "ember.version": 1, "ember._qscheme": 1,
    "ember.torch_version": 1, "ember.__future__": 1, "ember._errors": 1, "ember.futures": 1,
    "ember._blas": 1, "ember._gemm": 1, "ember._vml": 1, "ember._dnnl": 1, "ember._dnnl_layers": 1, "ember._parallel": 1, "ember._torch_function": 1, "ember._select": 1, "ember._config_module": 1,
    "ember.backends": 1, "ember.utils": 1, "ember.utils.hooks": 1, "ember.utils._pytree": 1,
    # 2: the Tensor, and what speaks tensors with no op: printing, storages, sparse COO,
    # random generators (their state is a uint8 tensor)
    "ember._tensor": 2, "ember._autograd_meta": 2, "ember._printing": 2, "ember._storage": 2,
    "ember._sparse": 2,
    "ember._sparse_compressed": 2,
    "ember.random": 2, "ember.storage": 2, "ember.types": 2, "ember._symbolic": 2,
    "ember.utils._python_dispatch": 2,
    # 3: every tensor operation, and the namespaces that only re-export ops
    "ember.ops": 3, "ember.linalg": 3, "ember.fft": 3, "ember.special": 3, "ember.sparse": 3,
    "ember.functional": 3, "ember.return_types": 3, "ember.signal": 3,
    "ember.utils.dlpack": 3,
    # 4: the engine
    "ember.autograd": 4,
    # 5: what is built from ops and autograd
    "ember.nn": 5, "ember.optim": 5, "ember.utils.data": 5, "ember.utils.checkpoint": 5,
    "ember.utils._selective_checkpoint": 5,
    "ember.serialization": 5, "ember.cuda": 5, "ember.cpu": 5, "ember.amp": 5,
    "ember.accelerator": 5, "ember.distributions": 5, "ember.func": 5, "ember.profiler": 5,
    "ember.testing": 5, "ember.hub": 5, "ember.jit": 5, "ember.multiprocessing": 5,
    "ember.fx": 5, "ember.export": 5, "ember.onnx": 5,
    "ember.distributed": 5, "ember._environment": 5, "ember._streams": 5,
    "ember.utils.tensorboard": 5, "ember.utils.benchmark": 5, "ember.utils.model_zoo": 5,
    "ember.utils.collect_env": 5, "ember.utils.flop_counter": 5, "ember.utils.module_tracker": 5,
    "ember.quasirandom": 5,
    "ember.compiler": 5, "ember._dynamo": 5, "ember._inductor": 5, "ember._C": 5,
    "ember.library": 5, "ember._library": 5, "ember._utils": 5,
    "ember.ao": 5, "ember.quantization": 5, "ember.masked": 5, "ember.nested": 5,
    # torch.autograd.profiler starts the recorder that wraps the public ops
    "ember.autograd.profiler": 5,
    # 6: the public face (`import ember`), which re-exports all of the above; overrides lists
    # the public namespaces' functions (get_overridable_functions)
    "ember": 6, "ember.overrides": 6,
    # 7: libraries on top, importing ember as any user does (torchvision, `import torch`)
    "ember.vision": 7, "ember.compat": 7,
}

# (importer, imported) -> why the upward import must stay. Aim: empty.
ALLOWED = {
    ("ember.profiler._recorder", "ember"):
        "the profiler wraps the public functions where users call them (ember.add ...)",
}


def floor_of(module):
    parts = module.split(".")
    while parts:
        floor = FLOORS.get(".".join(parts))
        if floor is not None:
            return floor
        parts.pop()
    raise KeyError(f"{module} has no floor in tests/test_floors.py's FLOORS table")


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imported_modules(module, path):
    """Every ember module `module` imports, with the line: `from pkg import name` counts as
    importing `pkg.name` when that is a module, else `pkg` (whose __init__ runs)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
            targets = subs if len(subs) == len(node.names) else [base] + subs
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != module:
                yield target, node.lineno


def test_every_module_has_a_floor():
    for module in MODULES:
        floor_of(module)


def upward_imports():
    found = []
    for module, path in MODULES.items():
        for target, line in _imported_modules(module, path):
            if floor_of(target) > floor_of(module) and (module, target) not in ALLOWED:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module} "
                             f"(floor {floor_of(module)}) imports {target} "
                             f"(floor {floor_of(target)})")
    return found


def test_no_floor_imports_from_a_higher_one():
    found = upward_imports()
    assert not found, "upward imports:\n" + "\n".join(found)


@pytest.mark.parametrize("pair", sorted(ALLOWED))
def test_allowed_exceptions_are_still_needed(pair):
    module, target = pair
    assert any(t == target for t, _ in _imported_modules(module, MODULES[module])), (
        f"{module} no longer imports {target}: drop it from ALLOWED")
