"""new_group(ranks, timeout=...) under a dtrain default group: the group's collectives end at its
own timeout, not at DTRAIN_TIMEOUT, and the error says so with " timeout " in it (what torch's
test_barrier_timeout_* look for). 3 ranks, run with DTRAIN_TIMEOUT=60: rank 1 enters the group's
barrier alone; it must fail after about 2 s (the bound: under 10 s, far below 60).
    torch_group_timeout.py"""
import datetime
import re
import time

import torch.distributed as dist

import dtrain.torch  # noqa: F401 (registers the backend)

dist.init_process_group(backend="dtrain")
rank = dist.get_rank()
group = dist.new_group([1, 2], timeout=datetime.timedelta(seconds=2))
if rank == 1:  # rank 2 never enters the barrier
    start = time.monotonic()
    try:
        dist.barrier(group=group)
        error = "none"
    except Exception as e:  # noqa: BLE001 (the text is what a user sees)
        error = f"{type(e).__name__}: {e}"
    took = time.monotonic() - start
    torch_matches = re.search(" (Timed out|closed|timeout) ", error) is not None
    print(f"rank 1: barrier on new_group([1, 2], timeout=2 s), DTRAIN_TIMEOUT=60: failed within "
          f"10 s: {'yes' if took < 10 else 'no'} ({took:.1f} s); torch's pattern matches: "
          f"{'yes' if torch_matches else 'no'}: {error}", flush=True)
dist.barrier()  # the default group: ranks 0 and 2 wait here for rank 1
dist.destroy_process_group()
