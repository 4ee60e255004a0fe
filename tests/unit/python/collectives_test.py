# The collectives on one process (the single bootstrap), python/src/collectives.cpp: each on one
# rank is a copy, in place or out of place; the argument checks shared by every collective.
import numpy as np
import pytest

import dtrain


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


def test_bad_op_and_root_are_errors(ctx):
    with pytest.raises(ValueError, match='op; expected sum, avg, min, max or product, got "mean"'):
        ctx.allreduce(np.ones(2), "mean")
    with pytest.raises(dtrain.InvalidError) as e:
        ctx.broadcast(np.ones(2), root=3)
    assert e.value.code == "invalid"


def test_out_must_match_in_type_and_size(ctx):
    with pytest.raises(ValueError, match="allreduce: element types differ; expected out to be "
                                         "float64 like in, got float32"):
        ctx.allreduce(np.ones(3), out=np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="allreduce: sizes differ; expected out to hold 3 "
                                         "elements like buf, got 4"):
        ctx.allreduce(np.ones(3), out=np.zeros(4))
    with pytest.raises(ValueError, match="allgather: out size; expected 1 × 3 = 3 elements, got 2"):
        ctx.allgather(np.ones(3), np.zeros(2))
    with pytest.raises(ValueError, match="reduce_scatter: in size; expected 1 × 2 = 2 elements, "
                                         "got 3"):
        ctx.reduce_scatter(np.ones(3), np.zeros(2))


def test_avg_of_integers_is_refused_by_libdtrain(ctx):
    with pytest.raises(dtrain.InvalidError, match="avg|kAvg"):
        ctx.allreduce(np.ones(2, dtype=np.int32), "avg")
