# The Python rank of a mixed C++/Python job: the same collectives as checkpoint_peer.cpp.
#   checkpoint_peer.py DIR STEP
import sys

import dtrain

ctx = dtrain.init()
ckpt = dtrain.Checkpointer(ctx, sys.argv[1])
ckpt.save(int(sys.argv[2]), f"shared from Python rank {ctx.rank}".encode(),
          rank_data=f"blob of Python rank {ctx.rank}".encode())
c = ckpt.load_latest()
print(f'Python rank {ctx.rank}: step {c.step}, data "{c.data.decode()}", '
      f'rank_data "{c.rank_data.decode()}", saved_world {c.saved_world}', flush=True)
