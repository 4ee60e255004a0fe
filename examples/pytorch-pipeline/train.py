#!/usr/bin/python3
"""Fashion-MNIST trained pipeline-parallel with PyTorch on dtrain's torch.distributed backend:
the model of examples/pytorch-ddp split into stages, one per rank. Each step's batch goes through
as micro-batches: activations forward to the next stage and gradients back to the previous one
with dist.isend / dist.irecv, in GPipe's or 1F1B's order; each stage then steps its own
parameters with the whole batch's gradient.

    dtrain submit examples/pytorch-pipeline/job.yaml      # 2 stages on 2 ranks, framework: torch

The data, the model and the rendezvous are examples/pytorch-ddp's (its train.py is imported):
the same network, learning rate, batch and data order as that data-parallel example, so the two
reach the same accuracy (docs/examples.md compares them). --backend gloo runs the same program on
torch's gloo.
"""

import argparse
import importlib.util
import os
import sys

import dtrain

ACTIVATION, GRADIENT, EVAL, REPORT = 1, 2, 3, 4  # message tags: one kind each
# Test images per forward pass: at 100 the convolutions' activations stay in the cache (at 1000,
# 50 MB each, the test set took 6 times the CPU time here).
EVAL_BATCH = 100


def ddp_example():
    """examples/pytorch-ddp/train.py as a module: its data loading, model and rendezvous."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pytorch-ddp",
                        "train.py")
    spec = importlib.util.spec_from_file_location("pytorch_ddp_train", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_args(ddp):
    p = ddp.add_training_arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]),
                                   backend="dtrain", steps_help="0: the whole training set")
    p.add_argument("--micro-batches", type=int, default=4)
    p.add_argument("--schedule", default="1f1b", choices=["1f1b", "gpipe"],
                   help="1f1b: after a warm-up each forward pass is followed by the oldest "
                        "pending backward; gpipe: every forward, then every backward")
    args = p.parse_args()
    ddp.require_at_least_one(p, args, ("epochs", "global_batch", "micro_batches"))
    if args.global_batch % args.micro_batches != 0:
        p.error(f"--micro-batches: expected a divisor of --global-batch {args.global_batch}, "
                f"got {args.micro_batches}")
    return args


def stage_ops(schedule, stage, stages, micro_batches):
    """This stage's passes of one step, in order: ("F", m) forward, ("B", m) backward.

    GPipe (Huang et al. 2019) runs every forward, then every backward. 1F1B (PipeDream-Flush,
    Narayanan et al. 2021) runs stages - stage - 1 forwards, then alternates one forward with the
    oldest pending backward, so that stage s keeps at most stages - s micro-batches' activations.
    Both run the backward passes in micro-batch order and compute the same gradients."""
    if schedule == "gpipe":
        return [("F", m) for m in range(micro_batches)] + [("B", m) for m in range(micro_batches)]
    warmup = min(stages - stage - 1, micro_batches)
    ops = [("F", m) for m in range(warmup)]
    for m in range(warmup, micro_batches):
        ops += [("F", m), ("B", m - warmup)]
    return ops + [("B", m) for m in range(micro_batches - warmup, micro_batches)]


def describe(torch, module):
    """How the run's header names a module: "Conv2d 1-16 3x3", "Linear 1568-10", "ReLU"."""
    if isinstance(module, torch.nn.Conv2d):
        return (f"Conv2d {module.in_channels}-{module.out_channels} "
                f"{module.kernel_size[0]}x{module.kernel_size[1]}")
    if isinstance(module, torch.nn.Linear):
        return f"Linear {module.in_features}-{module.out_features}"
    return type(module).__name__


