"""A second default group made while the first one's subgroups still hold the process's Context,
which the program itself does not hold (it never kept dtrain.init()'s object): the second
init_process_group must run on that Context, not make a second one. Two Contexts were two
sequences of collectives, and at exit each rank let them go in its own order (ranks 0 and 1 held
the first through the pair's group and the second through `again`, rank 2 the first through its
own group), so every rank waited in a finalize the others were not in until DTRAIN_TIMEOUT. Then a third
round once nothing holds the Context (freed, finalized with the other ranks): a new Context,
also under PMIx, which cannot start twice in a process (libdtrain keeps it from the first Context
to the exit); under the MPI bootstrap, which cannot either, the error that says so.
    torch_reinit_groups.py  (mpirun -n 3)"""
import gc

import torch
import torch.distributed as dist

import dtrain
import dtrain.torch

dtrain.torch.init_process_group()
rank = dist.get_rank()
bootstrap = dist.distributed_c10d._get_default_group().context.bootstrap
pair = dist.new_group([0, 1])
alone = dist.new_group([2])
held = pair if rank < 2 else alone  # this rank's group of the first round
if rank < 2:
    t = torch.full((2,), float(rank + 1))
    dist.all_reduce(t, group=pair)
    assert torch.equal(t, torch.full((2,), 3.0)), t
dist.barrier()
dist.destroy_process_group()

dtrain.torch.init_process_group()
default = dist.distributed_c10d._get_default_group()
assert default.context is held.context, "a second Context was made beside the live one"
assert dtrain.init() is held.context
again = dist.new_group([0, 1])
t = torch.ones(3)
dist.all_reduce(t)
assert torch.equal(t, torch.full((3,), 3.0)), t
dist.barrier()
dist.destroy_process_group()

del default, held, pair, alone, again
gc.collect()
assert dtrain._live_context() is None, "the Context outlived every holder"
try:
    dtrain.torch.init_process_group()
except dtrain.CommError as e:
    assert bootstrap == "mpi" and "MPI was already finalized in this process" in str(e), e
    print(f"PASS rank {rank}: a third Context refused under the MPI bootstrap", flush=True)
else:
    t = torch.ones(3)
    dist.all_reduce(t)
    assert torch.equal(t, torch.full((3,), 3.0)), t
    dist.destroy_process_group()
    print(f"PASS rank {rank}: three rounds ({bootstrap})", flush=True)
