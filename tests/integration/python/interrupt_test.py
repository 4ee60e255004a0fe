# Ctrl-C in a blocking collective (python/src/interrupt.cpp): rank 1 never joins; rank 0 gets
# SIGINT 1 s into OP and must raise KeyboardInterrupt then, not at DTRAIN_TIMEOUT (120 s here);
# its next collective says the communicator is unusable. Rank 0 prints what it saw for the test's
# regular expression, then leaves a verdict file that lets rank 1 exit.
#   interrupt_test.py allreduce|broadcast|work|dropped|fused   (2 ranks, any launcher; DTRAIN_TIMEOUT set)
import os
import signal
import sys
import threading
import time

import numpy as np

import dtrain

BOUND = 20  # seconds: far from any machine's speed, far below DTRAIN_TIMEOUT

op = sys.argv[1]
ctx = dtrain.init()
# Both ranks are children of one launcher (tcp_launch.sh, or mpirun on this node).
verdict = f"/tmp/dtrain-interrupt-test-{os.getppid()}"
if ctx.rank == 1:
    deadline = time.monotonic() + 90
    while not os.path.exists(verdict) and time.monotonic() < deadline:
        time.sleep(0.1)
    if os.path.exists(verdict):
        os.unlink(verdict)
    os._exit(0)


# A shell starts background jobs (tcp_launch.sh's ranks) with SIGINT ignored, and Python then
# keeps it ignored; a terminal's Ctrl-C reaches a foreground program's usual handler.
signal.signal(signal.SIGINT, signal.default_int_handler)


def interrupt():
    time.sleep(1)
    os.kill(os.getpid(), signal.SIGINT)


a = np.ones(4)


def dropped():
    ctx.allreduce_async(a)  # dropped unfinished: its destructor waits, and cannot raise,
    end = time.monotonic() + 5  # so it signals SIGINT again: raised at the interpreter's next check
    while time.monotonic() < end:
        pass


calls = {
    "allreduce": lambda: ctx.allreduce(a),
    "broadcast": lambda: ctx.broadcast(a, root=1),
    "work": lambda: ctx.allreduce_async(a).wait(),
    "dropped": dropped,
    "fused": lambda: dtrain.FusedAllreduce(ctx, [a, np.ones(8)]).run(),
}
threading.Thread(target=interrupt, daemon=True).start()
start = time.monotonic()
try:
    calls[op]()
    print(f"rank 0: the {op} returned; expected KeyboardInterrupt", flush=True)
except KeyboardInterrupt:
    took = time.monotonic() - start
    within = f"yes ({took:.1f} s)" if took < BOUND else f"NO ({took:.1f} s)"
    print(f"rank 0: KeyboardInterrupt in the {op}, within {BOUND} s: {within}", flush=True)
    try:
        ctx.barrier()
        print("rank 0: the barrier after it returned; expected dtrain.CommError", flush=True)
    except dtrain.CommError as e:
        print(f"rank 0: then CommError: {e}", flush=True)
with open(verdict, "w"):
    pass
os._exit(0)  # the communicator is abandoned: nothing to finalize
