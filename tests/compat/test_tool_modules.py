"""The tool modules of issue 10 (torch.utils.tensorboard/benchmark/model_zoo,
torch.autograd.profiler/profiler_util, torch.profiler.profiler, torch.library,
torch.compiler) are real modules under ember.compat: the import statement, from-import and
importlib all give ember's module."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODULES = ["utils.tensorboard", "utils.benchmark", "utils.model_zoo", "autograd.profiler",
           "autograd.profiler_util", "profiler.profiler", "library", "compiler"]

SCRIPT = """
import importlib
import torch
import torch.utils.tensorboard
import torch.utils.benchmark
import torch.utils.model_zoo
import torch.autograd.profiler
import torch.autograd.profiler_util
import torch.profiler.profiler
import torch.library
import torch.compiler
from torch.utils.tensorboard import SummaryWriter
from torch.utils.benchmark import Timer, Compare
from torch.utils.model_zoo import load_url
from torch.autograd.profiler import profile, record_function, emit_nvtx
from torch.autograd.profiler_util import EventList
from torch.profiler.profiler import tensorboard_trace_handler, schedule
from torch.library import custom_op, register_autograd
from torch.compiler import is_compiling, disable
for name in {modules!r}:
    via_statement = eval("torch." + name)
    via_importlib = importlib.import_module("torch." + name)
    assert via_statement is via_importlib, name
    print(via_importlib.__name__)
print(Timer("torch.ones(2)").timeit(3).number_per_run, is_compiling())
"""


def test_import_forms_resolve_to_ember_modules(tmp_path):
    pytest.importorskip("tensorboard")
    script = tmp_path / "tools.py"
    script.write_text(SCRIPT.format(modules=MODULES))
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ember." + m for m in MODULES] + ["3", "False"]
