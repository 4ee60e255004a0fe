"""torch.distributed.all_reduce on backend "dtrain" against "gloo", in one job: the default group
is dtrain's, a second group over the same ranks is gloo's, the same tensors go through both, and
rounds alternate between them so drift in the machine's load hits both; the median round is
reported. Also DDP's gradient step: one allreduce of a ResNet-50-sized gradient set (25.6 M
float32 in 25 MiB buckets, as DDP's default bucket_cap_mb cuts it). Reports only.

    bench/torch_allreduce_bench.py   (torchrun-style: tests/integration/runtime/tcp_launch.sh 2 ...)
"""
import statistics
import time

import torch
import torch.distributed as dist

import dtrain.torch

torch.set_num_threads(1)
dist.init_process_group(backend="dtrain")
rank, size = dist.get_rank(), dist.get_world_size()
groups = {"dtrain": dist.group.WORLD, "gloo": dist.new_group(backend="gloo")}
ROUNDS = 7
MIB = 1 << 20


def timed(tensors, group):
    dist.barrier(group=group)
    start = time.perf_counter()
    works = [dist.all_reduce(t, group=group, async_op=True) for t in tensors]
    for w in works:
        w.wait()
    return time.perf_counter() - start


cases = [(f"{mb} MiB", [torch.ones(mb * MIB // 4)]) for mb in (1, 16, 64)]
resnet = 25_557_032  # ResNet-50's parameters
bucket = 25 * MIB // 4
cases.append(("ResNet-50 grads", [torch.ones(min(bucket, resnet - i))
                                  for i in range(0, resnet, bucket)]))
pg = dist.distributed_c10d._get_default_group()
if rank == 0:
    print(f"# torch_allreduce_bench: {size} ranks on torch {torch.__version__}; dtrain "
          f"{pg.backend} ({pg.allreduce_transport}) vs gloo; float32 sum, median of {ROUNDS} rounds")
    print(f"# {'case':>16} {'dtrain ms':>10} {'gloo ms':>10} {'gloo/dtrain':>12}")
for name, tensors in cases:
    times = {"dtrain": [], "gloo": []}
    for _ in range(ROUNDS):
        for backend, group in groups.items():
            times[backend].append(timed(tensors, group))
    d, g = statistics.median(times["dtrain"]), statistics.median(times["gloo"])
    if rank == 0:
        print(f"  {name:>16} {d * 1e3:10.2f} {g * 1e3:10.2f} {g / d:12.2f}", flush=True)
dist.destroy_process_group()
