"""The device check (issue 11): ember on a real NVIDIA GPU through CuPy, in one run of under
8 minutes.

1. The op table on 'cuda' (tests/ops/test_ops_cuda.py), the training steps and device tests
   (tests/cuda), the seeds and the main job with EMBER_TEST_REAL_CUDA=1: the tests' CuPy
   stand-in steps aside for the real CuPy.
2. Training steps, ember beside PyTorch on the same GPU (same class body, same initial
   weights and batch, alternating rounds as in `_timing.py`; each step ends in
   `loss.item()`, which waits for the GPU; the first losses agree except where dropout draws
   differ): ResNet-18 (batch 64, 224x224, SGD momentum), a
   GPT-style LM (6 layers, width 384, 6 heads, block 256, batch 32, AdamW) and the main
   job's CNN (batch 32). Prints step times, the ratio ember / PyTorch and both first losses.
3. NCCL on the one GPU (ember.distributed "nccl", world size 1 and a second group): values,
   and all_reduce MB/s at 1 MB and 64 MB beside torch's NCCL; a failure here is printed and
   the rest of the check still runs.
4. The probes (tests/_strict_cupy/probe.py): where CuPy answers otherwise than the stand-in
   models it.

    python benchmarks/gpu_check.py [--test-seconds 300] [--no-tests] [--no-timings]
                                   [--profile DIR]
        # (each test's result goes to $EMBER_GPU_LOG, default gpu_tests.log; --profile
        # writes DIR/profile_<model>.txt: cProfile of ember's steps, where the host time goes)
    python benchmarks/gpu_check.py --stand-in --quick   # rehearsal without a GPU: ember on
        # the strict stand-in, PyTorch on the CPU, small shapes, no pytest stage

Before it, without a GPU: benchmarks/nvcc_check.py compiles every kernel of ember's as CuPy
would (a kernel NVRTC refused would turn all of them off, with a warning, on the GPU).
"""
import importlib.util
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ember  # noqa: E402
from _timing import compare, header, row  # noqa: E402

STAND_IN = "--stand-in" in sys.argv
QUICK = "--quick" in sys.argv
PROFILE = sys.argv[sys.argv.index("--profile") + 1] if "--profile" in sys.argv else None


# ---- models: one class body for both libraries -------------------------------------------------
def resnet18(lib, classes=1000):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

        def forward(self, x):
            y = lib.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return lib.relu(y + (x if self.down is None else self.down(x)))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, classes)]
    return nn.Sequential(*layers)


def gpt(lib, vocab, width, heads, layers, block):
    nn, F = lib.nn, lib.nn.functional

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                     nn.Linear(4 * width, width))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(block, width)
            self.layers = nn.Sequential(*[Layer() for _ in range(layers)])
            self.ln = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)
            self.head.weight = self.tok.weight

        def forward(self, idx):
            pos = lib.arange(idx.shape[1], device=idx.device)
            return self.head(self.ln(self.layers(self.tok(idx) + self.pos(pos))))
    return GPT()


def digits_cnn(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.25), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))


# ---- one training step per library -------------------------------------------------------------
def _same_weights(ember_model, torch_model, torch):
    state = {k: torch.tensor(v.detach().cpu().numpy()) for k, v in ember_model.state_dict().items()}
    torch_model.load_state_dict(state)


def setup(lib, model, make_opt, x, y, device, loss_of):
    model = model.to(device)
    opt = make_opt(lib, model)
    xt, yt = lib.tensor(x).to(device), lib.tensor(y).to(device)
    losses = []

    def step():
        opt.zero_grad()
        loss = loss_of(lib, model(xt), yt)
        loss.backward()
        opt.step()
        losses.append(loss.item())  # waits for the device: the step's time is all in
    return step, losses


def _cross_entropy(lib, out, y):
    return lib.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))


def _sgd(lib, model):
    return lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def _adamw(lib, model):
    return lib.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)


