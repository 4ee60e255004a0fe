# dtrain.FusedAllreduce, python/src/fused.cpp: arrays registered once and reduced together in
# place; one element type, writable arrays, and the arrays pinned while it lives.
import numpy as np
import pytest

import dtrain


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
