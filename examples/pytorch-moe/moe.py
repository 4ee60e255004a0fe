"""A mixture-of-experts layer with expert parallelism on torch.distributed (examples/pytorch-moe).

Each rank holds `experts // world` of the experts and a copy of the gate. A top-1 gate picks one
expert per token; the tokens go to the ranks that hold their experts with one all_to_all_single
whose split sizes differ on every step (as many rows to each rank as its experts were picked),
the experts compute, and a second all_to_all_single brings the results back. No capacity limit:
no token is dropped, however uneven the routing. The split sizes are exchanged first, by an
all_to_all_single of the per-expert counts, since a rank cannot know what the others send it.
"""

import torch
import torch.distributed as dist
from torch import nn


class AllToAll(torch.autograd.Function):
    """all_to_all_single of rows with autograd: the gradient goes back along the same routes,
    with the split sizes swapped."""

    @staticmethod
    def forward(ctx, x, output_splits, input_splits):
        ctx.splits = (output_splits, input_splits)
        out = x.new_empty((sum(output_splits),) + tuple(x.shape[1:]))
        dist.all_to_all_single(out, x.contiguous(), output_splits, input_splits)
        return out

    @staticmethod
    def backward(ctx, grad):
        output_splits, input_splits = ctx.splits
        back = grad.new_empty((sum(input_splits),) + tuple(grad.shape[1:]))
        dist.all_to_all_single(back, grad.contiguous(), input_splits, output_splits)
        return back, None, None


def make_expert(width, hidden):
    return nn.Sequential(nn.Linear(width, hidden), nn.ReLU(), nn.Linear(hidden, width))


class MoE(nn.Module):
    """x + p * expert(x) for each token x (a row), expert the gate's top choice and p its
    probability (Switch Transformer, Fedus et al. 2022), with the Switch load-balancing loss.

    Expert e is built from its own seed (seed, e), so it starts the same wherever it lives: one
    rank holding every expert and four ranks holding one each train the same model."""

    def __init__(self, width, hidden, experts, seed, rank=0, world=1):
        super().__init__()
        if experts % world != 0:
            raise ValueError(f"MoE: experts: expected a multiple of the {world} ranks, got "
                             f"{experts}")
        self.experts_total, self.world = experts, world
        self.local = experts // world
        self.gate = nn.Linear(width, experts)
        mine = range(rank * self.local, (rank + 1) * self.local)
        local_experts = []
        for e in mine:
            with torch.random.fork_rng():
                torch.manual_seed(seed * 1000 + e + 1)
                local_experts.append(make_expert(width, hidden))
        self.experts = nn.ModuleList(local_experts)
        self.counts = None  # tokens per expert over all ranks in the last forward pass
        self.balance_loss = None

    def expert_parameters(self):
        return list(self.experts.parameters())

    def forward(self, x):
        probs = torch.softmax(self.gate(x), dim=1)
        p, choice = probs.max(dim=1)

        # Who sends what to whom. counts[e]: this rank's tokens for expert e, e in rank order;
        # sorting the tokens by expert sorts them by the rank that holds it.
        counts = torch.bincount(choice, minlength=self.experts_total)
        order = torch.sort(choice, stable=True).indices
        received = torch.empty_like(counts)  # [r * local + j]: rank r's tokens for my expert j
        dist.all_to_all_single(received, counts)
        send_splits = counts.view(self.world, self.local).sum(1).tolist()
        recv_splits = received.view(self.world, self.local).sum(1).tolist()

        tokens = AllToAll.apply(x[order], recv_splits, send_splits)
        # The rows came grouped by sender, each sender's by expert: which local expert each is.
        which = torch.arange(self.local).repeat(self.world).repeat_interleave(received)
        out = tokens.new_zeros(tokens.shape)
        for j, expert in enumerate(self.experts):
            rows = (which == j).nonzero().squeeze(1)
            out = out.index_copy(0, rows, expert(tokens.index_select(0, rows)))
        back = AllToAll.apply(out, send_splits, recv_splits)
        y = back.index_select(0, torch.argsort(order))  # into the tokens' own order

        # Switch's balance loss over the whole batch: E * sum_e f_e * P_e, f_e the share of
        # tokens routed to e (counted over every rank) and P_e the mean gate probability of e.
        # This rank's term uses its own P_e; the terms' mean over the ranks (the gradient
        # average) is the whole batch's loss, as one rank holding every token would compute it.
        total = counts.clone()
        dist.all_reduce(total)
        self.counts = total
        share = total.to(probs.dtype) / total.sum()
        self.balance_loss = self.experts_total * (share * probs.mean(dim=0)).sum()
        return x + p.unsqueeze(1) * y
