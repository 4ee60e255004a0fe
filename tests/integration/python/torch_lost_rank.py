"""A rank SIGKILLed between collectives: the survivor's next all_reduce raises, naming it.
    torch_lost_rank.py   (2 ranks, torchrun-style)"""
import os
import signal

import torch
import torch.distributed as dist

import dtrain.torch  # noqa: F401

dist.init_process_group(backend="dtrain")
t = torch.ones(1 << 16)
dist.all_reduce(t)
if dist.get_rank() == 1:
    os.kill(os.getpid(), signal.SIGKILL)
try:
    for _ in range(3):
        dist.all_reduce(t)
except Exception as e:  # noqa: BLE001 (the test prints whatever torch raises)
    print(f"rank 0: {type(e).__name__}: {e}", flush=True)
    os._exit(0)
print("rank 0: all_reduce returned; expected an error naming rank 1", flush=True)
os._exit(1)
