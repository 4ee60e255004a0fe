#!/usr/bin/python3
"""Fashion-MNIST with PyTorch DistributedDataParallel on CPU (gloo or dtrain), made observable and
safe by dtrain: per-rank step records (Meter, so `dtrain stats` shows the throughput), the data
shard (Shard as the DataLoader's sampler), a crash-safe checkpoint written by rank 0
(Checkpointer, torch.save streamed into it), and an agreed stop on SIGUSR1/SIGTERM (Preemption):
every rank saves the same step and exits 85, and the next run resumes there with the same result
as a run that was never stopped.

    dtrain submit examples/pytorch-ddp/job.yaml      # 2 ranks, framework: torch

DDP's collectives go through torch.distributed's gloo, or with --backend dtrain through dtrain's
backend (import dtrain.torch: libdtrain's shared memory and sockets; docs/torch.md): the same
program otherwise, and the same losses.

The data is Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist), as for the C++
example (examples/fashion-mnist).
"""

import argparse
import gzip
import io
import os
import sys

import numpy as np

import dtrain

MEAN, STD = 0.2860, 0.3530  # of the training images' pixels


def add_training_arguments(p, backend="gloo", steps_help="0: the whole shard"):
    """The arguments every PyTorch example takes (this one, pytorch-pipeline and pytorch-moe,
    which import this file): the data, the length of the training, its batch, learning rate and
    seed, how often rank 0 logs, and torch.distributed's backend (`backend`: the default)."""
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--global-batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--steps-per-epoch", type=int, default=0, help=steps_help)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--backend", default=backend, choices=["gloo", "dtrain"],
                   help="torch.distributed's backend: gloo, or dtrain's (docs/torch.md)")
    return p


def require_at_least_one(p, args, names):
    """Refuses (argparse's error, exit 2) any of `names` below 1, naming its option."""
    for name in names:
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')}: expected 1 or more, got {getattr(args, name)}")


def parse_args():
    p = add_training_arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]))
    p.add_argument("--checkpoint-dir", default="",
                   help="default: DTRAIN_RUN_DIR/checkpoints when set, else none")
    p.add_argument("--no-checkpoint", action="store_true")
    p.add_argument("--final-state", default="", metavar="DIR",
                   help="write this rank's loss at every step and its final parameters to "
                        "DIR/rank-R.pt (torch.save), to compare runs such as gloo's and dtrain's")
    args = p.parse_args()
    require_at_least_one(p, args, ("epochs", "global_batch"))
    return args


def read_idx(path):
    """An IDX file (gzip): uint8 images [N, 28, 28] or labels [N]."""
    if not os.path.exists(path):
        sys.exit(f"pytorch-ddp: {path}: no such file; install Debian's dataset-fashion-mnist "
                 f"(apt-get install dataset-fashion-mnist) or pass --data DIR")
    with gzip.open(path, "rb") as f:
        raw = f.read()
    magic, count = int.from_bytes(raw[0:4], "big"), int.from_bytes(raw[4:8], "big")
    if magic == 0x803:
        return np.frombuffer(raw, np.uint8, offset=16).reshape(count, 28, 28)
    if magic == 0x801:
        return np.frombuffer(raw, np.uint8, offset=8)
    sys.exit(f"pytorch-ddp: {path}: bad IDX magic number {magic:#010x}")


