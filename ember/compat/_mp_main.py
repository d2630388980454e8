"""The main module of a process that `ember.multiprocessing` spawns for a script running
under `ember.compat`: it installs the torch -> ember redirect first, then runs the script
(as `__mp_main__`, like multiprocessing does), so the child's `import torch` is ember too and
the functions the parent handed over are found."""
import os
import runpy

from . import install

install()
globals().update(runpy.run_path(os.environ["EMBER_COMPAT_SCRIPT"], run_name="__mp_main__"))