def layer_costs(torch, model):
    """Multiply-adds per image of each module of the Sequential (what the stages are balanced
    by; ReLU, pooling and Flatten count as nothing), and each module's output shape for one
    image: found by running one image through it."""
    costs, shapes = [], []
    x = torch.zeros(1, 1, 28, 28)
    with torch.no_grad():
        for module in model:
            y = module(x)
            if isinstance(module, torch.nn.Conv2d):
                k = module.kernel_size[0] * module.kernel_size[1]
                costs.append(y.numel() * module.in_channels // module.groups * k)
            elif isinstance(module, torch.nn.Linear):
                costs.append(module.in_features * module.out_features)
            else:
                costs.append(0)
            shapes.append(tuple(y.shape[1:]))
            x = y
    return costs, shapes


def partition(costs, stages):
    """Boundaries b of `stages` runs of consecutive modules (stage s holds [b[s], b[s + 1])),
    each at least one, whose costliest run costs as little as possible: a pipeline moves at its
    slowest stage's pace. Of equal splits, the later stages hold fewer modules, so the free ones
    (ReLU, pooling) stay with the layer before them."""
    n = len(costs)
    inf = float("inf")
    best = [[inf] * (n + 1) for _ in range(stages + 1)]
    cut = [[0] * (n + 1) for _ in range(stages + 1)]
    best[0][0] = 0
    for k in range(1, stages + 1):
        for i in range(k, n + 1):
            last = 0
            for j in range(i - 1, k - 2, -1):  # down from i: the first of equal costs is kept
                last += costs[j]
                worst = max(best[k - 1][j], last)
                if worst < best[k][i]:
                    best[k][i], cut[k][i] = worst, j
    bounds, i = [n], n
    for k in range(stages, 0, -1):
        i = cut[k][i]
        bounds.insert(0, i)
    return bounds


class Stage:
    """This rank's modules of the model, and its share of each step: micro-batches in from the
    previous stage's rank, out to the next one's, and their gradients back."""

    def __init__(self, torch, modules, stage, stages, in_shape, out_shape, micro_batch):
        self.torch, self.dist = torch, torch.distributed
        self.module = torch.nn.Sequential(*modules)
        self.stage, self.stages = stage, stages
        self.first, self.last = stage == 0, stage == stages - 1
        self.in_shape, self.out_shape, self.micro_batch = in_shape, out_shape, micro_batch
        self.loss_fn = torch.nn.CrossEntropyLoss(reduction="sum")

    def train_step(self, ops, x, y, micro_batches):
        """The forward and backward passes of one step over x (first stage) and y (last stage),
        micro_batches pieces of each; the gradients of the batch's mean loss accumulate in the
        parameters' .grad. Returns the loss (on the last stage; 0 elsewhere)."""
        torch, dist = self.torch, self.dist
        batch = self.micro_batch * micro_batches
        # Every receive of the step posted at once: each message lands in its buffer whenever it
        # comes, while this stage computes.
        inputs = [torch.empty((self.micro_batch,) + self.in_shape) for _ in range(micro_batches)]
        grads = [torch.empty((self.micro_batch,) + self.out_shape) for _ in range(micro_batches)]
        receives = []
        if not self.first:
            receives += [dist.P2POp(dist.irecv, t, self.stage - 1, tag=ACTIVATION) for t in inputs]
        if not self.last:
            receives += [dist.P2POp(dist.irecv, t, self.stage + 1, tag=GRADIENT) for t in grads]
        works = dist.batch_isend_irecv(receives) if receives else []
        input_works = works[:micro_batches] if not self.first else []
        grad_works = works[-micro_batches:] if not self.last else []
        xs = x.chunk(micro_batches) if self.first else None
        ys = y.chunk(micro_batches) if self.last else None
        in_flight = {}  # micro-batch -> (its input, its output or loss): what backward needs
        sends = []  # every isend's Work and tensor, which must stay untouched until it is sent
        loss = 0.0
        for op, m in ops:
            if op == "F":
                if self.first:
                    inp = xs[m]
                else:
                    input_works[m].wait()
                    inp = inputs[m].requires_grad_()
                out = self.module(inp)
                if self.last:
                    # The batch's mean loss, in parts: each micro-batch's sum over the batch.
                    out = self.loss_fn(out, ys[m]) / batch
                    loss += out.item()
                else:
                    sent = out.detach()
                    sends.append((dist.isend(sent, self.stage + 1, tag=ACTIVATION), sent))
                in_flight[m] = (inp, out)
            else:
                inp, out = in_flight.pop(m)  # the micro-batch's graph goes with its backward
                if self.last:
                    out.backward()
                else:
                    grad_works[m].wait()
                    out.backward(grads[m])
                if not self.first:
                    sends.append((dist.isend(inp.grad, self.stage - 1, tag=GRADIENT), inp.grad))
        for work, _ in sends:
            work.wait()
        return loss

    def count_correct(self, images, labels):
        """Test images through the stages EVAL_BATCH at a time, forward only: each stage
        receives a batch, computes it and sends it on. The last stage's count (0 elsewhere)."""
        torch, dist = self.torch, self.dist
        correct = 0
        self.module.eval()
        with torch.no_grad():
            for at in range(0, len(labels), EVAL_BATCH):
                rows = min(EVAL_BATCH, len(labels) - at)
                if self.first:
                    x = images[at:at + rows]
                else:
                    x = torch.empty((rows,) + self.in_shape)
                    dist.recv(x, self.stage - 1, tag=EVAL)
                out = self.module(x)
                if self.last:
                    correct += int((out.argmax(1) == labels[at:at + rows]).sum())
                else:
                    dist.send(out, self.stage + 1, tag=EVAL)
        self.module.train()
        return correct


def main():
    ddp = ddp_example()
    args = parse_args(ddp)
    ctx = dtrain.init()  # first: before anything could initialise CUDA (docs/runtime-api.md)
    import torch
    dist = torch.distributed
    if "OMP_NUM_THREADS" not in os.environ:  # else torch took its thread count from there
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // ctx.local_size))
    torch.manual_seed(args.seed)
    ddp.init_process_group(torch, ctx, args.backend)
    root, stages, stage = ctx.rank == 0, ctx.size, ctx.rank
    micro_batch = args.global_batch // args.micro_batches

    train_set, test_set = ddp.load(torch, args.data, "train"), ddp.load(torch, args.data, "t10k")
    # Every stage takes the whole batch: the order of one rank, which is the data-parallel run's
    # global batches.
    shard = dtrain.Shard(len(train_set), rank=0, world=1, seed=args.seed)
    steps_per_epoch = len(shard) // args.global_batch
    if args.steps_per_epoch > 0:
        steps_per_epoch = min(steps_per_epoch, args.steps_per_epoch)

    # The whole model on every rank, as pytorch-ddp builds it after the same seed: each stage
    # starts from the weights the data-parallel run starts from, and keeps only its own modules.
    model = ddp.make_model(torch)
    costs, shapes = layer_costs(torch, model)
    if stages > len(model):
        sys.exit(f"pytorch-pipeline: the model has {len(model)} modules and each stage, one per "
                 f"rank, holds at least one; expected at most {len(model)} ranks, got {stages}")
    bounds = partition(costs, stages)
    names = [describe(torch, m) for m in model]
    first, end = bounds[stage], bounds[stage + 1]
    in_shape = (1, 28, 28) if first == 0 else shapes[first - 1]
    pipe = Stage(torch, list(model)[first:end], stage, stages, in_shape, shapes[end - 1],
                 micro_batch)
    del model
    params = list(pipe.module.parameters())  # none on a stage of ReLU and pooling only
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9) if params else None
    ops = stage_ops(args.schedule, stage, stages, args.micro_batches)

    epochs = f"{args.epochs} epoch{'' if args.epochs == 1 else 's'}"
    if root:
        print(f"pytorch-pipeline: {stages} stage{'' if stages == 1 else 's'} on {ctx.size} ranks "
              f"({ctx.bootstrap}), {len(train_set)} training images ({steps_per_epoch} "
              f"steps/epoch of global batch {args.global_batch} as {args.micro_batches} "
              f"micro-batches of {micro_batch}, schedule {args.schedule}), {len(test_set)} test "
              f"images, {epochs}, seed {args.seed}, backend {args.backend}", flush=True)
        for s in range(stages):
            print(f"stage {s} (rank {s}): {', '.join(names[bounds[s]:bounds[s + 1]])}; "
                  f"{sum(costs[bounds[s]:bounds[s + 1]])} multiply-adds per image", flush=True)

    def report(value, dtype):
        """The last stage's number, at rank 0: a message from one to the other."""
        t = torch.tensor([value], dtype=dtype)
        if stages > 1 and pipe.last:
            dist.send(t, 0, tag=REPORT)
        if stages > 1 and root:
            dist.recv(t, stages - 1, tag=REPORT)
        return t.item()

    def test_accuracy():
        return report(pipe.count_correct(test_set.tensors[0], test_set.tensors[1]),
                      torch.int64) / len(test_set)

    meter = dtrain.Meter(ctx)
    global_step = 0
    for epoch in range(args.epochs):
        shard.set_epoch(epoch)
        loader = iter(torch.utils.data.DataLoader(train_set, batch_size=args.global_batch,
                                                  sampler=shard, drop_last=True))
        loss_sum = 0.0
        for _ in range(steps_per_epoch):
            # The first stage counts the step's samples, once each: dtrain stats' total is then
            # the pipeline's throughput.
            with meter.step(args.global_batch if pipe.first else 0, step=global_step):
                x, y = next(loader)
                if optimizer:
                    optimizer.zero_grad()
                loss = pipe.train_step(ops, x, y, args.micro_batches)
                if optimizer:
                    optimizer.step()
            loss = report(loss, torch.float64)
            loss_sum += loss
            global_step += 1
            if root and args.log_every > 0 and global_step % args.log_every == 0:
                print(f"step {global_step} loss {loss:.6f}", flush=True)
        accuracy = test_accuracy()
        if root:
            print(f"epoch {epoch + 1}/{args.epochs}: train loss {loss_sum / steps_per_epoch:.4f}, "
                  f"test accuracy {100 * accuracy:.2f} %", flush=True)
    meter.flush()
    # The last epoch's accuracy is the final model's: nothing trained since.
    if root:
        print(f"final test accuracy {100 * accuracy:.2f} % after {epochs} on {ctx.size} ranks",
              flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
