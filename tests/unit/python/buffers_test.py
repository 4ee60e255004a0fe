# Python objects as collective buffers, python/src/buffers.cpp: which element types map to which
# DType, torch tensors directly through DLPack, and the ValueError (naming the argument and the
# fault) for what libdtrain cannot take.
import array
import ctypes
import re

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


@pytest.mark.parametrize("dtype", ["int16", "uint32", "int8", "bool", "complex64"])
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


REFERENCES = r"expected plain data \(numbers, bytes, structs of them\), got {}, which holds " \
             r"references to Python objects or pointers: addresses in this process"


# Issue 33: an object array's elements are PyObject pointers; sent, the receiver read or freed the
# sender's pointers (SIGSEGV, double free). Refused by every collective and the checkpoint,
# whatever the typing or dtype=, before anything runs.
@pytest.mark.parametrize("call", [
    lambda ctx, a: ctx.broadcast(a, root=0),
    lambda ctx, a: ctx.allgather(a, np.empty_like(a)),
    lambda ctx, a: ctx.allreduce(a),
    lambda ctx, a: ctx.allreduce(a, dtype="int64"),  # same item size: was reinterpreted
    lambda ctx, a: ctx.reduce_scatter(a, np.empty_like(a), dtype="int64"),
    lambda ctx, a: ctx.broadcast_async(a, root=0),
    lambda ctx, a: dtrain.FusedAllreduce(ctx, [a], dtype="int64"),
])
def test_object_arrays_are_refused_naming_the_element_type(ctx, call):
    a = np.array([object(), "x"], dtype=object)
    with pytest.raises(ValueError, match=r"dtrain: [A-Za-z_.]+: [a-z\[\]0-9]+: element type; " +
                                         REFERENCES.format("object")):
        call(ctx, a)


def test_structs_holding_objects_and_pointer_formats_are_refused(ctx):
    rec = np.zeros(2, dtype=[("n", "<i8"), ("o", "O")])
    with pytest.raises(ValueError, match=r"dtrain: broadcast: buf: element type; " +
                                         REFERENCES.format(re.escape(str(rec.dtype)))):
        ctx.broadcast(rec)
    nested = np.zeros(2, dtype=[("a", [("b", "O", (2,))])])
    with pytest.raises(ValueError, match="allgather: in: element type; expected plain data"):
        ctx.allgather(nested, np.zeros(2, dtype=nested.dtype))
    pointers = memoryview(bytearray(16)).cast("P")
    with pytest.raises(ValueError, match="broadcast: buf: element type; " +
                                         REFERENCES.format("format 'P'")):
        ctx.broadcast(pointers)
    with pytest.raises(ValueError, match="Checkpointer.save: data: element type; expected plain"):
        dtrain.Checkpointer(ctx, "unused-ckpt-dir").save(1, np.array([None], dtype=object))


def test_plain_structs_and_text_still_move_as_bytes(ctx):
    rec = np.array([(1, 2.5, b"ab"), (3, 4.5, b"cd")],
                   dtype=[("n", "<i4"), ("x", "<f8"), ("s", "S2")])
    ctx.broadcast(rec)
    aligned = np.zeros(2, dtype=np.dtype([("c", "u1"), ("x", "<f8")], align=True))  # padding
    ctx.broadcast(aligned)
    sub = np.zeros(2, dtype=[("m", "<f4", (2, 3))])
    ctx.broadcast(sub)
    text = np.array(["ab", "cde"])
    out = np.empty_like(text)
    ctx.allgather(text, out)
    assert list(out) == ["ab", "cde"]
    ctx.broadcast(np.zeros(3, dtype=np.complex128))
    np.testing.assert_array_equal(rec["n"], [1, 3])


def test_unreadable_buffer_formats_are_refused_not_moved_as_bytes(ctx):
    # ctypes' own codes for char* and wchar_t* ("z", "Z" alone) are outside PEP 3118.
    for t, fmt in [(ctypes.c_char_p, "<z"), (ctypes.c_wchar_p, "<Z")]:
        with pytest.raises(ValueError, match=r"dtrain: broadcast: buf: element type; expected a "
                                             r"buffer format of Python's struct module or PEP "
                                             r"3118, got format '" + fmt + "', which dtrain "
                                             r"cannot read"):
            ctx.broadcast((t * 2)())
    for t in [ctypes.c_void_p, ctypes.py_object, ctypes.POINTER(ctypes.c_int),
              ctypes.CFUNCTYPE(ctypes.c_int)]:
        with pytest.raises(ValueError, match="broadcast: buf: element type; expected plain data"):
            ctx.broadcast((t * 2)())
    ctx.broadcast((ctypes.c_int * 2)())  # plain ctypes arrays move


