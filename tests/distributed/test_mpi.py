"""The "mpi" backend under a real MPI launcher (`mpiexec`, from the optional mpi4py and an
MPI from the package registry): MPI's own collectives with 4 ranks, the dtypes MPI cannot
reduce, subgroups, DDP at 2 and 4 ranks, and an uncaught error or a hung rank ending the whole
job."""
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _mpiexec(n, code, timeout=120):
    pytest.importorskip("mpi4py")
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    launcher = shutil.which("mpiexec.hydra", path=path) or shutil.which("mpiexec", path=path)
    if launcher is None:
        pytest.skip("mpi4py is installed but no mpiexec was found")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, HERE]),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    script = "import ember.distributed as dist\n" + textwrap.dedent(code)
    return subprocess.run([launcher, "-n", str(n), sys.executable, "-c", script],
                          capture_output=True, text=True, timeout=timeout, env=env)


def test_collectives_of_four_ranks_are_mpis_own():
    out = _mpiexec(4, """
        import numpy as np, ember
        from ember.distributed import mpi
        import test_distributed as T
        dist.init_process_group("mpi")
        rank, world = dist.get_rank(), dist.get_world_size()
        assert isinstance(dist.distributed_c10d._group(None), mpi.ProcessGroupMPI)
        assert isinstance(dist.distributed_c10d._group(None), dist.ProcessGroup)
        results = T._ring(rank, world)
        gathered = [None] * world
        dist.all_gather_object(gathered, results)
        if rank == 0:
            T._check_ring(dict(enumerate(gathered)), world)
        evens = dist.new_group([0, 2])
        t = ember.tensor([float(rank)])
        if rank in (0, 2):
            dist.all_reduce(t, group=evens)
            assert t.item() == 2.0 and dist.get_rank(evens) == rank // 2
        else:
            assert dist.get_rank(evens) == -1
        dist.barrier()
        if rank == 0:
            print("ranks", world, "checked")
        dist.destroy_process_group()
    """)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert "ranks 4 checked" in out.stdout


@pytest.mark.parametrize("world", [2, 4])
def test_ddp_over_mpi_equals_one_process_with_the_whole_batch(world):
    out = _mpiexec(world, """
        import numpy as np, ember
        import test_ddp_parity as P
        dist.init_process_group("mpi")
        rank, world = dist.get_rank(), dist.get_world_size()
        ours = P.train(ember, rank, world)
        if rank == 0:
            for got, want in zip(ours, P.train(ember)):
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
            print("ddp over", world, "ranks matches")
        dist.destroy_process_group()
    """)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert f"ddp over {world} ranks matches" in out.stdout


def test_an_uncaught_error_aborts_the_job():
    start = time.monotonic()
    out = _mpiexec(2, """
        import ember
        dist.init_process_group("mpi")
        if dist.get_rank() == 1:
            raise ValueError("rank 1 fails on purpose")
        dist.all_reduce(ember.ones(3))  # rank 0 would wait here for ever
    """, timeout=60)
    assert out.returncode != 0
    assert "ValueError: rank 1 fails on purpose" in out.stderr
    assert time.monotonic() - start < 50


def test_a_hung_rank_ends_the_job_at_the_timeout():
    start = time.monotonic()
    out = _mpiexec(2, """
        import datetime, time, ember
        dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=3))
        if dist.get_rank() == 1:
            time.sleep(600)  # hangs: never joins the all_reduce
        dist.all_reduce(ember.ones(3))
    """, timeout=90)
    assert out.returncode != 0
    # rank 0's traceback (its last lines can be cut when MPI_Abort kills the job quickly)
    assert "in all_reduce" in out.stderr, out.stderr[-2000:]
    assert time.monotonic() - start < 60
