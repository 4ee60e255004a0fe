# A rank whose script fails while the others train: every rank runs allreduces in a loop, and at
# step 20 rank 1 raises ValueError (`raise`) or calls sys.exit(3) (`exit`), uncaught. The others'
# allreduce must then fail naming rank 1, and the job end, within seconds, not at DTRAIN_TIMEOUT:
# rank 1 must leave the job rather than wait in the collective teardown at interpreter exit
# (failing_rank_test.sh checks).
#   failing_rank.py raise|exit
import os
import sys

import numpy as np

import dtrain

ctx = dtrain.init()
x = np.ones(1024, dtype=np.float32)
for step in range(1000000):
    if step == 20 and ctx.rank == 1:
        if sys.argv[1] == "raise":
            raise ValueError("injected failure at step 20")
        # One write(2) of the whole line: a launcher that merges the ranks' output (MPICH's Hydra)
        # may put the other rank's error between print's text and its newline.
        os.write(2, b"rank 1: sys.exit(3) at step 20\n")
        sys.exit(3)
    ctx.allreduce(x, "avg")
print(f"rank {ctx.rank}: expected a failure", file=sys.stderr)
sys.exit(1)
