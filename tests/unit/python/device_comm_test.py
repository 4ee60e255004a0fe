"""ctx.device_comm() (NCCL over CUDA memory) from Python: the refusals a user meets without a GPU
(what is missing; host, read-only, strided, mistyped or misplaced buffers), reached with fake
__cuda_array_interface__ objects where no GPU is visible, and on a GPU exact results on one rank
(tests/integration/python/device_two_ranks.py: two ranks)."""
import numpy as np
import pytest

import dtrain
from gpu_arrays import array_library, device_array, gpu_count, host_list, synchronize

LIB, NO_GPU = array_library()
needs_gpu = pytest.mark.skipif(LIB is None, reason=NO_GPU or "no GPU")


class FakeCudaArray:
    """An object that says its memory is on a CUDA device, at an address nothing reads."""

    def __init__(self, **fields):
        face = {"shape": (4,), "typestr": "<f4", "data": (0x7F0000001000, False),
                "strides": None, "version": 3}
        face.update(fields)
        self.__cuda_array_interface__ = face


def refusal(obj, device=0, **kw):
    with pytest.raises(ValueError) as e:
        dtrain._dtrain._buffer_info(obj, device=device, **kw)
    return str(e.value)


@pytest.mark.skipif(LIB is not None or gpu_count() > 0,
                    reason="a GPU is visible here: device_comm() is made")
def test_device_comm_without_gpu_names_what_is_missing(ctx):
    with pytest.raises(RuntimeError) as e:
        ctx.device_comm()
    assert isinstance(e.value, dtrain.InvalidError)
    # Without NCCL in the build, or the libraries, or a device: each says which.
    assert any(s in str(e.value) for s in (
        "built without NCCL", "cannot be loaded", "no CUDA device")), str(e.value)


def test_device_array_refused_by_host_comm(ctx):
    with pytest.raises(ValueError, match=r"dtrain: allreduce: buf: in CUDA device memory "
                       r"\(a FakeCudaArray\); expected host memory: .*ctx.device_comm\(\)"):
        ctx.comm.allreduce(FakeCudaArray())
    with pytest.raises(ValueError, match=r"allgather: out: in CUDA device memory"):
        ctx.allgather(np.zeros(4, np.float32), FakeCudaArray())


def test_host_buffers_refused_by_device_side():
    assert refusal(np.zeros(4, np.float32)).startswith(
        "dtrain: buf: in host memory (a numpy.ndarray")
    assert "expected memory of cuda:0: ctx.device_comm()'s collectives (NCCL) take CUDA device " \
           "buffers" in refusal(bytearray(8))


def test_device_buffer_checks():
    assert "read-only; expected a writable buffer" in refusal(
        FakeCudaArray(data=(0x7F0000001000, True)))
    assert "not contiguous; expected a C-contiguous array" in refusal(
        FakeCudaArray(shape=(2, 2), strides=(4, 16)))
    assert ('element type; expected float32, float64, float16, bfloat16, int32, int64 or uint8, '
            'got typestr "<i2"') in refusal(FakeCudaArray(typestr="<i2"))
    assert 'byte order; expected this machine' in refusal(FakeCudaArray(typestr=">f4"))
    assert 'expected plain data (numbers), got typestr "|O8"' in refusal(
        FakeCudaArray(typestr="|O8"))
    assert '__cuda_array_interface__: no "data" entry' in refusal(
        type("Bad", (), {"__cuda_array_interface__": {"shape": (1,), "typestr": "<f4"}})())
    # An empty array has no memory whose device the CUDA runtime would be asked for.
    assert dtrain._dtrain._buffer_info(FakeCudaArray(shape=(0,), data=(0, False)),
                                       device=0) == (0, "float32")
    # dtype= reads 2-byte elements as bfloat16, as for host buffers.
    assert dtrain._dtrain._buffer_info(FakeCudaArray(shape=(0,), typestr="<V2", data=(0, False)),
                                       device=0, dtype="bfloat16") == (0, "bfloat16")


@needs_gpu
def test_one_rank_collectives_exact(ctx):
    comm = ctx.device_comm()
    assert comm.backend == "nccl" and comm.device == ctx.local_rank % gpu_count_or_one()
    assert ctx.device_comm() is comm  # one communicator per Context
    dtypes = ["float32"] + (["bfloat16"] if LIB.__name__ == "torch" else [])
    for dtype in dtypes:
        x = device_array(LIB, [1.5, -2.0, 3.25, 8.0], dtype, comm.device)
        synchronize(LIB)
        assert comm.allreduce(x) is x and host_list(LIB, x) == [1.5, -2.0, 3.25, 8.0]
        out = device_array(LIB, [0.0] * 4, dtype, comm.device)
        comm.allreduce(x, "max", out=out)
        assert host_list(LIB, out) == [1.5, -2.0, 3.25, 8.0]
        comm.broadcast(x, root=0)
        comm.allgather(x, out)
        comm.reduce_scatter(x, out)
        assert host_list(LIB, out) == [1.5, -2.0, 3.25, 8.0]
        assert comm.allreduce_async(x, "avg").wait() is x
        assert host_list(LIB, x) == [1.5, -2.0, 3.25, 8.0]
    comm.barrier()
    with pytest.raises(ValueError, match="in host memory"):
        comm.allreduce(np.ones(4, np.float32))
    with pytest.raises(ValueError, match="in CUDA device memory"):
        ctx.allreduce(device_array(LIB, [1.0], "float32", comm.device))


@needs_gpu
@pytest.mark.skipif(gpu_count() < 2, reason="needs 2 visible GPUs for a buffer on another device")
def test_buffer_on_another_device_refused(ctx):
    comm = ctx.device_comm()
    other = (comm.device + 1) % gpu_count()
    with pytest.raises(ValueError, match=f"on cuda:{other}; expected cuda:{comm.device}, the "
                       "device of ctx.device_comm()"):
        comm.allreduce(device_array(LIB, [1.0], "float32", other))


def gpu_count_or_one():
    return max(gpu_count(), 1)
