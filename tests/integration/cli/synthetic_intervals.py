#!/usr/bin/env python3
"""Writes a synthetic run directory at the Meter's default detail (interval records,
docs/metrics.md) into WORK, with fixed times and hosts, for the report goldens:

  straggler2-intervals  the job of synthetic_runs.py's straggler2 (2 ranks, 10 samples per 0.19 s
                        step; rank 0 computes for 0.1 s and waits 0.09 s for rank 1) over 200
                        steps, as the Meter writes it by default: steps 0-19 as step records,
                        then the interval records of steps 20-119 and 120-199

The histograms follow the documented buckets (bucket i holds (g^(i-1), g^i], g = 1.005/0.995),
written here from the documentation, apart from libdtrain's writer, so the golden also checks
that the reader takes the format as documented.

Usage: synthetic_intervals.py WORK
"""
import json
import math
import os
import sys

WORK = sys.argv[1]
T0 = 1795341600.0  # 2026-11-22T10:00:00Z
GAMMA = 1.005 / 0.995


def histogram(value, n):
    """The histogram of `n` equal values."""
    h = {"sum": value * n, "min": value, "max": value}
    if value <= 1e-9:
        h["zeros"] = n
    else:
        h["lo"] = math.ceil(math.log(value) / math.log(GAMMA))
        h["counts"] = [n]
    return h


def main():
    d = os.path.join(WORK, "straggler2-intervals")
    os.makedirs(d)
    with open(os.path.join(d, "plan.json"), "w") as f:
        json.dump({"version": 1, "job": {"name": "resnet", "id": "straggler2-intervals"}}, f)
    with open(os.path.join(d, "job.yaml"), "w") as f:
        f.write("name: resnet\ngpus_per_rank: 1\n")
    seconds, samples = 0.19, 10
    for r in range(2):
        comm = 0.09 if r == 0 else 0.0
        with open(os.path.join(d, "rank-%05d.log" % r), "w") as log:
            log.write("2026-11-22T10:00:00.000000Z dtrain: rank %d of 2 started on node0 "
                      "(local rank %d of 2, pid %d): train\n" % (r, r, 100 + r))
        t = 0.0
        with open(os.path.join(d, "rank-%05d.jsonl" % r), "w") as m:
            for s in range(20):
                t += seconds
                m.write(json.dumps({"v": 2, "type": "step", "time": T0 + t, "rank": r, "step": s,
                                    "samples": samples, "seconds": seconds, "comm_seconds": comm,
                                    "data_seconds": seconds / 10}) + "\n")
            for first, last in ((20, 119), (120, 199)):
                n = last - first + 1
                began = T0 + t
                t += seconds * n
                m.write(json.dumps({"v": 2, "type": "interval", "time": T0 + t, "rank": r,
                                    "first_step": first, "last_step": last, "count": n,
                                    "began": began, "samples": histogram(samples, n),
                                    "seconds": histogram(seconds, n),
                                    "comm_seconds": histogram(comm, n),
                                    "data_seconds": histogram(seconds / 10, n)}) + "\n")


if __name__ == "__main__":
    main()
