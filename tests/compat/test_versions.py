"""Under ember.compat, `torch.__version__` and `torchvision.__version__` name the PyTorch and
torchvision releases whose API ember follows (ember's release as the local label) and compare
as PyTorch's; uninstall() gives ember back its own (a subprocess keeps real torch away)."""
import subprocess
import sys

CODE = """
import ember, ember.vision, ember.compat
before = (str(ember.__version__), ember.vision.__version__)
ember.compat.install()
import torch, torchvision
from torch.torch_version import TorchVersion
assert isinstance(torch.__version__, TorchVersion)
assert torch.__version__ >= "2.0" and torch.__version__ > (1, 13) and torch.__version__ < "2.14"
assert torch.__version__.split("+")[0] == "2.13.0"
assert torch.version.__version__ == torch.__version__
assert tuple(int(x) for x in torchvision.__version__.split("+")[0].split(".")) >= (0, 15)
during = (str(torch.__version__), torchvision.__version__)
ember.compat.uninstall()
print(before, during, (str(ember.__version__), ember.vision.__version__))
"""


def test_versions_under_compat_and_after():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("('0.1.0', '0.1.0') ('2.13.0+ember.0.1.0', "
                                  "'0.28.0+ember.0.1.0') ('0.1.0', '0.1.0')")
