# A rank that never joins a collective, seen from Python: rank 1 either hangs past the deadline
# (`hang`) or exits without finalizing (`exit`); rank 0's allreduce must raise the dtrain.Error
# subclass of libdtrain's code and message, and prints it for the test's regular expression.
#   lost_rank.py hang|exit   (2 ranks, torchrun-style variables; DTRAIN_TIMEOUT set)
import os
import sys
import time

import numpy as np

import dtrain

ctx = dtrain.init()
if ctx.rank == 1:
    if sys.argv[1] == "hang":
        time.sleep(float(os.environ["DTRAIN_TIMEOUT"]) + 3)
    os._exit(0)
try:
    ctx.allreduce(np.ones(4))
except dtrain.Error as e:
    print(f"rank 0: {type(e).__name__} code={e.code}: {e}", flush=True)
    os._exit(0)  # the communicator is unusable now; nothing to finalize cleanly
print("rank 0: the allreduce returned; expected a dtrain.Error", flush=True)
os._exit(1)