def _adam(lib, model):
    return lib.optim.Adam(model.parameters(), lr=2e-3)


def cases(rng):
    if QUICK:
        r18 = (lambda lib: resnet18(lib, 10), rng.standard_normal((2, 3, 64, 64)), 10)
        g = (lambda lib: gpt(lib, 256, 64, 4, 2, 32), None, 256, (4, 32))
    else:
        r18 = (resnet18, rng.standard_normal((64, 3, 224, 224)), 1000)
        g = (lambda lib: gpt(lib, 8192, 384, 6, 6, 256), None, 8192, (32, 256))
    tokens = rng.integers(0, g[2], g[3])
    images, labels = r18[1].astype(np.float32), rng.integers(0, r18[2], len(r18[1]))
    return [
        ("ResNet-18, SGD momentum", r18[0], images, labels, _sgd),
        ("GPT-style LM, AdamW", g[0], tokens, np.roll(tokens, -1, axis=1), _adamw),
        ("main job's CNN, Adam, batch 32", digits_cnn,
         rng.standard_normal((32, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, 32), _adam),
        # The same steps on an eighth of the batch: the host issues the same kernels for an
        # eighth of the GPU's work, so a time that hardly falls says the step is bound by the
        # host issuing kernels, and one that falls near 8x says it is bound by the kernels.
        ("  ResNet-18 on 1/8 of the batch", r18[0], images[:len(images) // 8 or 1],
         labels[:len(labels) // 8 or 1], _sgd),
        ("  GPT on 1/8 of the batch", g[0], tokens[:len(tokens) // 8 or 1],
         np.roll(tokens, -1, axis=1)[:len(tokens) // 8 or 1], _adamw),
    ]


def timings(torch):
    torch_device = "cpu" if STAND_IN else "cuda"
    rng = np.random.default_rng(0)
    print("TF32 (ember, torch): convolutions",
          (ember.backends.cudnn.allow_tf32, torch.backends.cudnn.allow_tf32), "matmuls",
          (ember.backends.cuda.matmul.allow_tf32, torch.backends.cuda.matmul.allow_tf32))
    print(header("training step on cuda"), "  first losses (ember, torch)")
    for name, build, x, y, make_opt in cases(rng):
        ember.manual_seed(0)
        mine_model = build(ember)
        theirs_model = build(torch)
        _same_weights(mine_model, theirs_model, torch)
        ours, our_losses = setup(ember, mine_model, make_opt, x, y, "cuda", _cross_entropy)
        theirs, their_losses = setup(torch, theirs_model, make_opt, x, y, torch_device,
                                     _cross_entropy)
        ours()
        theirs()
        first = (our_losses[0], their_losses[0])
        rounds, number = (2, 1) if QUICK else (5, 3)
        mine, other, ratio = compare(ours, theirs, number, rounds, warmup=1)
        print(row(name, mine, other, ratio, "ms", 1e3), f"  {first[0]:.4f} {first[1]:.4f}")
        if PROFILE:
            profile_steps(name, ours, PROFILE)


def profile_steps(name, step, directory, steps=5):
    """cProfile of `steps` of ember's training steps into directory/profile_<model>.txt, by
    own time and by cumulative time: on a GPU ember's step is bound by the host issuing
    kernels, and this says which Python does it."""
    import cProfile
    import io
    import pstats
    profiler = cProfile.Profile()
    profiler.runcall(lambda: [step() for _ in range(steps)])
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    print(f"{name}: {steps} steps, {stats.total_calls} calls "
          f"({stats.total_calls // steps} per step)", file=text)
    stats.sort_stats("tottime").print_stats(60)
    stats.sort_stats("cumulative").print_stats(60)
    os.makedirs(directory, exist_ok=True)
    slug = "".join(c if c.isalnum() else "_" for c in name.split(",")[0]).strip("_")
    with open(os.path.join(directory, f"profile_{slug}.txt"), "w") as out:
        out.write(text.getvalue())


def op_overhead(torch):
    """Host microseconds per op on cuda (small ops, a convolution's product, a sum over rows, a
    GPT Linear), CuPy's own beside ember's and PyTorch's: the floor under a step that is bound
    by the host issuing kernels, as ember's steps are (see the 1/8-batch rows of `cases`)."""
    import cupy
    torch_device = "cpu" if STAND_IN else "cuda"
    a = cupy.ones((64, 64), dtype=cupy.float32)
    x = ember.ones(64, 64, device="cuda")
    t = torch.ones(64, 64, device=torch_device)
    # a convolution's product as im2col makes it (columns 4096x576 by a 576x64 weight), plain
    # and with the columns transposed, and a sum over the columns' rows
    c, cw = cupy.ones((4096, 576), dtype=cupy.float32), cupy.ones((576, 64), dtype=cupy.float32)
    xc, xw = ember.ones(4096, 576, device="cuda"), ember.ones(576, 64, device="cuda")
    tc, tw = torch.ones(4096, 576, device=torch_device), torch.ones(576, 64, device=torch_device)
    ct, xct, tct = c.T.copy(), xc.T.contiguous(), tc.T.contiguous()  # (576, 4096)
    # a GPT Linear, 3-D activations by a transposed weight (batch 2: at the bench's batch 32,
    # 100 calls back to back measured the GPU's time, 200 us a call, not the host's)
    h, hw = cupy.ones((2, 256, 384), dtype=cupy.float32), cupy.ones((1152, 384), cupy.float32)
    xh, xhw = ember.ones(2, 256, 384, device="cuda"), ember.ones(1152, 384, device="cuda")
    th, thw = torch.ones(2, 256, 384, device=torch_device), torch.ones(1152, 384,
                                                                      device=torch_device)
    print(header("host time per op, float32") + "   cupy")
    for name, cp_op, op, args in (
            ("add 64x64", lambda: a + a, lambda z: z + z, (x, t)),
            ("relu 64x64", lambda: cupy.maximum(a, 0), lambda z: z.relu(), (x, t)),
            ("matmul 64x64", lambda: a @ a, lambda z: z @ z, (x, t)),
            ("matmul 4096x576x64", lambda: c @ cw, lambda z: z[0] @ z[1], ((xc, xw), (tc, tw))),
            ("matmul (576x4096).T", lambda: ct.T @ cw, lambda z: z[0].T @ z[1],
             ((xct, xw), (tct, tw))),
            ("sum over rows 4096x576", lambda: c.sum(0), lambda z: z[0].sum(0),
             ((xc, xw), (tc, tw))),
            ("linear 2x256x384 -> 1152", lambda: h @ hw.T, lambda z: z[0] @ z[1].T,
             ((xh, xhw), (th, thw))),
            ("  (cupy's as 2-D)", lambda: (h.reshape(-1, 384) @ hw.T).reshape(2, 256, -1),
             lambda z: z[0] @ z[1].T, ((xh, xhw), (th, thw)))):
        raw = compare(cp_op, None, 100, 5)[0]
        mine, other, ratio = compare(lambda: op(args[0]), lambda: op(args[1]), 100, 5)
        print(row(name, mine, other, ratio, "us", 1e6), f" {raw * 1e6:8.2f}us")
    cupy.cuda.Device().synchronize()
    # CuPy's own entry points for the calls ember's steps are made of: a product (matmul at
    # ~95 us a call was a step's costliest call on the H200's host), its dot and cuBLAS called
    # straight, a user kernel of each kind, a view, a copy
    print("  cupy alone, host us per call:")
    kernel = cupy.ElementwiseKernel("T x", "T y", "y = x + x", "gpu_check_twice")
    total = cupy.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "gpu_check_sum")
    for name, cp_op in (("matmul 64x64", lambda: cupy.matmul(a, a)),
                        ("dot 64x64", lambda: cupy.dot(a, a)),
                        ("cublas sgemm 64x64", _direct_sgemm(cupy, a)),
                        ("ElementwiseKernel 64x64", lambda: kernel(a)),
                        ("ReductionKernel rows 4096x576", lambda: total(c, axis=0)),
                        ("reshape", lambda: a.reshape(4096)),
                        ("copy 64x64", lambda: a.copy())):
        if cp_op is not None:
            print(f"    {name:32s} {compare(cp_op, None, 100, 5)[0] * 1e6:8.2f}us")
    cupy.cuda.Device().synchronize()


def _direct_sgemm(cupy, a):
    """a @ a by cuBLAS's sgemm called straight (row-major as column-major: C^T = A^T A^T), or
    None where CuPy's cuBLAS binding is not there (the stand-in)."""
    try:
        from cupy_backends.cuda.libs import cublas
    except ImportError:
        return None
    handle = cupy.cuda.device.get_cublas_handle()
    out = cupy.empty_like(a)
    one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
    n = a.shape[0]

    def sgemm():
        cublas.sgemm(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, n, n, n,
                     one.ctypes.data, a.data.ptr, n, a.data.ptr, n, zero.ctypes.data,
                     out.data.ptr, n)
    return sgemm


def _torch_nccl_world_of_one(torch, store_dir):
    """torch.distributed with NCCL, world size 1 (None where torch cannot start it here)."""
    try:
        import torch.distributed as tdist
        if not (torch.cuda.is_available() and tdist.is_nccl_available()):
            return None
        tdist.init_process_group("nccl", store=tdist.FileStore(os.path.join(store_dir, "t"), 1),
                                 rank=0, world_size=1)
        return tdist
    except Exception as e:  # (a CPU build, no driver ...): ember's figures alone
        print(f"  torch's nccl did not start: {type(e).__name__}: {e}")
        return None


def nccl_check(torch):
    """ember.distributed's "nccl" on this one GPU: world size 1 and a second group (what one
    GPU can run), the values of all_reduce, broadcast and all_gather in each, and all_reduce
    MB/s at 1 MB and 64 MB beside torch's NCCL world of one where it starts."""
    import tempfile

    import ember.distributed as dist
    store_dir = tempfile.mkdtemp(prefix="ember-gpu-check-")
    dist.init_process_group("nccl", store=dist.FileStore(os.path.join(store_dir, "e"), 1),
                            rank=0, world_size=1)
    tdist = None
    try:
        second = dist.new_group([0])
        for name, group in (("world", None), ("new_group", second)):
            a = ember.arange(1000, dtype=ember.float32, device="cuda")
            dist.all_reduce(a, group=group)
            dist.broadcast(a, 0, group=group)
            out = [ember.zeros(1000, device="cuda")]
            dist.all_gather(out, a, group=group)
            ok = a.tolist() == out[0].tolist() == list(range(1000))
            print(f"nccl {name}: all_reduce, broadcast, all_gather values "
                  f"{'agree' if ok else 'DIFFER'}")
        tdist = _torch_nccl_world_of_one(torch, store_dir)
        print(header("nccl all_reduce, world size 1"))
        for mb in (1, 64):
            x = ember.ones(mb << 18, device="cuda")  # float32: mb MiB

            def ours():
                dist.all_reduce(x)
                ember.cuda.synchronize()

            def theirs(y=torch.ones(mb << 18, device="cuda") if tdist is not None else None):
                tdist.all_reduce(y)
                torch.cuda.synchronize()
            mine, other, ratio = compare(ours, theirs if tdist is not None else None,
                                         3 if QUICK else 20, 3 if QUICK else 7)
            # MB/s, the inverse of seconds per call: the ratio printed is ember's / torch's
            print(row(f"{mb} MB", mb / mine, None if other is None else mb / other,
                      None if ratio is None else 1 / ratio, "MB/s", 1.0))
    finally:
        dist.destroy_process_group()
        if tdist is not None:
            tdist.destroy_process_group()


def _guarded(stage, *args):
    """A stage whose failure is printed, so the rest of the check still runs."""
    try:
        stage(*args)
    except Exception as e:
        import traceback
        print(f"{stage.__name__} failed: {type(e).__name__}: {e}")
        traceback.print_exc(limit=4)


# What runs on the GPU: the op table, the training steps and device tests, the seeds, the
# main job and vision on cuda. The stand-in's own tests and its transfer counts skip there.
_TESTS = ["tests/cuda", "tests/test_seeds.py", "tests/examples/test_train_digits.py",
          "tests/vision/test_vision_on_cuda.py", "tests/ops/test_ops_cuda.py",
          "tests/distributed/test_nccl.py"]  # (its one-GPU tests; several ranks skip)


def pytest_stage(seconds, log, tests=_TESTS):
    """The tests above on the real GPU (on the stand-in in a rehearsal), in parallel workers
    when pytest-xdist is there, each result written to `log` as it comes (a stage cut short
    by `seconds` keeps what it did)."""
    env = dict(os.environ, EMBER_TEST_REAL_CUDA="0" if STAND_IN else "1", PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-v",
               "--no-header",
               "-rfE", "--maxfail=500"] + tests
    if importlib.util.find_spec("xdist") is not None:
        command[3:3] = ["-n", str(min(8, os.cpu_count() or 1))]
    started = time.perf_counter()
    with open(log, "w") as out:
        try:
            subprocess.run(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                           timeout=seconds)
            cut = ""
        except subprocess.TimeoutExpired:
            cut = f" (cut at {seconds} s)"
    lines = open(log).read().splitlines()
    results = {}
    for line in lines:
        for word in ("PASSED", "FAILED", "SKIPPED", "XFAIL", "ERROR"):
            if f" {word} " in f" {line} " and "::" in line:
                results[word] = results.get(word, 0) + 1
    print(f"tests on cuda, {time.perf_counter() - started:.0f} s{cut}: {results}")
    failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    print("\n".join(failed[:40] or [line for line in lines if " FAILED " in line][:40]))


def probe_stage():
    """tests/_strict_cupy/probe.py: where the real CuPy answers otherwise than the stand-in
    models it (its lines marked !!), and the TF32 product's bits."""
    command = [sys.executable, "-m", "tests._strict_cupy.probe"] + \
        (["--stand-in"] if STAND_IN else [])
    lines = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                           timeout=180).stdout.splitlines()
    differ = [line for line in lines if line.startswith("!!")]
    print(f"probes: {len(lines)} run, {len(differ)} differ from the stand-in")
    print("\n".join(differ + [line for line in lines if "TF32" in line and line not in differ]))


def _option(name, default):
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def main():
    import torch
    log = os.environ.get("EMBER_GPU_LOG", os.path.join(ROOT, "gpu_tests.log"))
    if STAND_IN:
        from tests._strict_cupy import strict_cupy
        if "--no-tests" not in sys.argv:
            pytest_stage(_option("--test-seconds", 300), log, ["tests/cuda"] if QUICK else _TESTS)
        with strict_cupy():
            if "--no-timings" not in sys.argv:
                op_overhead(torch)
                timings(torch)
            _guarded(nccl_check, torch)
        _guarded(probe_stage)
        return
    import cupy
    print(ember.cuda.get_device_name(0), "| torch", torch.__version__, "| cupy",
          cupy.__version__, "| numpy", np.__version__, flush=True)
    if "--no-tests" not in sys.argv:
        pytest_stage(_option("--test-seconds", 300), log)
    if "--no-timings" not in sys.argv:
        op_overhead(torch)
        timings(torch)
    from ember.ops import _device_kernels  # on, unless one failed to compile (it warns why)
    print("ember's own kernels on:", {str(dtype): ok for (_, dtype), ok
                                      in _device_kernels._COMPILED.items()})
    _guarded(nccl_check, torch)
    _guarded(probe_stage)


if __name__ == "__main__":
    main()
