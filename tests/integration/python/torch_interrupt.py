"""Ctrl-C and deadlines in dtrain's torch backend while rank 1 never joins rank 0's collective
(2 ranks, torchrun-style; DTRAIN_TIMEOUT=120 in the environment):
  all_reduce|barrier|work  SIGINT 1 s into dist.all_reduce / dist.barrier / an async Work's wait():
                           KeyboardInterrupt then, not at DTRAIN_TIMEOUT; the next collective
                           says the group was given up; destroy_process_group() and the exit take
                           seconds, not the peers' deadline.
  timeout                  init_process_group(timeout=3 s): the all_reduce fails after 3 s.
Rank 0 prints what it saw for the test's regular expression, then leaves a verdict file that lets
rank 1 exit.
    torch_interrupt.py all_reduce|barrier|work|timeout"""
import os
import signal
import sys
import threading
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import dtrain.torch  # noqa: F401

BOUND = 20  # seconds: far from any machine's speed, far below DTRAIN_TIMEOUT

op = sys.argv[1]
if op == "timeout":
    dist.init_process_group(backend="dtrain", timeout=timedelta(seconds=3))
else:
    dist.init_process_group(backend="dtrain")
verdict = f"/tmp/dtrain-torch-interrupt-test-{os.getppid()}"  # both ranks: one launcher's
if dist.get_rank() == 1:
    deadline = time.monotonic() + 90
    while not os.path.exists(verdict) and time.monotonic() < deadline:
        time.sleep(0.1)
    if os.path.exists(verdict):
        os.unlink(verdict)
    os._exit(0)

t = torch.ones(1000)
calls = {
    "all_reduce": lambda: dist.all_reduce(t),
    "barrier": dist.barrier,
    "work": lambda: dist.all_reduce(t, async_op=True).wait(),
    "timeout": lambda: dist.all_reduce(t),
}
if op != "timeout":
    # A shell starts background jobs (tcp_launch.sh's ranks) with SIGINT ignored, and Python then
    # keeps it ignored; a terminal's Ctrl-C reaches a foreground program's usual handler.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def interrupt():
        time.sleep(1)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()


def within(start):
    took = time.monotonic() - start
    return f"yes ({took:.1f} s)" if took < BOUND else f"NO ({took:.1f} s)"


start = time.monotonic()
try:
    calls[op]()
    print(f"rank 0: the {op} returned; expected an error", flush=True)
except KeyboardInterrupt:
    print(f"rank 0: KeyboardInterrupt in the {op}, within {BOUND} s: {within(start)}", flush=True)
    try:
        dist.all_reduce(t)
        print("rank 0: the all_reduce after it returned; expected dtrain.CommError", flush=True)
    except dtrain.CommError as e:
        print(f"rank 0: then CommError: {e}", flush=True)
except dtrain.TimeoutError as e:
    print(f"rank 0: TimeoutError in the {op}, within {BOUND} s: {within(start)}: {e}", flush=True)
start = time.monotonic()
dist.destroy_process_group()
print(f"rank 0: destroy_process_group, within {BOUND} s: {within(start)}", flush=True)
with open(verdict, "w"):
    pass
