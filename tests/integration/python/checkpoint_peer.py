# The Python rank of a mixed C++/Python job: the same collectives as checkpoint_peer.cpp.
#   checkpoint_peer.py DIR STEP
import sys

import dtrain

ctx = dtrain.init()
ckpt = dtrain.Checkpointer(ctx, sys.argv[1])
ckpt.save(int(sys.argv[2]), f"shared from Python rank {ctx.rank}".encode(),
          rank_data=f"blob of Python rank {ctx.rank}".encode())
c = ckpt.load_latest()
# One write with its newline: print() writes the text and its end separately, and mpirun's output
# forwarding put the C++ rank's line between the two (the test's whole-line match then failed).
sys.stdout.write(f'Python rank {ctx.rank}: step {c.step}, data "{c.data.decode()}", '
                 f'rank_data "{c.rank_data.decode()}", saved_world {c.saved_world}\n')
sys.stdout.flush()
