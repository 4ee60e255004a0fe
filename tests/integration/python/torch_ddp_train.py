"""An ordinary DDP training program, launched torchrun-style (env://): only the backend name
changes between runs. Writes this rank's losses and final parameters to OUT/rank-R.pt.
    torch_ddp_train.py BACKEND OUT STEPS"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

backend, out, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
if backend == "dtrain":
    import dtrain.torch  # noqa: F401  registers the backend; nothing else changes

torch.manual_seed(0)
torch.set_num_threads(1)
dist.init_process_group(backend=backend)
rank, size = dist.get_rank(), dist.get_world_size()

# A small MLP on a fixed regression task; each rank its own slice of every batch.
model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=1)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
gen = torch.Generator().manual_seed(1234)
w_true = torch.randn(32, 1, generator=gen)
losses = []
for step in range(steps):
    x = torch.randn(16 * size, 32, generator=gen)
    y = torch.tanh(x @ w_true)
    xb, yb = x[rank::size], y[rank::size]
    opt.zero_grad()
    loss = nn.functional.mse_loss(ddp(xb), yb)
    loss.backward()
    opt.step()
    # The global loss, as a user would log it.
    l = loss.detach().clone()
    dist.all_reduce(l, op=dist.ReduceOp.SUM)
    losses.append(l.item() / size)
torch.save({"losses": losses, "params": [p.detach().clone() for p in model.parameters()]},
           os.path.join(out, f"rank-{rank}.pt"))
dist.destroy_process_group()
