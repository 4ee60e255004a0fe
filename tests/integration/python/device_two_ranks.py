"""ctx.device_comm() on two ranks (run by every rank under tcp_launch.sh 2), exact results in
float32 and bfloat16. NCCL refuses two ranks on one GPU, so this needs 2 visible GPUs and skips,
saying so, otherwise. (dtrain.torch's CUDA path: torch_cuda_test.py, one rank; a torch group in
this process would rendezvous on the MASTER_PORT that dtrain.init() took.)"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "unit", "python"))
from gpu_arrays import array_library, device_array, gpu_count, host_list, synchronize  # noqa: E402

import dtrain  # noqa: E402

LIB, NO_GPU = array_library()
pytestmark = [
    pytest.mark.skipif(LIB is None, reason=NO_GPU or "no GPU"),
    pytest.mark.skipif(gpu_count() < 2, reason=f"needs 2 visible GPUs (NCCL refuses two ranks on "
                       f"one device); nvidia-smi lists {gpu_count()}"),
]


@pytest.fixture(scope="module")
def ctx():
    return dtrain.init()


def test_collectives_exact(ctx):
    comm = ctx.device_comm()
    r, n = ctx.rank, ctx.size
    assert (comm.backend, comm.size, comm.device) == ("nccl", 2, ctx.local_rank % gpu_count())
    dtypes = ["float32"] + (["bfloat16"] if LIB.__name__ == "torch" else [])
    for dtype in dtypes:
        x = device_array(LIB, [1.0 + r, 2.5 * r, -4.0, 8.0 + r], dtype, comm.device)
        synchronize(LIB)
        comm.allreduce(x)
        assert host_list(LIB, x) == [3.0, 2.5, -8.0, 17.0]
        out = device_array(LIB, [0.0] * 4, dtype, comm.device)
        comm.allreduce(x, "max", out=out)
        assert host_list(LIB, out) == [3.0, 2.5, -8.0, 17.0]
        b = device_array(LIB, [float(r + 7)] * 3, dtype, comm.device)
        synchronize(LIB)
        comm.broadcast(b, root=1)
        assert host_list(LIB, b) == [8.0] * 3
        g = device_array(LIB, [0.0] * 2 * n, dtype, comm.device)
        comm.allgather(device_array(LIB, [r, r + 0.5], dtype, comm.device), g)
        assert host_list(LIB, g) == [0.0, 0.5, 1.0, 1.5]
        s = device_array(LIB, [0.0] * 2, dtype, comm.device)
        comm.reduce_scatter(device_array(LIB, [1.0, 2.0, 3.0, 4.0], dtype, comm.device), s)
        assert host_list(LIB, s) == ([2.0, 4.0] if r == 0 else [6.0, 8.0])
        a = device_array(LIB, [2.0 * (r + 1)], dtype, comm.device)
        synchronize(LIB)
        assert host_list(LIB, comm.allreduce_async(a, "avg").wait()) == [3.0]
    comm.barrier()

