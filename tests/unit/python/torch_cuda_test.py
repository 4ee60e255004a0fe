"""dtrain.torch with CUDA tensors on one rank: all_reduce, broadcast, all_gather_into_tensor and
reduce_scatter_tensor go through libdtrain's NCCL communicator, ordered after torch's current
stream; the other operations refuse CUDA tensors naming the ones that take them. Skipped, saying
why, where torch has no CUDA or sees no GPU, or dtrain.torch is not built for this torch."""
import pytest

torch = pytest.importorskip("torch")
if not torch.backends.cuda.is_built():
    pytest.skip(f"torch {torch.__version__} was built without CUDA", allow_module_level=True)
if torch.cuda.device_count() == 0:
    pytest.skip("torch sees no CUDA device", allow_module_level=True)
try:
    import dtrain.torch  # noqa: F401,E402
except ImportError as e:
    pytest.skip(f"dtrain.torch is not built for this torch: {e}", allow_module_level=True)
import torch.distributed as dist  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def group():
    dist.init_process_group(backend="dtrain", store=dist.HashStore(), rank=0, world_size=1)
    yield
    dist.destroy_process_group()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cuda_collectives_exact(dtype):
    dev = torch.device("cuda", 0)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):  # written on a side stream: the backend waits for it
        t = torch.arange(1 << 20, device=dev).to(dtype) % 200
        expected = t.clone()
        t.mul_(1)
        dist.all_reduce(t)
        assert torch.equal(t, expected)
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        assert torch.equal(t, expected)
        dist.broadcast(t, src=0)
        out = torch.empty_like(t)
        dist.all_gather_into_tensor(out, t)
        assert torch.equal(out, expected)
        dist.reduce_scatter_tensor(out, t)
        assert torch.equal(out, expected)
        work = dist.all_reduce(t, async_op=True)
        work.wait()
        assert torch.equal(t, expected)


def test_other_operations_refuse_cuda_tensors():
    t = torch.ones(4, device="cuda:0")
    with pytest.raises(ValueError, match=r"on cuda:0; expected a CPU tensor: CUDA tensors go "
                       r"through libdtrain's NCCL communicator for all_reduce, broadcast"):
        dist.all_gather([torch.empty_like(t)], t)
