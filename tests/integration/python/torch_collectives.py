"""Every collective of dtrain's torch backend on N ranks, exact: integer-valued inputs whose
results every dtype holds exactly (bfloat16's 8 bits of mantissa included). Launched
torchrun-style (init_process_group(backend="dtrain"), env://) or under mpirun
(dtrain.torch.init_process_group(), argument "dtrain-init").
    torch_collectives.py [env|dtrain-init]"""
import sys

import torch
import torch.distributed as dist

import dtrain.torch

if len(sys.argv) > 1 and sys.argv[1] == "dtrain-init":
    dtrain.torch.init_process_group()
else:
    dist.init_process_group(backend="dtrain")
rank, size = dist.get_rank(), dist.get_world_size()
assert dist.get_backend() == "dtrain"
REDUCED = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64,
           torch.uint8]
n = 1000

for dtype in REDUCED:
    base = torch.arange(n) % 7  # small integers: exact in every dtype
    t = (base + rank).to(dtype)
    dist.all_reduce(t)
    want = (base * size + sum(range(size))).to(dtype)
    assert torch.equal(t, want), f"all_reduce {dtype}: {t[:8]} != {want[:8]}"
    for op, fn in ((dist.ReduceOp.MAX, max), (dist.ReduceOp.MIN, min)):
        t = torch.full((n,), rank + 1).to(dtype)
        dist.all_reduce(t, op=op)
        assert torch.equal(t, torch.full((n,), fn(range(1, size + 1))).to(dtype)), (dtype, op)
    t = torch.full((n,), 2).to(dtype)
    dist.all_reduce(t, op=dist.ReduceOp.PRODUCT)
    assert torch.equal(t, torch.full((n,), 2 ** size).to(dtype)), (dtype, "product")

t = torch.full((n,), float(rank))
dist.all_reduce(t, op=dist.ReduceOp.AVG)
assert torch.equal(t, torch.full((n,), sum(range(size)) / size))

# broadcast and gathers, any dtype (bytes moved as they are)
for dtype in (torch.float32, torch.int16, torch.bool):
    t = (torch.arange(n) * (rank == 1)).to(dtype)
    dist.broadcast(t, src=1)
    assert torch.equal(t, torch.arange(n).to(dtype)), dtype
    outs = [torch.zeros(n, dtype=dtype) for _ in range(size)]
    dist.all_gather(outs, torch.full((n,), rank).to(dtype))
    for r in range(size):
        assert torch.equal(outs[r], torch.full((n,), r).to(dtype)), (dtype, r)
flat = torch.zeros(size * n, dtype=torch.bfloat16)
dist.all_gather_into_tensor(flat, torch.full((n,), rank, dtype=torch.bfloat16))
assert torch.equal(flat, torch.arange(size).repeat_interleave(n).to(torch.bfloat16))

# reduce_scatter (gloo has none on CPU), list and tensor forms
ins = [torch.full((n,), r * 10 + rank, dtype=torch.float32) for r in range(size)]
out = torch.zeros(n)
dist.reduce_scatter(out, ins)
assert torch.equal(out, torch.full((n,), rank * 10 * size + sum(range(size)), dtype=torch.float32))
for dtype in (torch.bfloat16, torch.float32, torch.int64):
    inp = torch.cat([torch.full((n,), r + rank) for r in range(size)]).to(dtype)
    out = torch.zeros(n, dtype=dtype)
    dist.reduce_scatter_tensor(out, inp)
    assert torch.equal(out, torch.full((n,), rank * size + sum(range(size))).to(dtype)), dtype
    out = torch.zeros(n, dtype=dtype)
    dist._reduce_scatter_base(out, inp)
    assert torch.equal(out, torch.full((n,), rank * size + sum(range(size))).to(dtype)), dtype

# reduce, gather, scatter: only the root receives (sends) every block; reduce leaves the others'
# tensors as they were
t = torch.full((n,), rank + 1.0)
dist.reduce(t, dst=0)
assert torch.equal(t, torch.full((n,), sum(range(1, size + 1)) if rank == 0 else rank + 1.0))
g = [torch.zeros(n) for _ in range(size)] if rank == 0 else None
dist.gather(torch.full((n,), float(rank)), g, dst=0)
if rank == 0:
    assert all(torch.equal(g[r], torch.full((n,), float(r))) for r in range(size))
s = torch.zeros(n)
dist.scatter(s, [torch.full((n,), r * 3.0) for r in range(size)] if rank == 0 else None, src=0)
assert torch.equal(s, torch.full((n,), rank * 3.0))

