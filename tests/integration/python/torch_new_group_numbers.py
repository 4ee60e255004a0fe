"""torch's new_group on backend "dtrain" made without a message among the members: each group
takes torch's count of groups as its number in libdtrain (Comm::subgroup(ranks, timeout, number),
ProcessGroupDtrain.number), which torch starts again at each default group, so the Context
that outlives destroy_process_group (dtrain.init()'s) must give the next default group's groups
other numbers (it refuses a number given twice). Also: members whose counts differ agree on the
group instead. Three rounds of init_process_group -> new_group -> all_reduce in it ->
destroy_process_group on N ranks (torchrun-style or under mpirun).
    torch_new_group_numbers.py  (tcp_launch.sh N or mpirun -n N)"""
import torch
import torch.distributed as dist

import dtrain
import dtrain.torch

ctx = dtrain.init()  # the Context every round's default group runs on
numbers = []
for round_ in range(3):
    if round_ == 2:  # a rank whose torch counted otherwise: the members then agree instead
        counted = dtrain.torch._group_number
        dtrain.torch._group_number = (lambda: None) if ctx.rank == 0 else counted
    dtrain.torch.init_process_group()
    rank, size = dist.get_rank(), dist.get_world_size()
    pair = dist.new_group([0, 1])
    everyone = dist.new_group(list(range(size)))
    if rank < 2:
        if round_ < 2:
            # torch's count: the default group took 0, the pair 1, everyone 2
            assert pair.number % (1 << 20) == 1 and everyone.number == pair.number + 1, (
                round_, pair.number, everyone.number)
            numbers.append(pair.number)
        else:
            assert pair.number is None, pair.number
        t = torch.full((3,), float(rank + 1))
        dist.all_reduce(t, group=pair)
        assert torch.equal(t, torch.full((3,), 3.0)), t
    t = torch.ones(2)
    dist.all_reduce(t, group=everyone)
    assert torch.equal(t, torch.full((2,), float(size))), t
    dist.barrier()
    dist.destroy_process_group()
if ctx.rank < 2:
    assert numbers[0] != numbers[1], numbers
print(f"PASS rank {ctx.rank}: numbers {numbers}", flush=True)
