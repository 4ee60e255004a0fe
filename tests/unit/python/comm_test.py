# dtrain.init() and the Context in one process (the single bootstrap): its world, its
# communicator's properties, the store; every collective on one rank is a copy.
import numpy as np
import pytest

import dtrain


def test_init_gives_the_world_of_one_process(ctx):
    assert (ctx.rank, ctx.size, ctx.local_rank, ctx.local_size) == (0, 1, 0, 1)
    assert ctx.bootstrap == "single"
    assert ctx.node_id in (0, -1)
    assert ctx.hostname
    assert ctx.affinity == "off: single process without a launcher"
    assert ctx.attempt == 0  # DTRAIN_ATTEMPT unset: not a restarted job
    assert "rank 0 of 1" in repr(ctx)


def test_init_again_returns_the_live_context(ctx):
    assert dtrain.init() is ctx


def test_comm_is_the_contexts_communicator(ctx):
    assert ctx.comm.rank == 0 and ctx.comm.size == 1
    assert ctx.backend == ctx.comm.backend == "single"
    assert ctx.allreduce_transport == "single"


def test_sequence_numbers_count_collectives(ctx):
    before = ctx.next_sequence
    ctx.barrier()
    ctx.allreduce(np.ones(2))
    assert ctx.next_sequence == before + 2


@pytest.mark.parametrize("op", ["sum", "avg", "min", "max", "product", dtrain.ReduceOp.SUM])
def test_allreduce_of_one_rank_is_the_input(ctx, op):
    a = np.array([1.5, -2.0, 3.0], dtype=np.float64)
    out = ctx.allreduce(a.copy(), op)
    np.testing.assert_array_equal(out, a)


def test_allreduce_out_of_place_leaves_the_input(ctx):
    a = np.arange(5, dtype=np.int64)
    out = np.zeros(5, dtype=np.int64)
    assert ctx.allreduce(a, "max", out=out) is out
    np.testing.assert_array_equal(out, a)
    np.testing.assert_array_equal(a, np.arange(5))


def test_broadcast_allgather_reduce_scatter(ctx):
    b = bytearray(b"hello")
    assert ctx.broadcast(b, root=0) is b and b == bytearray(b"hello")
    mine = np.array([7, 8], dtype=np.int32)
    all_ = np.zeros(2, dtype=np.int32)
    ctx.allgather(mine, all_)
    np.testing.assert_array_equal(all_, mine)
    rs = np.zeros(2, dtype=np.float32)
    ctx.reduce_scatter(np.array([1, 2], dtype=np.float32), rs, "sum")
    np.testing.assert_array_equal(rs, [1, 2])


def test_async_work_returns_its_output(ctx):
    a = np.full(1000, 3.0, dtype=np.float32)
    w = ctx.allreduce_async(a, "avg")
    assert isinstance(w, dtrain.Work)
    assert w.wait() is a
    assert w.done and w.test()
    assert isinstance(w.sequence, int)
    w2 = ctx.broadcast_async(np.zeros(3))
    w3 = ctx.allgather_async(np.ones(2), np.zeros(2))
    w4 = ctx.reduce_scatter_async(np.ones(2), np.zeros(2))
    assert w3.sequence == w2.sequence + 1 and w4.sequence == w3.sequence + 1
    for w in (w2, w3, w4):
        w.wait()


def test_a_dropped_work_still_completes(ctx):
    a = np.ones(10)
    ctx.allreduce_async(a)  # dropped at once: destroying it waits
    ctx.barrier()


def test_store_round_trips_bytes(ctx):
    ctx.store_set("py-key", b"\x00value")
    assert ctx.store_get("py-key") == b"\x00value"


def test_fused_allreduce_over_a_list_of_arrays(ctx):
    grads = [np.full(n, float(n), dtype=np.float32) for n in (1, 100, 3000)]
    fused = dtrain.FusedAllreduce(ctx, grads, "avg", bucket_bytes=1024)
    assert len(fused) == 3 and fused.dtype == dtrain.DType.FLOAT32
    assert fused.bucket_bytes == 1024 and fused.bucket_count >= 1
    fused.run()
    for n, g in zip((1, 100, 3000), grads):
        np.testing.assert_array_equal(g, np.full(n, float(n)))


def test_fused_allreduce_refuses_mixed_types(ctx):
    with pytest.raises(ValueError, match=r"tensors\[1\]: element type; expected float32 like "
                                         r"tensors\[0\], got float64"):
        dtrain.FusedAllreduce(ctx, [np.ones(2, np.float32), np.ones(2, np.float64)])


def test_fused_allreduce_refuses_read_only_arrays(ctx):
    a = np.ones(2)
    a.flags.writeable = False
    with pytest.raises(ValueError, match=r"tensors\[0\]: read-only"):
        dtrain.FusedAllreduce(ctx, [a])


def test_bad_op_and_root_are_errors(ctx):
    with pytest.raises(ValueError, match='op; expected sum, avg, min, max or product, got "mean"'):
        ctx.allreduce(np.ones(2), "mean")
    with pytest.raises(dtrain.InvalidError) as e:
        ctx.broadcast(np.ones(2), root=3)
    assert e.value.code == "invalid"


def test_avg_of_integers_is_refused_by_libdtrain(ctx):
    with pytest.raises(dtrain.InvalidError, match="avg|kAvg"):
        ctx.allreduce(np.ones(2, dtype=np.int32), "avg")
