"""destroy_process_group() leaves nothing of dtrain's behind: the threads the group started
(libdtrain's progress thread, the completion thread) are gone and its shared memory (libdtrain's
/dtrain-* segment, unlinked once every rank mapped it) is unmapped; at exit no /dev/shm object of
this rank's remains.
    torch_cleanup.py   (2 ranks on one node, torchrun-style)"""
import gc
import glob
import os

import torch
import torch.distributed as dist

import dtrain.torch  # noqa: F401


def threads():
    return sorted(open(f"/proc/self/task/{t}/comm").read().strip()
                  for t in os.listdir("/proc/self/task"))


def dtrain_mappings():
    return sorted({line.split(None, 5)[-1].strip() for line in open("/proc/self/maps")
                   if "/dtrain-" in line})


torch.ones(4).add_(1)  # torch's own threads (intra-op pool) exist before the baseline
before = threads()
dist.init_process_group(backend="dtrain")
rank = dist.get_rank()
t = torch.ones(1 << 16)
dist.all_reduce(t)
dist.all_reduce(t, async_op=True).wait()
transport = dist.distributed_c10d._get_default_group().allreduce_transport
with_group, mapped = threads(), dtrain_mappings()
dist.destroy_process_group()
gc.collect()
after, left = threads(), dtrain_mappings()
print(f"rank {rank}: {transport}; threads: {len(before)} before the group, {len(with_group)} with "
      f"it, {len(after)} after destroy_process_group; dtrain mappings: {len(mapped)} with it "
      f"({' '.join(mapped)}), {len(left)} after", flush=True)
assert transport == "shared memory", transport
assert mapped, "no /dtrain-* mapping while the group lived: the test did not see its memory"
assert after == before, f"threads left: {sorted(set(after) - set(before))} ({after} vs {before})"
assert left == [], f"mappings left: {left}"
objects = glob.glob(f"/dev/shm/dtrain-{os.getpid()}-*")
assert objects == [], f"shared memory objects left: {objects}"
print(f"rank {rank}: PASS", flush=True)
