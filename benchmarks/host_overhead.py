"""Host overhead of a training step on 'cuda', measured without a GPU (issue 11).

On a GPU ember's steps are bound by the Python that issues kernels, not by the kernels. This
runs the models of gpu_check.py (small shapes) on 'cuda' through the strict CuPy stand-in
(tests/_strict_cupy), which executes ember's cuda code on NumPy, and reports per step:
  xp       calls into the stand-in's array module: ufuncs, array functions, array methods,
           indexing and casts (see _XP_CALLS),
  launch   those of them that launch a kernel on a GPU,
  view     those that make a view or an empty array (no kernel, host time all the same),
  arrays   device arrays made (results and views),
  ember    Python function calls in ember's own code (cProfile),
  hooks    calls into ember's memory-statistics hook,
  ms       host time of a step without the profiler (stand-in's NumPy work included: compare
           only as before/after in one run on this machine).

    PYTHONPATH=. python benchmarks/host_overhead.py [--steps 3] [--top 25] [--only resnet]
                                                    [--sites 30] [--views]

--sites K prints the K ember functions that launch the most kernels a step, and what they
launch; with --views, the calls that make views (no kernel, host time all the same) count too.
"""
import collections
import cProfile
import os
import pstats
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ember  # noqa: E402
import gpu_check as g  # noqa: E402
from tests._strict_cupy import strict_cupy  # noqa: E402
from tests._strict_cupy import array as _array, module as _module  # noqa: E402


def _option(name, default):
    return type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def models(rng):
    tokens = rng.integers(0, 256, (4, 32))
    return [
        ("resnet18 b4 64x64 SGD", lambda lib: g.resnet18(lib, 10),
         rng.standard_normal((4, 3, 64, 64)).astype(np.float32), rng.integers(0, 10, 4), g._sgd),
        ("gpt 2x64 b4 t32 AdamW", lambda lib: g.gpt(lib, 256, 64, 4, 2, 32), tokens,
         np.roll(tokens, -1, axis=1), g._adamw),
        ("digits cnn b32 Adam", g.digits_cnn,
         rng.standard_normal((32, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, 32), g._adam),
    ]


# The stand-in's entry points that a step's code calls on CuPy: ufuncs (and their reductions),
# array functions, array methods, indexing and casts. Each is one call into CuPy's API on a GPU
# (most launch a kernel; views and reshapes launch none but cost host time all the same).
_XP_CALLS = {("module.py", n) for n in ("__call__", "call", "_numpy", "_take", "_take_along_axis",
                                        "_put_along_axis", "_ascontiguousarray", "_sort",
                                        "_argsort")} | \
    {("array.py", n) for n in ("call", "__getitem__", "__setitem__", "_astype", "_fill", "_view",
                               "_sort", "_argsort")} | \
    {("kernels.py", "__call__")}  # ember's own Elementwise/ReductionKernels


def counts(stats, steps):
    """Per-step figures from a pstats.Stats of `steps` steps."""
    kernels = arrays = ember_calls = hooks = 0
    for (path, _, name), (_, calls, *_rest) in stats.stats.items():
        if "/_strict_cupy/" in path:
            file = path.rsplit("/", 1)[-1]
            if (file, name) == ("array.py", "_of"):
                arrays += calls
            elif (file, name) in _XP_CALLS:
                kernels += calls
        elif "/ember/" in path:
            ember_calls += calls
            if path.endswith("_allocator.py"):
                hooks += calls
    return {k: v // steps for k, v in (("xp", kernels), ("arrays", arrays),
                                       ("ember", ember_calls), ("hooks", hooks))}


# what makes no kernel on CuPy: views, reshapes, empty arrays (the stand-in's own lists)
_NO_KERNEL = _array._NO_KERNEL | _module._NO_KERNEL


def _entry(frame):
    """(launches a kernel, its name) of a call into the stand-in's entry point `frame`."""
    code, local = frame.f_code, frame.f_locals
    file = code.co_filename.rsplit("/", 1)[-1]
    if code.co_name == "__getitem__":
        index = local.get("index", local.get("key"))
        return _array._advanced(index), "getitem"  # a basic index is a view
    if code.co_name == "__setitem__":
        return True, "setitem"
    owner = local.get("self")
    name = local.get("name") or getattr(owner, "name", None) or getattr(owner, "_name", None) \
        or code.co_name
    if file == "kernels.py":
        return True, name
    return name not in _NO_KERNEL and code.co_name != "_view", name


def launch_sites(step, steps, views=False):
    """({'launch': n, 'view': n} a step, Counter of (ember function, what it launched) over
    `steps` steps): each outermost call into the stand-in, by the ember function making it;
    with `views`, the calls that make views are counted as sites too."""
    kinds, sites = collections.Counter(), collections.Counter()

    def profile(frame, event, arg):
        if event != "call" or "/_strict_cupy/" not in frame.f_code.co_filename:
            return
        if (frame.f_code.co_filename.rsplit("/", 1)[-1], frame.f_code.co_name) not in _XP_CALLS:
            return
        caller = frame.f_back
        while caller is not None and "/_strict_cupy/" in caller.f_code.co_filename:
            key = (caller.f_code.co_filename.rsplit("/", 1)[-1], caller.f_code.co_name)
            if key in _XP_CALLS:
                return  # inside another entry point: counted there
            caller = caller.f_back
        launches, name = _entry(frame)
        kinds["launch" if launches else "view"] += 1
        while caller is not None and "/ember/" not in caller.f_code.co_filename:
            caller = caller.f_back
        if launches or views:
            where = "?" if caller is None else \
                f"{caller.f_code.co_filename.split('/ember/')[1]}:{caller.f_code.co_name}"
            sites[(where, name if launches else f"(view) {name}")] += 1
    sys.setprofile(profile)
    try:
        for _ in range(steps):
            step()
    finally:
        sys.setprofile(None)
    return {k: kinds[k] // steps for k in ("launch", "view")}, sites


def main():
    steps, top, top_sites = _option("--steps", 3), _option("--top", 0), _option("--sites", 0)
    only = _option("--only", "")
    rng = np.random.default_rng(0)
    with strict_cupy():
        for name, build, x, y, make_opt in models(rng):
            if only and only not in name:
                continue
            ember.manual_seed(0)
            step, _ = g.setup(ember, build(ember), make_opt, x, y, "cuda", g._cross_entropy)
            for _ in range(2):
                step()
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(steps):
                step()
            profile.disable()
            stats = pstats.Stats(profile)
            figures = counts(stats, steps)
            split, sites = launch_sites(step, steps, "--views" in sys.argv)
            figures = dict(figures, **split)
            t0 = time.perf_counter()
            for _ in range(steps):
                step()
            ms = (time.perf_counter() - t0) / steps * 1e3
            print(f"{name:26} " + " ".join(f"{k} {v:6d}" for k, v in figures.items())
                  + f"  total calls {stats.total_calls // steps:7d}  ms {ms:7.1f}", flush=True)
            if top:
                stats.sort_stats("tottime").print_stats(r"/ember/", top)
            for (where, what), n in sites.most_common(top_sites):
                print(f"    {n / steps:6.1f}  {what:34} {where}")


if __name__ == "__main__":
    main()
