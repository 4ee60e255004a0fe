# Async collectives' handles, python/src/work.cpp: wait() returns the output, a dropped handle
# still completes, and the buffers stay pinned until the collective is done.
import numpy as np
import pytest

import dtrain


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


def test_buffers_stay_pinned_until_the_collective_is_done(ctx):
    b = bytearray(16)
    w = ctx.broadcast_async(b)
    with pytest.raises(BufferError):
        b.extend(b"x")  # libdtrain may still write into it
    w.wait()
    b.extend(b"x")
    fused = dtrain.FusedAllreduce(ctx, [b])
    with pytest.raises(BufferError):
        b.extend(b"x")  # registered: libdtrain keeps its address
    del fused
    b.extend(b"x")
    assert len(b) == 18
