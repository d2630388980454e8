"""`python -m tests.programs.on_strict_cuda script.py [args]`: `python -m ember.compat
script.py [args]` with the strict CuPy stand-in (tests/_strict_cupy) installed as `cupy` for
the whole process, so a script's `--device cuda` runs the code a GPU runs on a machine without
one. Test-only: ember knows nothing of the stand-in; it finds `cupy` as it would on a GPU.

With STRICT_CUPY_TRANSFERS_FILE set, the stand-in's device-to-host transfers are written there
as JSON at the end (also when the script exits through SystemExit): {"count": all of them,
"lines": {a line of the script's source: the transfers made under it}}, so a test can hold a
program to the reads its own lines ask for (`loss.item()`, `torch.save`) and find any other.
With STRICT_CUPY_FULL_FLOAT32=1, convolutions compute in full float32 rather than in cuDNN's
TF32 (`torch.backends.cudnn.allow_tf32 = False`), for a test that compares them with the
CPU's."""
import collections
import json
import os
import sys
import traceback

import ember  # noqa: F401 (strict_cupy() swaps ember's 'cuda' backend: ember comes first)
from ember.compat.__main__ import main
from tests._strict_cupy import TRANSFERS, strict_cupy


def _count_by_script_line(script):
    """Makes TRANSFERS.add also count each transfer under the innermost line of `script` on
    the stack (its source text; '<outside the script>' when the script is not on it)."""
    lines = collections.Counter()
    add = TRANSFERS.add

    def add_and_place():
        add()
        frames = [f for f in traceback.extract_stack() if f.filename == script]
        lines[frames[-1].line.strip() if frames else "<outside the script>"] += 1

    TRANSFERS.add = add_and_place  # this instance only: the class stays as it is
    return lines


def run(argv):
    path = os.environ.get("STRICT_CUPY_TRANSFERS_FILE")
    if os.environ.get("STRICT_CUPY_FULL_FLOAT32") == "1":
        ember.backends.cudnn.allow_tf32 = False
    with strict_cupy():
        start = TRANSFERS.count
        # python -m ember.compat compiles the script under its absolute path, as python does
        lines = _count_by_script_line(os.path.abspath(argv[0])) if path and argv else None
        try:
            main(argv)
        finally:
            if lines is not None:
                del TRANSFERS.add
                with open(path, "w") as f:
                    json.dump({"count": TRANSFERS.count - start, "lines": lines}, f, indent=1)


if __name__ == "__main__":
    run(sys.argv[1:])
