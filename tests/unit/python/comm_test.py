# dtrain.init() and the Context in one process (the single bootstrap), python/src/comm.cpp: its
# world, its communicator's properties, sequence numbers, the store.
import numpy as np

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


def test_store_round_trips_bytes(ctx):
    ctx.store_set("py-key", b"\x00value")
    assert ctx.store_get("py-key") == b"\x00value"