def load(torch, data, kind):
    images = read_idx(os.path.join(data, f"{kind}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(data, f"{kind}-labels-idx1-ubyte.gz"))
    x = (torch.from_numpy(images.astype(np.float32) / 255.0) - MEAN) / STD
    return torch.utils.data.TensorDataset(x.unsqueeze(1), torch.from_numpy(labels.astype(np.int64)))


def make_model(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


def init_process_group(torch, ctx, backend):
    """torch's rendezvous for `backend`: torchrun's variables when the launch gave them
    (framework: torch), else rank 0's host and a free port, agreed through dtrain."""
    if backend == "dtrain":
        import dtrain.torch  # noqa: F401 (registers the backend "dtrain")
    if "MASTER_ADDR" in os.environ and "MASTER_PORT" in os.environ:
        method = "env://"
    else:
        import socket
        where = bytearray(256)
        if ctx.rank == 0:
            with socket.socket() as s:
                s.bind(("", 0))
                where[:] = f"tcp://{ctx.hostname}:{s.getsockname()[1]}".encode().ljust(256, b"\0")
        ctx.broadcast(where)
        method = bytes(where).rstrip(b"\0").decode()
    torch.distributed.init_process_group(backend, init_method=method, rank=ctx.rank,
                                         world_size=ctx.size)


def test_accuracy(torch, ctx, model, test_set):
    """Every test image exactly once over the ranks; the counts summed by dtrain."""
    shard = dtrain.Shard(len(test_set), ctx, shuffle=False, tail="exact_once")
    loader = torch.utils.data.DataLoader(test_set, batch_size=1000, sampler=shard)
    counts = np.zeros(2, dtype=np.int64)  # correct, seen
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            counts += [int((model(x).argmax(1) == y).sum()), len(y)]
    model.train()
    ctx.allreduce(counts, "sum")
    return counts[0] / counts[1]


def checkpoint_dir(args):
    if args.no_checkpoint:
        return None
    if args.checkpoint_dir:
        return args.checkpoint_dir
    run_dir = os.environ.get("DTRAIN_RUN_DIR")
    return os.path.join(run_dir, "checkpoints") if run_dir else None


def main():
    args = parse_args()
    if args.final_state and not os.path.isdir(args.final_state):
        sys.exit(f"pytorch-ddp: --final-state: expected an existing directory, got "
                 f"\"{args.final_state}\"")
    ctx = dtrain.init()  # first: before anything could initialise CUDA (docs/runtime-api.md)
    import torch
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // ctx.local_size))
    torch.manual_seed(args.seed)
    init_process_group(torch, ctx, args.backend)
    root = ctx.rank == 0
    if args.global_batch % ctx.size != 0:
        sys.exit(f"pytorch-ddp: --global-batch: expected a multiple of the {ctx.size} ranks, "
                 f"got {args.global_batch}")
    local_batch = args.global_batch // ctx.size

    train_set, test_set = load(torch, args.data, "train"), load(torch, args.data, "t10k")
    shard = dtrain.Shard(len(train_set), ctx, seed=args.seed)
    steps_per_epoch = shard.size() // local_batch
    if args.steps_per_epoch > 0:
        steps_per_epoch = min(steps_per_epoch, args.steps_per_epoch)

    model = make_model(torch)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    epoch, step_in_epoch, global_step = 0, 0, 0
    resumed_loss_sum = 0.0  # this rank's loss summed over the epoch's steps before a stop
    ckpt_dir = checkpoint_dir(args)
    ckpt = dtrain.Checkpointer(ctx, ckpt_dir) if ckpt_dir else None
    if ckpt is not None:
        found = ckpt.load_latest()  # collective: every rank gets rank 0's bytes
        if found is not None:
            state = torch.load(io.BytesIO(found.data))
            if (state["global_batch"], state["seed"]) != (args.global_batch, args.seed):
                sys.exit(f"pytorch-ddp: {found.path}: saved by a run with --global-batch "
                         f"{state['global_batch']} --seed {state['seed']}; expected "
                         f"--global-batch {args.global_batch} --seed {args.seed}")
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            epoch, step_in_epoch, global_step = state["epoch"], state["step_in_epoch"], found.step
            resumed_loss_sum = state["loss_sum"]
            if root:
                print(f"resumed from {found.path} at epoch {epoch}, step {global_step}", flush=True)
    ddp = torch.nn.parallel.DistributedDataParallel(model)  # broadcasts rank 0's weights

    def save(at_epoch, at_step_in_epoch, at_loss_sum):
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                 "epoch": at_epoch, "step_in_epoch": at_step_in_epoch, "loss_sum": at_loss_sum,
                 "global_batch": args.global_batch, "seed": args.seed}
        ckpt.save(global_step, (lambda f: torch.save(state, f)) if root else None)

    epochs = f"{args.epochs} epoch{'' if args.epochs == 1 else 's'}"
    if root:
        print(f"pytorch-ddp: {ctx.size} ranks ({ctx.bootstrap}), {len(train_set)} training images "
              f"({steps_per_epoch} steps/epoch of global batch {args.global_batch}, {local_batch} "
              f"per rank), {len(test_set)} test images, {epochs}, seed {args.seed}, "
              f"backend {args.backend}", flush=True)
    meter = dtrain.Meter(ctx)
    losses = []  # this rank's, for --final-state
    loss_fn = torch.nn.CrossEntropyLoss()
    with dtrain.Preemption(ctx) as preemption:
        while epoch < args.epochs:
            shard.set_epoch(epoch, consumed=step_in_epoch * local_batch)
            loader = iter(torch.utils.data.DataLoader(train_set, batch_size=local_batch,
                                                      sampler=shard, drop_last=True))
            loss_sum = torch.tensor([resumed_loss_sum], dtype=torch.float64)
            resumed_loss_sum = 0.0
            while step_in_epoch < steps_per_epoch:
                with meter.step(local_batch, step=global_step):
                    x, y = next(loader)
                    optimizer.zero_grad()
                    loss = loss_fn(ddp(x), y)
                    loss.backward()  # DDP averages the gradients over the backend
                    optimizer.step()
                loss_sum += loss.detach()
                losses.append(loss.item())
                step_in_epoch += 1
                global_step += 1
                if root and args.log_every > 0 and global_step % args.log_every == 0:
                    print(f"step {global_step} loss {loss.item():.6f}", flush=True)
                if preemption.should_stop():  # collective: the same step on every rank
                    if ckpt is not None:
                        save(epoch, step_in_epoch, loss_sum.item())
                    if root:
                        saved = f"checkpoint saved in {ckpt_dir}" if ckpt else "nothing saved"
                        print(f"stopping at step {global_step} on a signal: {saved}", flush=True)
                    meter.flush()
                    return dtrain.EXIT_REQUEUE
            mean_loss = np.array([loss_sum.item() / steps_per_epoch])
            ctx.allreduce(mean_loss, "avg")
            accuracy = test_accuracy(torch, ctx, model, test_set)
            epoch, step_in_epoch = epoch + 1, 0
            if root:
                print(f"epoch {epoch}/{args.epochs}: train loss {mean_loss[0]:.4f}, "
                      f"test accuracy {100 * accuracy:.2f} %", flush=True)
            if ckpt is not None:
                save(epoch, 0, 0.0)
    meter.flush()
    if args.final_state:
        torch.save({"losses": losses, "params": [p.detach().clone() for p in model.parameters()]},
                   os.path.join(args.final_state, f"rank-{ctx.rank}.pt"))
    accuracy = test_accuracy(torch, ctx, model, test_set)
    if root:
        print(f"final test accuracy {100 * accuracy:.2f} % after {epochs} on {ctx.size} ranks",
              flush=True)
    torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
