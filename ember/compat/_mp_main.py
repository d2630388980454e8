"""The main module of a child process that multiprocessing starts by spawn or forkserver
while the parent runs a script under `python -m ember.compat` (whose main module names this
one): it installs the torch -> ember redirect first, then runs the script as `__mp_main__`, as
multiprocessing does, so the child's `import torch` is ember too and the functions the parent
handed over are found."""
import os
import runpy

from . import install

install()
globals().update(runpy.run_path(os.environ["EMBER_COMPAT_SCRIPT"], run_name="__mp_main__"))