# Issue 33: a byte order other than this machine's was moved as bytes into native arrays, or taken
# as the native type under dtype=: refused wherever it is met.
def test_foreign_byte_order_is_refused(ctx):
    big = np.arange(3, dtype=">f4")
    native = np.zeros(3, dtype=np.float32)
    order = r"byte order; expected this machine's \(little-endian\) elements, got >f4"
    with pytest.raises(ValueError, match=r"dtrain: allgather: in: " + order):
        ctx.allgather(big, native)
    with pytest.raises(ValueError, match=r"dtrain: broadcast: buf: " + order):
        ctx.broadcast(big)
    with pytest.raises(ValueError, match=r"dtrain: allreduce: buf: " + order):
        ctx.allreduce(big, dtype="float32")
    with pytest.raises(ValueError, match=r"dtrain: dtype; expected this machine's "
                                         r"\(little-endian\) byte order, got >f4"):
        ctx.allreduce(native, dtype=np.dtype(">f4"))
    ctx.allreduce(native, dtype=np.dtype("<f4"))


def test_empty_buffers(ctx):
    ctx.allreduce(np.zeros(0, np.float32))
    ctx.broadcast(bytearray())


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


def torch_or_skip():
    return pytest.importorskip(
        "torch", reason="Debian's python3-torch is not installed (scripts/install-deps installs it)")


def test_torch_tensors_directly_in_place_and_out_of_place(ctx):
    torch = torch_or_skip()
    t = torch.arange(4, dtype=torch.float32)
    address = t.data_ptr()
    assert ctx.allreduce(t, "sum") is t
    assert t.tolist() == [0, 1, 2, 3] and t.data_ptr() == address
    out = torch.zeros(4)
    assert ctx.allreduce(t, "max", out=out) is out
    assert out.tolist() == [0, 1, 2, 3]
    everyone = torch.zeros(4, dtype=torch.int64)
    ctx.allgather(torch.tensor([5, 6, 7, 8]), everyone)
    assert everyone.tolist() == [5, 6, 7, 8]
    mine = torch.zeros(2, dtype=torch.float64)
    ctx.reduce_scatter(torch.tensor([1.0, 2.0], dtype=torch.float64), mine)
    assert mine.tolist() == [1, 2]
    assert ctx.allreduce_async(t).wait() is t


def test_torch_tensors_are_used_in_place_not_copied(ctx):
    torch = torch_or_skip()
    t = torch.zeros(3)
    ctx.allreduce(np.array([1, 2, 3], dtype=np.float32), out=t)  # written into t's storage
    assert t.tolist() == [1, 2, 3]
    window = torch.zeros(6)[2:5]  # a contiguous view at an offset: the offset is honoured
    ctx.allreduce(np.array([4, 5, 6], dtype=np.float32), out=window)
    assert window._base.tolist() == [0, 0, 4, 5, 6, 0]


@pytest.mark.parametrize("name,dtype", [
    ("float32", "FLOAT32"), ("float64", "FLOAT64"), ("float16", "FLOAT16"),
    ("bfloat16", "BFLOAT16"), ("int32", "INT32"), ("int64", "INT64"), ("uint8", "UINT8")])
def test_torch_dtypes_map_to_dtypes(ctx, name, dtype):
    torch = torch_or_skip()
    t = torch.ones(3, dtype=getattr(torch, name))
    assert dtrain.FusedAllreduce(ctx, [t]).dtype == getattr(dtrain.DType, dtype)
    ctx.allreduce(t)
    assert t.tolist() == [1, 1, 1]


def test_torch_refusals_name_the_fault(ctx):
    torch = torch_or_skip()
    with pytest.raises(ValueError, match=r"dtrain: allreduce: buf: not contiguous; expected a "
                                         r"C-contiguous tensor \(torch.Tensor.contiguous\), got "
                                         r"a strided Tensor"):
        ctx.allreduce(torch.ones(4, 4).t())
    with pytest.raises(ValueError, match="dtrain: allreduce: out: element type; expected float32, "
                                         "float64, float16, bfloat16, int32, int64 or uint8, got "
                                         "torch.int16"):
        ctx.allreduce(torch.ones(2), out=torch.ones(2, dtype=torch.int16))
    with pytest.raises(ValueError, match=r"dtrain: broadcast: buf: cannot be shared through DLPack "
                                         r"\(.*[Bb]ool.*\); .* t.view\(torch.uint8\)"):
        ctx.broadcast(torch.ones(2, dtype=torch.bool))
    with pytest.raises(ValueError, match="FusedAllreduce: tensors\\[1\\]: element type; expected "
                                         "float32 like tensors\\[0\\], got float64"):
        dtrain.FusedAllreduce(ctx, [torch.ones(2), torch.ones(2, dtype=torch.float64)])


