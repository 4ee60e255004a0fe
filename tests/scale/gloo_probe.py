"""One rank of the emulated-scale table's torch/gloo row (scale_table.sh): the steps of
scale_probe (start-up, a barrier, a 4 KiB and a 1 MiB allreduce, each checked exactly) through
torch.distributed with the gloo backend, and the same line of figures."""
import os
import resource
import sys
import time

start = time.monotonic()
import torch  # noqa: E402  (importing torch is part of what a gloo rank pays to start)
import torch.distributed as dist  # noqa: E402

dist.init_process_group("gloo", init_method="env://")
init_s = time.monotonic() - start
rank, size = dist.get_rank(), dist.get_world_size()


def exact_allreduce(n):
    x = torch.arange(n, dtype=torch.int32) % 1000 + rank
    t = time.monotonic()
    dist.all_reduce(x)
    took = time.monotonic() - t
    want = (torch.arange(n, dtype=torch.int64) % 1000) * size + size * (size - 1) // 2
    return took, bool(torch.equal(x.to(torch.int64), want))


t = time.monotonic()
dist.barrier()
barrier_s = time.monotonic() - t
a4, ok4 = exact_allreduce(1024)
a1, ok1 = exact_allreduce(256 * 1024)
fds = len(os.listdir("/proc/self/fd")) - 1
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
line = (f"scale_probe rank={rank} size={size} init_s={init_s:.4f} barrier_s={barrier_s:.4f} "
        f"ar4k_s={a4:.5f} ar1m_s={a1:.5f} fds={fds} rss_kib={rss} exact={int(ok4 and ok1)} "
        f"transport=gloo\n")
sys.stdout.write(line)
sys.stdout.flush()
dist.destroy_process_group()
sys.exit(0 if ok4 and ok1 else 1)
