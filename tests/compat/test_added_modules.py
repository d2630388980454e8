"""The modules training scripts import that ember added for them are real modules under
ember.compat: `import torch.x.y`, `from torch.x.y import name` and importlib all give ember's
module (one subprocess for all)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODULES = {
    "distributed.elastic": None,
    "distributed.elastic.multiprocessing": None,
    "distributed.elastic.multiprocessing.errors": "record",
    "distributed.elastic.multiprocessing.errors.error_handler": "ErrorHandler",
    "distributed.elastic.multiprocessing.errors.handlers": "get_error_handler",
    "distributed.launch": "parse_args",
    "distributed.nn": "all_reduce",
    "distributed.nn.functional": "all_gather",
    "backends.mkl": "is_available",
    "backends.cpu": "get_cpu_capability",
    "backends.quantized": "QuantizedEngine",
    "backends.opt_einsum": "get_opt_einsum",
    "backends.mha": "get_fastpath_enabled",
    "backends.nnpack": "set_flags",
    "backends.xnnpack": "XNNPACKEngine",
    "utils.collect_env": "get_pretty_env_info",
    "utils.flop_counter": "FlopCounterMode",
    "utils.module_tracker": "ModuleTracker",
    "quasirandom": "SobolEngine",
}

SCRIPT = """
import importlib
import torch
{imports}
for name in {names!r}:
    via_statement = eval("torch." + name)
    via_importlib = importlib.import_module("torch." + name)
    assert via_statement is via_importlib, name
    print(via_importlib.__name__)
print(torch.quasirandom.SobolEngine is SobolEngine, torch.utils.flop_counter.FlopCounterMode
      is FlopCounterMode)
"""


def test_import_forms_resolve_to_ember_modules(tmp_path):
    imports = "\n".join(f"import torch.{name}" + (f"\nfrom torch.{name} import {attr}"
                                                  if attr else "")
                        for name, attr in MODULES.items())
    script = tmp_path / "modules.py"
    script.write_text(SCRIPT.format(imports=imports, names=list(MODULES)))
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script)],
                         env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ember." + m for m in MODULES] + ["True", "True"]
