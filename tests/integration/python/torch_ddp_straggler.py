"""An unmodified DDP program (no dtrain.init(), no Meter): torchrun-style env://, backend "dtrain"
by name only. Each step "computes" 40 ms (a sleep) before the forward pass; the rank named by
STRAGGLER_RANK sleeps 1.25x as long. Rank 0 prints "step N" every 10 steps.
    torch_ddp_straggler.py STEPS"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

import dtrain.torch  # noqa: F401  registers the backend; nothing else of dtrain is used

steps = int(sys.argv[1])
torch.manual_seed(0)
torch.set_num_threads(1)
dist.init_process_group(backend="dtrain")
rank, size = dist.get_rank(), dist.get_world_size()
pause = 0.040 * (1.25 if os.environ.get("STRAGGLER_RANK") == str(rank) else 1.0)
model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 1))
ddp = nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
for step in range(1, steps + 1):
    time.sleep(pause)
    x = torch.randn(16, 32)
    opt.zero_grad()
    nn.functional.mse_loss(ddp(x), x[:, :1]).backward()
    opt.step()
    if rank == 0 and step % 10 == 0:
        print(f"step {step}", flush=True)
dist.destroy_process_group()