# all_to_all with equal blocks, any dtype: rank r sends r * 100 + d to rank d, in blocks of 3
# rows of 2
for dtype in (torch.float32, torch.bfloat16, torch.int64, torch.int16):
    send = torch.cat([torch.full((3, 2), rank * 100 + d) for d in range(size)]).to(dtype)
    got = torch.zeros_like(send)
    dist.all_to_all_single(got, send)
    want = torch.cat([torch.full((3, 2), s * 100 + rank) for s in range(size)]).to(dtype)
    assert torch.equal(got, want), (dtype, got[:, 0])
    outs = [torch.zeros(5, dtype=dtype) for _ in range(size)]
    dist.all_to_all(outs, [torch.full((5,), rank * 100 + d).to(dtype) for d in range(size)])
    for s in range(size):
        assert torch.equal(outs[s], torch.full((5,), s * 100 + rank).to(dtype)), (dtype, s)


# MoE routing: rank r sends (r + d + step) % 3 rows to rank d (zeros included), different on
# every step; every rank computes the same table
def rows(frm, to, step):
    return (frm + to + step) % 3


for step in range(3):
    in_splits = [rows(rank, d, step) for d in range(size)]
    out_splits = [rows(s, rank, step) for s in range(size)]
    send = torch.cat([torch.full((in_splits[d], 4), rank * 100 + d * 10 + step)
                      for d in range(size)]).to(torch.bfloat16)
    got = torch.zeros(sum(out_splits), 4, dtype=torch.bfloat16)
    dist.all_to_all_single(got, send, out_splits, in_splits)
    want = torch.cat([torch.full((out_splits[s], 4), s * 100 + rank * 10 + step)
                      for s in range(size)]).to(torch.bfloat16)
    assert torch.equal(got, want), (step, got[:, 0])
    outs = [torch.zeros(out_splits[s], dtype=torch.int64) for s in range(size)]
    dist.all_to_all(outs, [torch.full((in_splits[d],), rank * 10 + d) for d in range(size)])
    for s in range(size):
        assert torch.equal(outs[s], torch.full((out_splits[s],), s * 10 + rank)), (step, s)
# point-to-point: a ring of blocking send/recv (even ranks send first), then every rank isends to
# every other while receiving from any source, the senders named
nxt, prv = (rank + 1) % size, (rank - 1) % size
for dtype in (torch.float32, torch.bfloat16, torch.int16, torch.bool):
    mine = (torch.arange(n) % 2 + rank).to(dtype)
    got = torch.zeros(n, dtype=dtype)
    if rank % 2 == 0:
        dist.send(mine, dst=nxt, tag=3)
        dist.recv(got, src=prv, tag=3)
    else:
        dist.recv(got, src=prv, tag=3)
        dist.send(mine, dst=nxt, tag=3)
    assert torch.equal(got, (torch.arange(n) % 2 + prv).to(dtype)), (dtype, got[:4])
sends = [dist.isend(torch.full((n,), rank * 10.0 + d), dst=d, tag=7)
         for d in range(size) if d != rank]
senders = set()
for _ in range(size - 1):
    got = torch.zeros(n)
    src = dist.recv(got, tag=7)  # any source
    assert torch.equal(got, torch.full((n,), src * 10.0 + rank)), (src, got[:4])
    senders.add(src)
for w in sends:
    w.wait()
assert senders == set(range(size)) - {rank}, senders
ops = [dist.P2POp(dist.isend, torch.full((3,), float(rank)), nxt),
       dist.P2POp(dist.irecv, got := torch.zeros(3), prv)]
for w in dist.batch_isend_irecv(ops):
    w.wait()
assert torch.equal(got, torch.full((3,), float(prv)))

# coalesced, async with futures in order, objects, barrier
ts = [torch.ones(10) * rank, torch.ones(20) * rank]
dist.all_reduce_coalesced(ts)
assert torch.equal(ts[0], torch.full((10,), float(sum(range(size)))))
works = [dist.all_reduce(torch.full((100_000,), float(i)), async_op=True) for i in range(8)]
futs = [w.get_future() for w in works]
for i, f in enumerate(futs):
    assert torch.equal(f.wait()[0], torch.full((100_000,), float(i * size)))
