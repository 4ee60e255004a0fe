"""One Context per process (docs/torch.md): the torch backend's default group runs on
dtrain.init()'s Context when the program made one first, and a later dtrain.init() returns the
Context the group made; a group whose rank, size or timeout disagrees with the Context is refused,
word for word. One rank; the two-rank case with a stopped peer: torch_shared_context_test.sh."""
import gc
import glob
import os
from datetime import timedelta

import pytest

torch = pytest.importorskip("torch")
import dtrain  # noqa: E402

if not glob.glob(os.path.join(os.path.dirname(dtrain.__file__), "_torch*.so")):
    pytest.skip("dtrain.torch not built (DTRAIN_BUILD_TORCH=OFF, or no torch found by CMake)",
                allow_module_level=True)

import numpy as np  # noqa: E402
import torch.distributed as dist  # noqa: E402

import dtrain.torch  # noqa: E402, F401


@pytest.fixture(autouse=True)
def no_context_left():
    yield
    if dist.is_initialized():
        dist.destroy_process_group()
    gc.collect()
    assert dtrain._live_context() is None, "a test left the process's Context alive"


def one_rank_group(**kwargs):
    dist.init_process_group(backend="dtrain", store=dist.HashStore(), rank=0, world_size=1,
                            **kwargs)
    return dist.distributed_c10d._get_default_group()


def test_the_group_runs_on_the_context_dtrain_init_made_first():
    ctx = dtrain.init()
    group = one_rank_group()
    assert group.context is ctx
    assert dtrain.init() is ctx
    dist.destroy_process_group()
    a = np.ones(3)
    ctx.allreduce(a, "sum")  # the Context outlives the group
    assert a.tolist() == [1, 1, 1]


def test_dtrain_init_returns_the_context_the_group_made():
    group = one_rank_group()
    ctx = dtrain.init()
    assert ctx is group.context
    assert ctx.bootstrap == "external"
    t = torch.ones(2)
    dist.all_reduce(t)
    ctx.allreduce(t.numpy(), "sum")
    assert t.tolist() == [1, 1]


def test_the_context_a_group_holds_is_the_live_one_after_its_first_object_is_gone():
    # dtrain.init()'s object dropped while the group (or a subgroup) still holds the Context: a
    # second init_process_group and dtrain.init() find it, rather than making a second Context.
    dtrain.init()
    gc.collect()
    one_rank_group()  # held by torch only
    sub = dist.new_group([0])
    dist.destroy_process_group()
    gc.collect()
    assert dtrain._live_context() is sub.context
    again = one_rank_group()
    assert again.context is sub.context
    assert dtrain.init() is sub.context
    del sub, again


def test_the_meter_sees_the_groups_collectives(tmp_path):
    ctx = dtrain.init()
    meter = dtrain.Meter(ctx, str(tmp_path))
    one_rank_group()
    with meter.step(4):
        dist.all_reduce(torch.ones(1000))
    meter.flush()
    records = (tmp_path / "rank-00000.jsonl").read_text()
    assert '"type":"coll"' in records and '"op":"allreduce","bytes":4000,"phase":"exit"' in records
    del meter


def test_a_group_of_another_rank_and_size_is_refused_naming_both():
    ctx = dtrain.init()
    with pytest.raises(dtrain.InvalidError) as e:
        dist.init_process_group(backend="dtrain", store=dist.HashStore(), rank=1, world_size=2)
    assert str(e.value) == (
        "dtrain: torch: init_process_group: rank 1 of 2; expected rank 0 of 1, as this process's "
        "dtrain Context (dtrain.init()) has it: the group runs on that Context (call "
        "init_process_group with its rank and size, or before dtrain.init())")
    del ctx


def test_a_timeout_beside_dtrain_init_is_refused():
    ctx = dtrain.init()
    with pytest.raises(dtrain.InvalidError) as e:
        one_rank_group(timeout=timedelta(seconds=5))
    assert str(e.value) == (
        "dtrain: torch: init_process_group: timeout of 5000 ms given while this process holds a "
        "dtrain Context (dtrain.init()): the group runs on that Context, whose collectives' "
        "deadline is DTRAIN_TIMEOUT; expected no timeout (set DTRAIN_TIMEOUT), or "
        "init_process_group before dtrain.init() (the Context then takes the group's timeout)")
    del ctx
