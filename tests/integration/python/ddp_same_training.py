"""The check that a DDP run on backend "dtrain" trained as the same run on gloo did: each rank's
loss at every step within 1e-4 relative of gloo's (on 2 ranks equal: a sum of two has one order;
on more the orders differ by an ulp, which training grows), and identical parameters on every rank
under dtrain (DDP's promise, which dtrain's same-bits reductions keep). Each run wrote
RUNS/BACKEND/rank-R.pt holding {"losses": [float per step], "params": [tensor]}
(torch_ddp_train.py, or examples/pytorch-ddp's --final-state).
    ddp_same_training.py RUNS RANKS STEPS"""
import sys

import torch

runs_dir, ranks, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = {b: [torch.load(f"{runs_dir}/{b}/rank-{r}.pt") for r in range(ranks)]
        for b in ("gloo", "dtrain")}
worst = 0.0
for r in range(ranks):
    gloo, ours = runs["gloo"][r]["losses"], runs["dtrain"][r]["losses"]
    assert len(gloo) == steps and len(ours) == steps, (
        f"rank {r}: {len(gloo)} losses under gloo and {len(ours)} under dtrain; expected {steps}")
    for step, (g, d) in enumerate(zip(gloo, ours), 1):
        diff = abs(g - d) / max(abs(g), 1e-12)
        assert diff <= 1e-4, (f"rank {r}, step {step}: loss {d!r} under dtrain, {g!r} under gloo: "
                              f"{diff:.2e} relative; expected <= 1e-4")
        worst = max(worst, diff)
first = {b: runs[b][0]["losses"] for b in runs}
print(f"{steps} steps on {ranks} ranks: rank 0's loss gloo {first['gloo'][0]:.6f} -> "
      f"{first['gloo'][-1]:.6f}, dtrain {first['dtrain'][0]:.6f} -> {first['dtrain'][-1]:.6f}; "
      f"largest relative difference over every rank and step {worst:.2e}")
for r in range(1, ranks):
    for i, (p0, pr) in enumerate(zip(runs["dtrain"][0]["params"], runs["dtrain"][r]["params"])):
        assert torch.equal(p0, pr), f"rank {r}'s parameter {i} differs from rank 0's under dtrain"
print("PASS: same training as gloo, identical parameters on every rank")