objs = [None] * size
dist.all_gather_object(objs, {"rank": rank})
assert objs == [{"rank": r} for r in range(size)]
lst = [f"from {rank}"]
dist.broadcast_object_list(lst, src=size - 1)
assert lst == [f"from {size - 1}"]
dist.barrier()
# new_group: a subgroup of the default group (no rendezvous of its own): collectives and
# messages in it, while a group of the last rank alone runs its own
sub = dist.new_group([0, 1])
alone = dist.new_group([size - 1])
if rank < 2:
    assert sub.backend == "tcp" and sub.size() == 2
    t = torch.ones(5)
    dist.all_reduce(t, group=sub)
    assert torch.equal(t, torch.full((5,), 2.0))
    got = torch.zeros(3)
    if rank == 0:
        dist.send(torch.full((3,), 7.0), dst=1, group=sub)
    else:
        assert dist.recv(got, group=sub) == 0  # the sender's global rank
        assert torch.equal(got, torch.full((3,), 7.0))
    outs = [torch.zeros(2) for _ in range(2)]
    dist.all_gather(outs, torch.full((2,), float(rank)), group=sub)
    assert torch.equal(outs[1], torch.ones(2))
if rank == size - 1:
    t = torch.full((4,), 3.0)
    dist.all_reduce(t, group=alone)
    assert torch.equal(t, torch.full((4,), 3.0))
# Each made with torch's count of groups as its number (libdtrain's Comm::subgroup(ranks,
# timeout, number)): its members exchanged no message to make it
count = dist.distributed_c10d._group_count  # torch's, after both: sub took count - 2
if rank < 2:
    assert sub.number is not None and sub.number % (1 << 20) == count - 2, (sub.number, count)
if rank == size - 1:
    assert alone.number % (1 << 20) == count - 1, (alone.number, count)
if rank == 1 and size == 2:
    assert alone.number == sub.number + 1, (sub.number, alone.number)
# Many groups, every rank calling new_group for each (torch's rule): each pair's all_reduce exact
pairs = [(i % size, (i + 1 + i // size) % size) for i in range(24)]
for a, b in pairs:
    if a == b:
        continue
    g = dist.new_group([a, b])
    if rank in (a, b):
        t = torch.full((3,), float(rank + 1))
        dist.all_reduce(t, group=g)
        assert torch.equal(t, torch.full((3,), float(a + b + 2))), (a, b, t)

# all_gather_coalesced: one allgather for every input (torch wants one dtype per call), any
# dtype (complex too), any shapes, empty tensors among them
for dtype in (torch.float32, torch.complex64, torch.int8):
    value = rank + 1j * rank if dtype.is_complex else rank
    ins = [torch.full(shape, value, dtype=dtype) for shape in ((3,), (2, 2), (0,), (5,))]
    outs = [[torch.empty_like(t) for t in ins] for _ in range(size)]
    dist.all_gather_coalesced(outs, ins)
    for r in range(size):
        for got, mine in zip(outs[r], ins):
            want = torch.full_like(mine, r + 1j * r if dtype.is_complex else r)
            assert torch.equal(got, want), ("all_gather_coalesced", dtype, r, got, want)

# all_reduce of a sparse COO tensor (SUM, as gloo): rank r holds r + 1 at (r, r) and 1 at (0, 1)
indices = torch.tensor([[rank, 0], [rank, 1]])
sparse = torch.sparse_coo_tensor(indices, torch.tensor([rank + 1.0, 1.0]), (size, size))
dist.all_reduce(sparse)
want = torch.diag(torch.arange(1.0, size + 1))
want[0, 1] = size
assert torch.equal(sparse.to_dense(), want), ("sparse all_reduce", sparse.to_dense(), want)
try:
    dist.all_reduce(sparse, op=dist.ReduceOp.MAX)
    raise AssertionError("a sparse all_reduce with MAX was not refused")
except Exception as e:  # noqa: BLE001 (dtrain.InvalidError; the text is what a user sees)
    assert ("dtrain: torch: allreduce: tensor: layout Sparse with op ReduceOp.MAX; expected "
            "ReduceOp.SUM") in str(e), str(e)

# torch's profiler: each call an event with its input shapes, ended once the call completes (the
# Works below are still referenced when the profiled block ends)
with torch.autograd.profiler.profile(record_shapes=True) as prof:
    work = dist.all_reduce(torch.ones(6, 2), async_op=True)
    work.wait()
    if rank < 2:  # rank 0 sends to rank 1
        got = torch.zeros(4)
        message = dist.isend(torch.ones(4), 1) if rank == 0 else dist.irecv(got, src=0)
        message.wait()
for name, shapes in (("dtrain:all_reduce", [[6, 2]]),
                     ("dtrain:send", [[4]] if rank == 0 else None),
                     ("dtrain:recv", [[4]] if rank == 1 else None)):
    if shapes is None:
        continue
    events = [e for e in prof.function_events if e.name == name]
    assert len(events) == 1 and events[0].input_shapes == shapes, (
        name, [(e.name, e.input_shapes) for e in prof.function_events])

dist.barrier()
dist.destroy_process_group()
print(f"PASS rank {rank} of {size}: every collective exact", flush=True)
