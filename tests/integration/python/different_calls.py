# Issue 33 item 3 where the ranks do not meet in shared memory (DTRAIN_SHM=0): rank 1 passes 4097
# float32 elements to an allreduce where rank 0 passes 4096. Over the sockets each message carries
# its call, and both ranks raise InvalidError naming both calls; on the MPI communicator the
# recursive doubling's message sizes differ, and both ranks raise naming the sizes (MPI delivers
# a shorter message without a word, and refuses a longer one). Each rank prints its line and exits
# 0 when it raised as expected, 1 otherwise.
import re
import sys

import numpy as np

import dtrain

EXPECTED = {
    "tcp": [r"ranks passed different calls to one collective: rank 0 passed 4096 float32 elements "
            r"\(sum\), rank 1 passed 4097 float32 elements \(sum\); every rank must pass"] * 2,
    "mpi": [r"ranks passed different calls to one collective: rank 1's message was larger than "
            r"the 16384 bytes rank 0 expected; every rank must pass",
            r"ranks passed different calls to one collective: rank 0's message was 16384 bytes "
            r"where rank 1 expected 16388; every rank must pass"],
}

ctx = dtrain.init()
backend = ctx.backend
buf = np.ones(4097 if ctx.rank == 1 else 4096, dtype=np.float32)
try:
    ctx.allreduce(buf, "sum")
except dtrain.InvalidError as e:
    ok = re.search(EXPECTED[backend][ctx.rank], str(e)) is not None
    print(f"rank {ctx.rank}: {'ok' if ok else 'WRONG MESSAGE'} ({backend}): {e}", flush=True)
    sys.exit(0 if ok else 1)
print(f"rank {ctx.rank}: no error from an allreduce of different calls ({backend})", flush=True)
sys.exit(1)
