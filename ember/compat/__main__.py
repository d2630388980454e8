"""`python -m ember.compat ...`: run a PyTorch program on ember, unchanged, started the ways
`python` starts one, with the `sys.argv` and `sys.path[0]` python would give it:

    python -m ember.compat script.py [args]    sys.argv = ['script.py', args...]
    python -m ember.compat -m module [args]    sys.argv = ['/path/of/module.py', args...]
    python -m ember.compat -c 'code' [args]    sys.argv = ['-c', args...]
    python -m ember.compat - [args]            the program read from stdin; sys.argv = ['-', ...]

Without a program (python would open its interactive prompt) it prints the usage and exits
with 2, python's status for a command-line error. The program's own exit status (SystemExit,
or 1 after an uncaught exception's traceback) is the process's.
"""
import importlib.machinery
import os
import runpy
import sys

from . import _target, install

USAGE = """usage: python -m ember.compat [-h] (script.py | -m module | -c code | -) [args ...]
Runs a PyTorch program with `import torch` (and torchvision) resolving to ember.
  script.py  run the file as __main__ (sys.argv[0] is its path, sys.path[0] its folder)
  -m module  run the module as __main__, as `python -m module`
  -c code    run the code, as `python -c code` (sys.argv[0] is '-c')
  -          read the program from standard input
  -h, --help show this message and exit"""


def _main_module(argv):
    sys.argv = argv
    main = type(sys)("__main__")
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    return main


def _run_source(source, filename, argv):
    main = _main_module(argv)
    exec(compile(source, filename, "exec"), main.__dict__)


def _run_script(path, argv):
    """Runs the script as `python path` would, with one difference children see: a process
    that multiprocessing starts by spawn or forkserver (torch.multiprocessing, DataLoader
    workers, a plain `mp.Process`) re-runs the parent's main script first, and would import
    the real torch there. Multiprocessing starts a main module that has a spec by that
    module's name, so the script's module names `ember.compat._mp_main`, which installs compat
    in the child and then runs the script (found through the environment, which children
    inherit). Python (3.9+) makes the script's `__file__` and the file name in its tracebacks
    and warnings absolute, while sys.argv[0] stays as typed; so does this."""
    path = os.path.abspath(path)
    os.environ["EMBER_COMPAT_SCRIPT"] = path
    with open(path, "rb") as f:
        source = f.read()
    main = _main_module(argv)
    main.__file__ = path
    main.__spec__ = importlib.machinery.ModuleSpec("ember.compat._mp_main", None)
    exec(compile(source, path, "exec"), main.__dict__)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        print(USAGE, file=sys.stderr)
        raise SystemExit(2)
    first = argv[0]
    if first in ("-h", "--help"):
        print(USAGE)
        return
    if first in ("-m", "-c") and len(argv) < 2:
        print(f"Argument expected for the {first} option\n{USAGE}", file=sys.stderr)
        raise SystemExit(2)
    if first.startswith("-") and first not in ("-m", "-c", "-"):
        print(f"unknown option {first}\n{USAGE}", file=sys.stderr)
        raise SystemExit(2)
    install()
    if first == "-m":
        sys.path[0] = os.getcwd()  # python -m puts the working directory first
        sys.argv = argv[1:]
        # `-m torch.x` runs ember.x itself: runpy needs the real module's code
        runpy.run_module(_target(argv[1]) or argv[1], run_name="__main__", alter_sys=True)
    elif first == "-c":
        sys.path[0] = ""  # python -c: the working directory, as ''
        _run_source(argv[1], "<string>", ["-c"] + argv[2:])
    elif first == "-":
        sys.path[0] = ""
        _run_source(sys.stdin.read(), "<stdin>", argv)
    else:
        if not os.path.exists(first):
            print(f"{sys.orig_argv[0]}: can't open file {os.path.abspath(first)!r}: [Errno 2] No "
                  "such file or directory", file=sys.stderr)
            raise SystemExit(2)
        # python puts the script's folder first on sys.path, so its sibling modules import
        sys.path[0] = os.path.dirname(os.path.abspath(first))
        if os.path.isfile(first):
            _run_script(first, argv)
        else:  # a folder or zip file with a __main__.py
            sys.argv = argv
            runpy.run_path(first, run_name="__main__")


if __name__ == "__main__":
    main()
