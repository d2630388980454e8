"""`python -m ember.compat script.py args...`: run a PyTorch script on ember, unchanged."""
import runpy
import sys

from . import install


def main():
    if len(sys.argv) < 2:
        print("usage: python -m ember.compat script.py [args...]", file=sys.stderr)
        raise SystemExit(2)
    install()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    if script == "-m":
        module = sys.argv[1]
        sys.argv = sys.argv[1:]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
