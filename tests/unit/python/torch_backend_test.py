"""dtrain.torch (python/torch_backend/) in one process: the backend registered by its name, every
collective on a one-rank group (each dtype libdtrain reduces, the data-moving ones on any dtype),
async Works and their futures, and the refusals, word for word. Two and three ranks:
tests/integration/python/torch_*."""
import glob
import os
from datetime import timedelta

import pytest

torch = pytest.importorskip("torch")
import dtrain  # noqa: E402

if not glob.glob(os.path.join(os.path.dirname(dtrain.__file__), "_torch*.so")):
    pytest.skip("dtrain.torch not built (DTRAIN_BUILD_TORCH=OFF, or no torch found by CMake)",
                allow_module_level=True)

import torch.distributed as dist  # noqa: E402

import dtrain.torch  # noqa: E402

REDUCED = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64,
           torch.uint8]


@pytest.fixture(scope="module", autouse=True)
def group():
    dist.init_process_group(backend="dtrain", store=dist.HashStore(), rank=0, world_size=1)
    yield dist.group.WORLD
    dist.destroy_process_group()


def refusal(call, kind=dtrain.InvalidError):
    # libdtrain's errors reach Python as dtrain's exception classes (InvalidError is a ValueError).
    with pytest.raises(kind) as e:
        call()
    return str(e.value)


def test_the_backend_is_registered_by_its_name():
    assert dist.get_backend() == "dtrain"
    assert dist.Backend("dtrain") == "dtrain"
    pg = dist.distributed_c10d._get_default_group()
    assert isinstance(pg, dtrain.torch.ProcessGroupDtrain)
    assert pg.backend == "single"


def test_importing_again_registers_nothing_twice():
    import importlib

    importlib.reload(dtrain.torch)
    assert dist.Backend("dtrain") == "dtrain"


@pytest.mark.parametrize("dtype", REDUCED)
def test_all_reduce_of_every_dtype(dtype):
    t = torch.arange(10).to(dtype)
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.MIN, dist.ReduceOp.PRODUCT):
        dist.all_reduce(t, op=op)
    assert torch.equal(t, torch.arange(10).to(dtype))


def test_avg_of_floats_and_its_refusal_for_integers():
    t = torch.full((3,), 2.5)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert t.tolist() == [2.5, 2.5, 2.5]
    assert "avg is defined for floating types" in refusal(
        lambda: dist.all_reduce(torch.ones(3, dtype=torch.int32), op=dist.ReduceOp.AVG))


def test_unsupported_dtype_is_refused_naming_it():
    assert refusal(lambda: dist.all_reduce(torch.ones(3, dtype=torch.int16))) == (
        "dtrain: torch: allreduce: tensor: element type; expected float32, float64, float16, "
        "bfloat16, int32, int64 or uint8, got torch.int16")


def test_non_contiguous_tensor_is_refused_naming_its_strides():
    t = torch.ones(2, 3).t()
    assert refusal(lambda: dist.all_reduce(t)) == (
        "dtrain: torch: allreduce: tensor: not contiguous (sizes [3, 2], strides [1, 3]); "
        "expected a contiguous tensor (tensor.contiguous())")


def test_bitwise_reductions_are_refused_naming_them():
    assert refusal(lambda: dist.all_reduce(torch.ones(3, dtype=torch.uint8),
                                           op=dist.ReduceOp.BAND)) == (
        "dtrain: torch: allreduce: op: ReduceOp.BAND; expected SUM, AVG, PRODUCT, MIN or MAX")


def test_moving_ops_take_any_dtype():
    for dtype in (torch.int16, torch.bool, torch.complex64, torch.float32):
        t = torch.ones(5, dtype=dtype)
        dist.broadcast(t, src=0)
        out = [torch.zeros(5, dtype=dtype)]
        dist.all_gather(out, t)
        assert torch.equal(out[0], t)


def test_gathers_and_scatters_on_one_rank():
    x = torch.arange(6, dtype=torch.float32)
    flat = torch.zeros(6)
    dist.all_gather_into_tensor(flat, x)
    assert torch.equal(flat, x)
    out = torch.zeros(6)
    dist.reduce_scatter(out, [x.clone()])
    assert torch.equal(out, x)
    out = torch.zeros(6, dtype=torch.bfloat16)
    dist.reduce_scatter_tensor(out, x.to(torch.bfloat16))
    assert torch.equal(out, x.to(torch.bfloat16))
    out = torch.zeros(6)
    dist._reduce_scatter_base(out, x)
    assert torch.equal(out, x)
    g = [torch.zeros(6)]
    dist.gather(x, g, dst=0)
    assert torch.equal(g[0], x)
    s = torch.zeros(6)
    dist.scatter(s, [x], src=0)
    assert torch.equal(s, x)
    r = x.clone()
    dist.reduce(r, dst=0)
    assert torch.equal(r, x)
    dist.barrier()


def test_size_mismatch_is_refused():
    assert refusal(lambda: dist.all_gather_into_tensor(torch.zeros(5), torch.zeros(6))) == (
        "dtrain: torch: _allgather_base: output: torch.float32 of 5 elements; expected "
        "torch.float32 of 6 (the input's times 1 ranks)")


def test_async_work_and_its_future():
    t = torch.ones(1000)
    work = dist.all_reduce(t, async_op=True)
    fut = work.get_future()
    work.wait()
    assert work.is_completed() and work.is_success()
    assert torch.equal(fut.wait()[0], t)
    chained = dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0] * 2)
    assert torch.equal(chained.wait(), torch.full((1000,), 2.0))


