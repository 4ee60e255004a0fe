#!/usr/bin/python3
"""Fashion-MNIST with a mixture-of-experts layer and expert parallelism, in PyTorch on dtrain's
torch.distributed backend: the experts spread over the ranks, each image's features routed by a
top-1 gate to one expert wherever it lives, with split sizes that differ on every step
(all_to_all_single, moe.py). Everything else is data-parallel: each rank trains on its shard of
every global batch, and the gradients of the parameters every rank holds are averaged.

    dtrain submit examples/pytorch-moe/job.yaml      # 4 experts on 2 ranks, framework: torch

The same program on one rank holds every expert: the same model and the same training, which
the runs on several ranks match (docs/examples.md compares them); --experts 1 makes the layer a
plain feed-forward block, the dense sibling. The data and the rendezvous are
examples/pytorch-ddp's (its train.py is imported). --backend gloo runs it on torch's gloo.
"""

import argparse
import importlib.util
import os
import sys

import numpy as np

import dtrain

# Test images per forward pass: at 100 the convolutions' activations stay in the cache (at 1000,
# 50 MB each, the test set took 6 times the CPU time here).
EVAL_BATCH = 100


def ddp_example():
    """examples/pytorch-ddp/train.py as a module: its data loading and rendezvous."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pytorch-ddp",
                        "train.py")
    spec = importlib.util.spec_from_file_location("pytorch_ddp_train", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_args(ddp):
    p = ddp.add_training_arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]),
                                   backend="dtrain")
    p.add_argument("--experts", type=int, default=4,
                   help="experts in all, a multiple of the ranks (1: a dense feed-forward block)")
    p.add_argument("--width", type=int, default=64, help="the tokens' width (the features')")
    p.add_argument("--hidden", type=int, default=128, help="each expert's hidden width")
    p.add_argument("--balance", type=float, default=0.01,
                   help="weight of the load-balancing loss (Switch Transformer's alpha)")
    args = p.parse_args()
    ddp.require_at_least_one(p, args, ("epochs", "global_batch", "experts", "width", "hidden"))
    return args


def make_model(torch, moe, args, rank, world):
    """Convolutions to one token of `width` features per image, the MoE layer, a linear layer to
    the 10 classes. Built after the same seed on every rank, so that the parameters every rank
    holds start equal; the experts start from seeds of their own (moe.MoE)."""
    nn = torch.nn
    torch.manual_seed(args.seed)
    features = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, args.width), nn.ReLU())
    layer = moe.MoE(args.width, args.hidden, args.experts, args.seed, rank, world)
    return nn.Sequential(features, layer, nn.Linear(args.width, 10)), layer


def main():
    ddp = ddp_example()
    args = parse_args(ddp)
    ctx = dtrain.init()  # first: before anything could initialise CUDA (docs/runtime-api.md)
    root, world = ctx.rank == 0, ctx.size
    if args.experts % world != 0:
        sys.exit(f"pytorch-moe: --experts: expected a multiple of the {world} ranks (each holds "
                 f"experts/ranks of them), got {args.experts}")
    if args.global_batch % world != 0:
        sys.exit(f"pytorch-moe: --global-batch: expected a multiple of the {world} ranks, got "
                 f"{args.global_batch}")
    import torch
    import moe  # the MoE layer, next to this file (imports torch)
    dist = torch.distributed
    if "OMP_NUM_THREADS" not in os.environ:  # else torch took its thread count from there
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // ctx.local_size))
    ddp.init_process_group(torch, ctx, args.backend)
    local_batch = args.global_batch // world

    train_set, test_set = ddp.load(torch, args.data, "train"), ddp.load(torch, args.data, "t10k")
    # Rank r takes positions r, r + world, ... of each epoch's order: the ranks' local batches
    # make up the global batch one rank would take (Shard, as for DDP).
    shard = dtrain.Shard(len(train_set), ctx, seed=args.seed)
    steps_per_epoch = shard.size() // local_batch
    if args.steps_per_epoch > 0:
        steps_per_epoch = min(steps_per_epoch, args.steps_per_epoch)

    model, layer = make_model(torch, moe, args, ctx.rank, world)
    expert_params = layer.expert_parameters()
    mine = {id(p) for p in expert_params}
    shared_params = [p for p in model.parameters() if id(p) not in mine]
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def average_gradients(loss):
        """The shared parameters' gradients averaged over the ranks in one all_reduce, with the
        loss in the same buffer. Each expert's gradient already sums every rank's tokens for it
        (the all_to_all's backward brought them), of losses that are each a mean over one rank's
        batch: divided by the ranks, it is the gradient of the global batch's mean loss."""
        flat = torch.cat([p.grad.reshape(-1) for p in shared_params] + [loss.detach().reshape(1)])
        dist.all_reduce(flat)
        flat /= world
        at = 0
        for p in shared_params:
            p.grad.copy_(flat[at:at + p.numel()].view_as(p))
            at += p.numel()
        for p in expert_params:
            if p.grad is not None:
                p.grad /= world
        return flat[-1].item()

    def test_accuracy():
        """Every test image once: rank r a contiguous slice, in as many batches as every other
        rank (each batch is a collective: all ranks route their tokens together)."""
        n = len(test_set)
        begin, end = n * ctx.rank // world, n * (ctx.rank + 1) // world
        most = (n + world - 1) // world  # the largest slice
        batches = (most + EVAL_BATCH - 1) // EVAL_BATCH
        counts = np.zeros(2, dtype=np.int64)  # correct, seen
        model.eval()
        with torch.no_grad():
            for rows in torch.arange(begin, end).tensor_split(batches):
                x, y = test_set.tensors[0][rows], test_set.tensors[1][rows]
                counts += [int((model(x).argmax(1) == y).sum()), len(y)]
        model.train()
        ctx.allreduce(counts, "sum")
        return counts[0] / counts[1]

    epochs = f"{args.epochs} epoch{'' if args.epochs == 1 else 's'}"
    if root:
        print(f"pytorch-moe: {world} ranks ({ctx.bootstrap}), {args.experts} experts "
              f"({layer.local} per rank, top-1, width {args.width}, hidden {args.hidden}), "
              f"{len(train_set)} training images ({steps_per_epoch} steps/epoch of global batch "
              f"{args.global_batch}, {local_batch} per rank), {len(test_set)} test images, "
              f"{epochs}, seed {args.seed}, backend {args.backend}", flush=True)
    meter = dtrain.Meter(ctx)
    global_step = 0
    for epoch in range(args.epochs):
        shard.set_epoch(epoch)
        loader = iter(torch.utils.data.DataLoader(train_set, batch_size=local_batch,
                                                  sampler=shard, drop_last=True))
        loss_sum, routed = 0.0, torch.zeros(args.experts, dtype=torch.int64)
        for _ in range(steps_per_epoch):
            with meter.step(local_batch, step=global_step):
                x, y = next(loader)
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                (loss + args.balance * layer.balance_loss).backward()
                loss = average_gradients(loss)
                optimizer.step()
            loss_sum += loss
            routed += layer.counts
            global_step += 1
            if root and args.log_every > 0 and global_step % args.log_every == 0:
                counts = " ".join(str(c) for c in layer.counts.tolist())
                print(f"step {global_step} loss {loss:.6f} tokens per expert {counts}", flush=True)
        accuracy = test_accuracy()
        if root:
            print(f"epoch {epoch + 1}/{args.epochs}: train loss {loss_sum / steps_per_epoch:.4f}, "
                  f"test accuracy {100 * accuracy:.2f} %, tokens per expert "
                  f"{' '.join(str(c) for c in routed.tolist())}", flush=True)
    meter.flush()
    # The last epoch's accuracy is the final model's: nothing trained since.
    if root:
        print(f"final test accuracy {100 * accuracy:.2f} % after {epochs} on {world} ranks",
              flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
