"""Logistic regression with data-parallel gradient descent in plain mpi4py and NumPy.

An unchanged MPI program, as users bring them: it knows nothing of dtrain. `dtrain submit
examples/mpi4py/job.yaml` launches it (mpirun on the local site, srun on Slurm), each rank's
output goes to its log in the run directory, and `dtrain logs` merges them.

Every rank makes the same synthetic data set from the seed (two Gaussian classes in 20
dimensions), takes rows rank, rank + size, ... as its shard, computes the gradient of its shard's
summed loss and adds the ranks' gradients with Allreduce: each step is full-batch gradient descent
over the whole set, so any number of ranks reaches the same weights as one process (up to the
order floating-point sums are added in). Rank 0 prints the loss every 50 steps and the final loss
and test accuracy.

    mpirun -n 2 python3 examples/mpi4py/train.py [--steps 300] [--lr 0.5] [--samples 20000]
"""
import argparse
import socket

import numpy as np
from mpi4py import MPI


def make_data(samples, direction, rng):
    labels = rng.integers(0, 2, samples)
    # The classes' means are 1.5 apart along `direction`: they overlap, so about 77 % is the best
    # any classifier reaches.
    x = rng.normal(size=(samples, len(direction))) + np.outer(labels - 0.5, 1.5 * direction)
    return x, labels.astype(np.float64)


def loss_and_gradient(w, b, x, y):
    """The summed (not averaged) cross-entropy of the rows and its gradient, so that ranks add."""
    z = x @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    eps = 1e-12
    loss = -np.sum(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
    residual = p - y
    return loss, x.T @ residual, residual.sum()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    features = 20
    rng = np.random.default_rng(args.seed)  # the same numbers on every rank
    direction = rng.normal(size=features)
    direction /= np.linalg.norm(direction)
    x, y = make_data(args.samples, direction, rng)
    test_x, test_y = make_data(5000, direction, rng)
    mine_x, mine_y = x[rank::size], y[rank::size]
    print(f"rank {rank} of {size} on {socket.gethostname()}: {len(mine_y)} of {len(y)} samples")

    w = np.zeros(features)
    b = 0.0
    # Loss, then gradient of w and of b, in one buffer: one Allreduce per step.
    local = np.empty(features + 2)
    total = np.empty_like(local)
    for step in range(args.steps + 1):
        loss, grad_w, grad_b = loss_and_gradient(w, b, mine_x, mine_y)
        local[0], local[1:-1], local[-1] = loss, grad_w, grad_b
        comm.Allreduce(local, total, op=MPI.SUM)
        mean_loss = total[0] / len(y)
        if rank == 0 and step % 50 == 0:
            print(f"step {step} loss {mean_loss:.6f}")
        if step == args.steps:
            break
        w -= args.lr * total[1:-1] / len(y)
        b -= args.lr * total[-1] / len(y)

    # The test set is split the same way; the ranks' correct answers are added.
    predicted = (test_x[rank::size] @ w + b) > 0
    correct = comm.allreduce(int(np.sum(predicted == test_y[rank::size].astype(bool))), op=MPI.SUM)
    if rank == 0:
        print(f"final loss {mean_loss:.6f}, test accuracy {100.0 * correct / len(test_y):.2f} % "
              f"on {size} ranks")


if __name__ == "__main__":
    main()
