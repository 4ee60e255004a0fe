# Issue 45 item 4: a broadcast whose root differs across ranks, and an allreduce on one rank where
# the other broadcasts, over the TCP backend with and without the node's shared memory. Each rank
# passing its own root kept its own data without a word; the allreduce against a broadcast waited
# for the whole deadline, then blamed the other rank. Every rank must raise InvalidError naming
# both calls, well before DTRAIN_TIMEOUT (20 s in the test). Each rank prints its line and exits 0
# when it raised as expected, 1 otherwise.
#   different_roots.py roots|calls
import re
import sys
import time

import numpy as np

import dtrain

EXPECTED = {
    "roots": r"ranks passed different calls to one collective: rank 0 passed 8 float32 elements "
             r"to broadcast from root 0, rank 1 passed 8 float32 elements to broadcast from root "
             r"1; every rank must pass the same number of elements, element type and root",
    "calls": r"ranks passed different calls to one collective: rank 0 passed 1000 float32 "
             r"elements \(sum\), rank 1 passed 1000 float32 elements to broadcast from root 0; "
             r"every rank must call the same collective and pass",
}
case = sys.argv[1]

ctx = dtrain.init()
start = time.monotonic()
try:
    if case == "roots":
        buf = np.full(8, ctx.rank, dtype=np.float32)
        ctx.broadcast(buf, root=ctx.rank)
    elif ctx.rank == 0:
        ctx.allreduce(np.ones(1000, dtype=np.float32), "sum")
    else:
        ctx.broadcast(np.ones(1000, dtype=np.float32), root=0)
except dtrain.InvalidError as e:
    seconds = time.monotonic() - start
    ok = re.search(EXPECTED[case], str(e)) is not None and seconds < 10
    print(f"rank {ctx.rank}: {'ok' if ok else 'WRONG'} after {seconds:.1f} s: {e}", flush=True)
    sys.exit(0 if ok else 1)
print(f"rank {ctx.rank}: no error from {case} that differ across ranks", flush=True)
sys.exit(1)
