"""Every nn module path a PyTorch script imports resolves under ember.compat, in each of the
three ways scripts write it (run in a subprocess: compat rewires `torch` process-wide)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = r'''
import importlib
import torch
import torch.nn.modules.batchnorm
import torch.nn.modules.instancenorm
import torch.nn.modules.utils
import torch.nn.utils.prune as prune
import torch.nn.attention
import torch.nn.attention.bias
import torch.nn.common_types
import torch.nn.grad
import torch.nn.parallel.comm
import torch.nn.parallel.scatter_gather
from torch.nn.modules.batchnorm import BatchNorm2d, SyncBatchNorm, _BatchNorm, _NormBase
from torch.nn.modules.instancenorm import InstanceNorm1d, LazyInstanceNorm3d, _InstanceNorm
from torch.nn.modules.activation import MultiheadAttention
from torch.nn.modules.container import Container
from torch.nn.modules.utils import _pair, _triple, consume_prefix_in_state_dict_if_present
from torch.nn.modules.module import (register_module_forward_hook,
                                     register_module_full_backward_hook,
                                     register_module_buffer_registration_hook)
from torch.nn.modules.padding import _ReflectionPadNd
from torch.nn.modules.conv import _ConvTransposeNd
from torch.nn.utils.prune import l1_unstructured, remove, PruningContainer
from torch.nn.attention import SDPBackend, sdpa_kernel, WARN_FOR_UNFUSED_KERNELS
from torch.nn.attention.bias import causal_lower_right, CausalBias
from torch.nn.common_types import _size_2_t
from torch.nn.grad import conv2d_input, conv2d_weight
from torch.nn.parallel.comm import broadcast, gather
from torch.nn.parallel.scatter_gather import scatter_kwargs
from torch.nn.parallel.parallel_apply import get_a_var
from torch.nn.parallel import data_parallel, replicate, parallel_apply
names = ["torch.nn.modules.batchnorm", "torch.nn.modules.instancenorm", "torch.nn.modules.utils",
         "torch.nn.utils.prune", "torch.nn.attention", "torch.nn.common_types", "torch.nn.grad",
         "torch.nn.parallel.comm", "torch.nn.parallel.parallel_apply",
         "torch.nn.parallel.replicate", "torch.nn.parallel.scatter_gather",
         "torch.nn.parallel.data_parallel"]
print(all(importlib.import_module(n).__name__ == "ember" + n[5:] for n in names))
print(BatchNorm2d is torch.nn.BatchNorm2d, BatchNorm2d.__module__, _pair(3))
m = torch.nn.Linear(4, 2)
l1_unstructured(m, "weight", amount=0.5)
with sdpa_kernel(SDPBackend.MATH):
    print(sorted(m.state_dict()), torch.backends.cuda.flash_sdp_enabled())
print(torch.backends.cuda.flash_sdp_enabled())
'''


def test_nn_module_paths_import_under_compat(tmp_path):
    script = tmp_path / "imports.py"
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script)],
                         env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "True", "True ember.nn.modules.batchnorm (3, 3)",
        "['bias', 'weight_mask', 'weight_orig'] False", "True"]
