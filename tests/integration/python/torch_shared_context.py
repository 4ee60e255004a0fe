"""One Context per process (docs/torch.md): dtrain.init() first, then
init_process_group(backend="dtrain"), whose group runs on that Context (the same object). Rank 1
then stops itself (SIGSTOP) and rank 0's next collective of its own, ctx.allreduce, fails at
DTRAIN_TIMEOUT; the process must end then, not wait a second DTRAIN_TIMEOUT in the teardown of a
second, healthy Context (issue 46 item 5: ~Context -> ~TcpCommunicator's finalize). Run by
torch_shared_context_test.sh, which times rank 0's end.
    torch_shared_context.py  (tcp_launch.sh 2 ...)"""
import os
import signal
import socket

import numpy as np
import torch
import torch.distributed as dist

import dtrain
import dtrain.torch  # noqa: F401 (registers the backend "dtrain")

ctx = dtrain.init()
# torch's rendezvous on a free port: dtrain.init()'s own (env://) serves on MASTER_PORT.
where = bytearray(64)
if ctx.rank == 0:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        where[:] = f"tcp://127.0.0.1:{s.getsockname()[1]}".encode().ljust(64, b"\0")
ctx.broadcast(where, root=0)
dist.init_process_group("dtrain", init_method=bytes(where).rstrip(b"\0").decode(),
                        rank=ctx.rank, world_size=ctx.size)
group = dist.distributed_c10d._get_default_group()
print(f"rank {ctx.rank}: the group's Context is dtrain.init()'s: "
      f"{'yes' if group.context is ctx else 'no'}", flush=True)
t = torch.ones(4)
dist.all_reduce(t)
a = np.ones(1)
ctx.allreduce(a, "sum")
print(f"rank {ctx.rank}: pid {os.getpid()}", flush=True)
if ctx.rank == 1:
    os.kill(os.getpid(), signal.SIGSTOP)
print("rank 0: rank 1 stops; waiting in ctx.allreduce", flush=True)
ctx.allreduce(a, "sum")
