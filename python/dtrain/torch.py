"""dtrain's torch.distributed backend: ``import dtrain.torch`` registers the backend "dtrain".

    import torch.distributed as dist
    import dtrain.torch
    dist.init_process_group(backend="dtrain")  # env:// (torchrun, dtrain submit framework: torch)
    model = torch.nn.parallel.DistributedDataParallel(model)  # unchanged

    dtrain.torch.init_process_group()  # the same, also under mpirun / srun --mpi=pmix

Collectives run on libdtrain's host communicator (CPU tensors): shared memory on one node, the
hierarchy across nodes, errors that name a lost rank; all_reduce, broadcast, all_gather_into_tensor
and reduce_scatter_tensor of CUDA tensors on its NCCL communicator, after torch's current stream.
docs/torch.md has what is supported.
"""

import os as _os

import torch.distributed as _dist

from . import _live_context, _made_by, _torch
from ._torch import ProcessGroupDtrain  # noqa: F401

__all__ = ["BACKEND", "ProcessGroupDtrain", "init_process_group"]

BACKEND = "dtrain"

_TORCHRUN_VARIABLES = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")


# How many default groups of dtrain's this process has made: every rank makes the same ones.
_default_groups = [0]
# The numbers this process's groups took (_group_number), 8 bytes each.
_numbers_given = set()
# A new_group's number below: torch's count in the current default group's life, 2^20 of them
# per default group (libdtrain takes numbers below 2^30: 1,024 default groups).
_NUMBERS_PER_DEFAULT_GROUP = 1 << 20


def _group_number():
    """The number that the group torch is making now gets in libdtrain, or None.

    torch counts the groups it makes on every rank, members or not (all ranks call new_group, in
    the same order), and names each group's store prefix by that count: the same count on every
    member and on no other group, as Comm::subgroup's number must be. The count starts again
    after destroy_process_group, so the default groups made before set it apart.
    """
    c10d = _dist.distributed_c10d
    world = getattr(c10d, "_world", None)
    count = getattr(world, "group_count", None) if world is not None else None
    if count is None:
        count = getattr(c10d, "_group_count", None)  # torch 1.13
    if not isinstance(count, int) or count < 1 or count > _NUMBERS_PER_DEFAULT_GROUP:
        return None
    number = _default_groups[0] * _NUMBERS_PER_DEFAULT_GROUP + count - 1  # counted before us
    # A count that did not move since this process's last group (a torch that counts only some
    # groups): no number, so that the members agree instead of libdtrain refusing a repeat.
    if number >= (1 << 30) - 1 or number in _numbers_given:
        return None
    _numbers_given.add(number)
    return number


def _create(store, rank, size, timeout):
    # torch 1.13's creator signature (Backend.register_backend without extended_api). torch passes
    # its default (30 min) when init_process_group or new_group was given no timeout: then
    # DTRAIN_TIMEOUT rules (for a new_group, its default group's timeout), as it does for
    # everything else libdtrain waits for.
    given = None if timeout == _dist.default_pg_timeout else timeout
    default = _dist.distributed_c10d._get_default_group() if _dist.is_initialized() else None
    if isinstance(default, _torch.ProcessGroupDtrain):
        # new_group while the default group is dtrain's: a subgroup of it, sharing its
        # connections, instead of a rendezvous and connections of its own. torch does not pass
        # the members' global ranks: each member leaves its own in the group's store, with the
        # number it would give the group (below).
        mine = str(_group_number())  # "None" where torch's count is not known
        store.set(f"dtrain/global-rank/{rank}", f"{_dist.get_rank()} {mine}")
        seen = [store.get(f"dtrain/global-rank/{r}").decode().split() for r in range(size)]
        ranks = [int(global_rank) for global_rank, _ in seen]
        # Numbered where every member gave the same number, so that libdtrain makes the group
        # without a message; else (a torch that counts differently) its members agree on an id.
        numbers = {number for _, number in seen}
        number = int(mine) if numbers == {mine} and mine != "None" else None
        return _torch._subgroup(default, ranks, rank, given, number)
    if default is None:  # the default group (init_process_group), which every rank makes
        _default_groups[0] += 1
    # One Context per process (docs/torch.md): dtrain.init()'s when the program made it first (or
    # an earlier default group's, still alive), else the group's own, which dtrain.init() then
    # returns.
    shared = _live_context()
    group = _torch.ProcessGroupDtrain(store, rank, size, given, context=shared)
    if shared is None:
        _made_by(group)
    return group


# Importing twice (or reloading) must not register twice: torch asserts on a second registration.
if not hasattr(_dist.Backend, BACKEND.upper()):
    _dist.Backend.register_backend(BACKEND, _create)


def init_process_group(**kwargs):
    """torch.distributed.init_process_group(backend="dtrain") under any launch dtrain.init() knows.

    With torchrun's variables (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE) it is torch's env://.
    Otherwise (mpirun, srun --mpi=pmix, one process) dtrain.init() finds the rank and size, rank 0
    serves a torch TCPStore on a port the system picks, and its address reaches the others through
    dtrain's bootstrap. Other keyword arguments go to torch.distributed.init_process_group.
    """
    if all(v in _os.environ for v in _TORCHRUN_VARIABLES):
        return _dist.init_process_group(backend=BACKEND, **kwargs)
    import dtrain  # here: a torchrun-style launch needs no dtrain.init()

    ctx = dtrain.init()
    if ctx.size == 1:
        store = _dist.HashStore()
    else:
        store = _tcp_store(ctx, kwargs.get("timeout"))
    return _dist.init_process_group(backend=BACKEND, store=store, rank=ctx.rank,
                                    world_size=ctx.size, **kwargs)


def _tcp_store(ctx, timeout):
    import datetime

    timeout = timeout or datetime.timedelta(minutes=30)
    address = bytearray(256)
    server = None
    if ctx.rank == 0:
        # Port 0: the system picks a free one, so no port has to be agreed beforehand. Not
        # waiting for the workers here: they learn the port only from the broadcast below.
        server = _dist.TCPStore(ctx.hostname, 0, ctx.size, True, timeout,
                                wait_for_workers=False)
        text = f"{ctx.hostname} {server.port}".encode()
        address[: len(text)] = text
    ctx.broadcast(address, root=0)
    if server is not None:
        return server
    host, port = bytes(address).rstrip(b"\0").decode().split()
    return _dist.TCPStore(host, int(port), ctx.size, False, timeout)