def test_objects_travel_through_the_byte_collectives():
    objs = [None]
    dist.all_gather_object(objs, {"a": 1})
    assert objs == [{"a": 1}]
    lst = [{"b": 2}]
    dist.broadcast_object_list(lst, src=0)
    assert lst == [{"b": 2}]


def test_a_subgroup_is_a_process_group_of_its_own():
    sub = dist.new_group([0], backend="dtrain")
    t = torch.ones(3)
    dist.all_reduce(t, group=sub)
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_all_to_all_with_equal_blocks():
    x = torch.arange(6, dtype=torch.int16).reshape(3, 2)
    out = torch.zeros_like(x)
    dist.all_to_all_single(out, x)
    assert torch.equal(out, x)
    out = torch.zeros_like(x)
    dist.all_to_all_single(out, x, output_split_sizes=[3], input_split_sizes=[3])
    assert torch.equal(out, x)
    outs = [torch.zeros(4, dtype=torch.bfloat16)]
    dist.all_to_all(outs, [torch.ones(4, dtype=torch.bfloat16)])
    assert torch.equal(outs[0], torch.ones(4, dtype=torch.bfloat16))


def test_all_to_all_refuses_splits_that_do_not_add_up_naming_them():
    assert refusal(lambda: dist.all_to_all_single(torch.zeros(3), torch.ones(3),
                                                  input_split_sizes=[2])) == (
        "dtrain: torch: alltoall_base: input_split_sizes [2]; expected one size per rank (1), "
        "each 0 or more, adding up to the 3 rows of the input")
    out = torch.zeros(3)
    dist.all_to_all_single(out, torch.arange(3.0), [3], [3])
    assert torch.equal(out, torch.arange(3.0))


def test_messages_to_itself_arrive_in_order_and_name_the_sender():
    pg = dist.distributed_c10d._get_default_group()
    pg.send([torch.arange(3.0)], 0, 1).wait()
    pg.send([torch.arange(3.0) + 10], 0, 1).wait()
    first, second = torch.zeros(3), torch.zeros(3)
    work = pg.recv_anysource([first], 1)
    work.wait()
    assert work._source_rank() == 0 and work.is_completed() and work.is_success()
    pg.recv([second], 0, 1).wait()
    assert torch.equal(first, torch.arange(3.0)) and torch.equal(second, torch.arange(3.0) + 10)


def test_messages_refuse_bad_tags_and_sizes_naming_them():
    pg = dist.distributed_c10d._get_default_group()
    with pytest.raises(dtrain.InvalidError) as e:
        pg.send([torch.ones(2)], 0, -1)
    assert str(e.value) == "dtrain: send: tag; expected 0 or more, got -1"
    pg.send([torch.ones(4)], 0, 2).wait()
    with pytest.raises(dtrain.InvalidError) as e:
        pg.recv([torch.ones(2)], 0, 2).wait()
    assert "rank 0 of 1): rank 0 (on " not in str(e.value)  # one process: no node to name
    assert str(e.value).endswith("rank 0 sent 16 bytes; expected a message of the receive's size: "
                                 "send and receive the same count and type"), str(e.value)


def test_all_gather_coalesced_on_one_rank_copies_each_input():
    # One packed allgather (torch_collectives.py checks several ranks and dtypes).
    out = [[torch.zeros(2), torch.zeros(3)]]  # rank 0's list of outputs (one dtype: torch checks)
    dist.all_gather_coalesced(out, [torch.ones(2), torch.arange(3.0)])
    assert torch.equal(out[0][0], torch.ones(2))
    assert torch.equal(out[0][1], torch.arange(3.0))


def test_a_wait_with_a_timeout_returns_when_done():
    work = dist.all_reduce(torch.ones(3), async_op=True)
    assert work.wait(timedelta(seconds=5))


def test_the_groups_timeout_must_be_positive():
    assert refusal(lambda: dtrain.torch.ProcessGroupDtrain(dist.HashStore(), 0, 1,
                                                           timedelta(0))) == (
        "dtrain: bootstrap: external: timeout; expected a positive duration, got 0 ms")


def test_a_new_groups_number_is_torchs_count_in_this_default_groups_life(monkeypatch):
    # torch counts every group it makes on every rank (1.13: _group_count, incremented before the
    # creator runs); dtrain numbers the group by that count, apart per default group, and never
    # twice in a process (a count that did not move gives None: the members then agree).
    c10d = dist.distributed_c10d
    base = dtrain.torch._default_groups[0] * (1 << 20)
    monkeypatch.setattr(c10d, "_group_count", 41, raising=False)
    assert dtrain.torch._group_number() == base + 40
    assert dtrain.torch._group_number() is None  # the same count again
    monkeypatch.setattr(c10d, "_group_count", 0, raising=False)
    assert dtrain.torch._group_number() is None  # no group counted yet
    monkeypatch.setattr(c10d, "_group_count", (1 << 20) + 1, raising=False)
    assert dtrain.torch._group_number() is None  # beyond a default group's numbers
    monkeypatch.setattr(c10d, "_group_count", 77, raising=False)
    sub = dist.new_group([0])  # torch counts it: 77 -> 78, so its number is 77
    assert sub.number == base + 77, sub.number
    t = torch.ones(2)
    dist.all_reduce(t, group=sub)
    assert torch.equal(t, torch.ones(2))
