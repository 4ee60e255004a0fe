# Python objects as collective buffers: which element types map to which DType, and the
# ValueError (naming the argument and the fault) for what libdtrain cannot take.
import array

import numpy as np
import pytest

import dtrain


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64", "uint8"])
def test_numpy_types_map_to_dtypes(ctx, dtype):
    a = np.arange(6, dtype=dtype)
    fused = dtrain.FusedAllreduce(ctx, [a])
    assert fused.dtype.name == dtype.upper()
    ctx.allreduce(a, "max")
    np.testing.assert_array_equal(a, np.arange(6, dtype=dtype))


def test_bfloat16_given_as_dtype_over_16_bit_storage(ctx):
    bits = np.array([0x3F80, 0x4000], dtype=np.uint16)  # 1.0 and 2.0 in bfloat16
    fused = dtrain.FusedAllreduce(ctx, [bits], dtype="bfloat16")
    assert fused.dtype == dtrain.DType.BFLOAT16
    ctx.allreduce(bits, "sum", dtype=dtrain.DType.BFLOAT16)
    np.testing.assert_array_equal(bits, [0x3F80, 0x4000])


def test_dtype_names_numpy_and_torch_spellings(ctx):
    a = np.ones(2, dtype=np.float32)
    ctx.allreduce(a, dtype=np.dtype("float32"))
    ctx.allreduce(a, dtype="float32")


def test_dtype_of_another_item_size_is_refused(ctx):
    with pytest.raises(ValueError, match=r"allreduce: buf: dtype bfloat16 needs 2-byte elements, "
                                         r"got float32 of 4 bytes"):
        ctx.allreduce(np.ones(2, np.float32), dtype="bfloat16")


def test_unknown_dtype_name(ctx):
    with pytest.raises(ValueError, match='dtype; expected float32, .* got "complex64"'):
        ctx.allreduce(np.ones(2, np.float32), dtype="complex64")


@pytest.mark.parametrize("dtype", ["int16", "uint32", "int8", "bool", "complex64", ">f4"])
def test_unsupported_element_types_are_named(ctx, dtype):
    a = np.zeros(4, dtype=dtype)
    with pytest.raises(ValueError, match=r"dtrain: allreduce: buf: element type; expected "
                                         r"float32, float64, float16, bfloat16, int32, int64 or "
                                         r"uint8, got " + str(np.dtype(dtype)).replace(">", ".")):
        ctx.allreduce(a)


def test_non_contiguous_buffers_are_refused(ctx):
    with pytest.raises(ValueError, match=r"allreduce: buf: not contiguous; expected a "
                                         r"C-contiguous buffer"):
        ctx.allreduce(np.zeros(8, np.float32)[::2])
    with pytest.raises(ValueError, match="allreduce: out: not contiguous"):
        ctx.allreduce(np.zeros((3, 3)), out=np.zeros((3, 3), order="F"))


def test_c_contiguous_views_are_used_in_place(ctx):
    a = np.zeros((4, 5), dtype=np.float32)
    row = a[1]
    ctx.allreduce(row)
    a2 = np.arange(20, dtype=np.float32).reshape(4, 5)
    out = np.zeros((4, 5), dtype=np.float32)
    ctx.allreduce(a2, out=out)
    np.testing.assert_array_equal(out, a2)


def test_read_only_buffers_are_refused_where_written(ctx):
    ro = np.ones(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="allreduce: buf: read-only; expected a writable buffer, "
                                         "got a read-only numpy.ndarray"):
        ctx.allreduce(ro)
    with pytest.raises(ValueError, match="broadcast: buf: read-only; .* got a read-only bytes"):
        ctx.broadcast(b"abc")
    out = np.zeros(3)
    ctx.allreduce(ro, out=out)  # a read-only input is fine out of place
    np.testing.assert_array_equal(out, ro)


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


def test_objects_without_the_buffer_protocol_are_type_errors(ctx):
    with pytest.raises(TypeError):
        ctx.allreduce([1.0, 2.0])
    with pytest.raises(TypeError):
        ctx.broadcast("text")


def test_other_exporters_bytearray_memoryview_array(ctx):
    b = bytearray(b"\x01\x02")
    ctx.allreduce(b, "sum")  # uint8
    assert b == bytearray(b"\x01\x02")
    m = memoryview(bytearray(8)).cast("d")
    ctx.allreduce(m)
    ar = array.array("i", [1, 2, 3])
    ctx.allreduce(ar, "max")
    assert list(ar) == [1, 2, 3]
    with pytest.raises(ValueError, match="got format 'h'"):
        ctx.allreduce(array.array("h", [1]))


def test_moving_collectives_take_any_element_type_as_bytes(ctx):
    a = np.array([True, False, True])
    ctx.broadcast(a)
    out = np.zeros(3, dtype=np.int16)
    ctx.allgather(np.array([1, 2, 3], dtype=np.int16), out)
    np.testing.assert_array_equal(out, [1, 2, 3])


def test_empty_buffers(ctx):
    ctx.allreduce(np.zeros(0, np.float32))
    ctx.broadcast(bytearray())


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


def test_torch_cpu_tensors_through_their_numpy_views(ctx):
    torch = pytest.importorskip("torch")
    t = torch.zeros(4)
    ctx.allreduce(np.arange(4, dtype=np.float32), out=t.numpy())  # written into the tensor itself
    assert t.tolist() == [0, 1, 2, 3]
    h = torch.ones(3, dtype=torch.float16)
    assert dtrain.FusedAllreduce(ctx, [h.numpy()]).dtype == dtrain.DType.FLOAT16
    b = torch.ones(3, dtype=torch.bfloat16)
    ctx.allreduce(b.view(torch.int16).numpy(), dtype=torch.bfloat16)
    assert b.tolist() == [1, 1, 1]
