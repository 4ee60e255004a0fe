"""Python's allreduce against the same libdtrain call from C++ (dtrain._dtrain._allreduce_loop),
in one run, on the same buffers and communicator: the binding's per-call overhead at 4 KiB and
its bandwidth ratio at 64 MiB (issue 19 asks for <= 5 us and >= 0.97). Rounds alternate between
the two so drift in the machine's load hits both; the median round is reported. Reports only.

    mpirun -n 2 --bind-to core /usr/bin/python3 bench/python_allreduce_bench.py
"""
import statistics
import time

import numpy as np

import dtrain
from dtrain import _dtrain

ctx = dtrain.init()
CASES = [(4 << 10, 2000, 15), (64 << 20, 5, 9)]  # bytes, calls per round, rounds


def python_loop(a, b, calls):
    start = time.perf_counter()
    for _ in range(calls):
        ctx.allreduce(a, out=b)
    return time.perf_counter() - start


if ctx.rank == 0:
    print(f"# python_allreduce_bench: {ctx.size} ranks, {ctx.backend} "
          f"({ctx.allreduce_transport}); per-call median over rounds, float32 sum, out of place")
    print(f"# {'bytes':>10} {'C++ us':>10} {'Python us':>10} {'overhead us':>12} {'ratio':>7}")
for size, calls, rounds in CASES:
    a = np.ones(size // 4, dtype=np.float32)
    b = np.zeros_like(a)
    python_loop(a, b, 2)
    _dtrain._allreduce_loop(ctx, a, b, 2)
    cxx, py = [], []
    for _ in range(rounds):
        cxx.append(_dtrain._allreduce_loop(ctx, a, b, calls) / calls)
        py.append(python_loop(a, b, calls) / calls)
    c, p = statistics.median(cxx), statistics.median(py)
    assert b[0] == ctx.size and b[-1] == ctx.size
    if ctx.rank == 0:
        print(f"  {size:>10} {c * 1e6:>10.2f} {p * 1e6:>10.2f} {(p - c) * 1e6:>12.2f} "
              f"{c / p:>7.3f}", flush=True)