def test_torch_bool_moves_as_a_uint8_view(ctx):
    torch = torch_or_skip()
    flags = torch.tensor([True, False, True])
    ctx.broadcast(flags.view(torch.uint8))
    assert flags.tolist() == [True, False, True]


def test_torch_tensors_that_require_grad_are_used_detached(ctx):
    torch = torch_or_skip()
    weight = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    ctx.broadcast(weight, root=0)  # as for broadcasting the initial parameters
    out = torch.zeros(2)
    ctx.allreduce(weight, out=out)
    assert out.tolist() == [1, 2]
    assert weight.requires_grad and weight.grad is None
    (weight * 3).sum().backward()  # autograd still works on it
    fused = dtrain.FusedAllreduce(ctx, [weight.grad], "avg")
    fused.run()
    assert weight.grad.tolist() == [3, 3]


def test_torch_cuda_tensors_are_refused_with_the_reason(ctx):
    torch = torch_or_skip()
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device here: a CUDA tensor cannot be made to check its refusal")
    with pytest.raises(ValueError, match=r"dtrain: allreduce: buf: on cuda:0; expected host memory"
                                         r": .*ctx.device_comm\(\)"):
        ctx.allreduce(torch.ones(2, device="cuda"))


def test_other_dlpack_exporters_are_checked_for_their_device(ctx):
    class OnDevice:  # what a CUDA array of another library says, without needing CUDA
        def __dlpack_device__(self):
            return (2, 1)

        def __dlpack__(self, stream=None):
            raise AssertionError("the device is checked before __dlpack__")

    with pytest.raises(ValueError, match=r"dtrain: allreduce: buf: on DLPack device type 2 \(id 1\)"
                                         r"; expected host memory"):
        ctx.allreduce(OnDevice())



class _Exporter:
    """An object that answers the DLPack protocol as it is told to: a liar, or torch's own answer."""

    def __init__(self, device, capsule):
        self._device, self._capsule = device, capsule

    def __dlpack_device__(self):
        if isinstance(self._device, Exception):
            raise self._device
        return self._device

    def __dlpack__(self, stream=None):
        return self._capsule() if callable(self._capsule) else self._capsule


_DEVICE_ANSWERS = ["cpu", None, (1, 0, 0), (1,), (1.0, 0.0), (2**70, 0), (True, False), ("1", "0"),
                   {1: 0}]


@pytest.mark.parametrize("answer", _DEVICE_ANSWERS, ids=repr)
def test_a_dlpack_device_that_is_no_pair_of_ints_is_refused_by_name(ctx, answer):
    liar = _Exporter(answer, lambda: pytest.fail("__dlpack__ called after a wrong device"))
    with pytest.raises(ValueError, match=r"^dtrain: allreduce: buf: __dlpack_device__\(\) returned "
                                         + re.escape(repr(answer)) + r"; expected a \(device_type, "
                                         r"device_id\) pair of ints \(the DLPack protocol\), from a "
                                         r"_Exporter$"):
        ctx.allreduce(liar)


def test_a_dlpack_device_that_raises_is_refused_naming_its_error(ctx):
    liar = _Exporter(RuntimeError("boom"), None)
    with pytest.raises(ValueError, match=r"^dtrain: allreduce: buf: __dlpack_device__\(\) raised "
                                         r"RuntimeError: boom; expected a \(device_type, device_id\)"):
        ctx.allreduce(liar)


@pytest.mark.parametrize("answer", [None, 5, "capsule"], ids=repr)
def test_a_dlpack_export_that_is_no_capsule_is_refused_by_name(ctx, answer):
    with pytest.raises(ValueError, match=r"^dtrain: allreduce: buf: __dlpack__\(\) returned "
                                         + re.escape(repr(answer)) + r"; expected a new capsule "
                                         r"named 'dltensor' \(the DLPack protocol\), from a "
                                         r"_Exporter$"):
        ctx.allreduce(_Exporter((1, 0), answer))


def test_a_consumed_dlpack_capsule_is_refused_as_one(ctx):
    torch = torch_or_skip()
    used = torch.zeros(4).__dlpack__()
    torch.utils.dlpack.from_dlpack(used)  # renames it 'used_dltensor'
    with pytest.raises(ValueError, match=r"__dlpack__\(\) returned a capsule with the name "
                                         r"'used_dltensor' \(one already consumed: each call must "
                                         r"export anew\)"):
        ctx.allreduce(_Exporter((1, 0), used))


def test_an_honest_exporter_passing_torch_s_answers_is_used(ctx):
    torch = torch_or_skip()
    t = torch.arange(4, dtype=torch.float32)
    ctx.allreduce(_Exporter([1, 0], lambda: t.__dlpack__()))  # a list is a pair too
    assert t.tolist() == [0, 1, 2, 3]  # one rank: the sum is the data
