#!/usr/bin/env python3
"""Writes the synthetic run directories of the report page's goldens (the page model, the JSON
`dtrain report` draws from: tests/fixtures/golden/reports/page-*.json) into WORK, with fixed
times, hosts and pids. Every job has ended (each rank's exit line), so nothing in the model
depends on when the page is written:

  page-clean      4 ranks on 2 nodes, 20 steps of 32 samples in 0.1 s, a binding record and
                  resource samples each; every rank exits with status 0
  page-failed     4 ranks on 2 nodes; rank 2 is SIGKILLed after step 11, the others time out in
                  allreduce #12 naming it and exit with status 1
  page-intervals  2 ranks at the Meter's default detail: steps 0-19 as step records, then the
                  interval records of steps 20-119 and 120-199 (synthetic_intervals.py's
                  histograms); rank 1 computes 1.9x as long as rank 0
  page-64         64 ranks on 16 nodes (node0-node15, 4 each), rank 37 1.5x slow; resource samples
  page-stacks     4 ranks; rank 2 never enters allreduce #5, the hang watch took every rank's
                  stacks (stacks/rank-NNNNN.json, as synthetic_runs.py's "stacks"), then the job
                  was stopped (SIGTERM)

Usage: synthetic_pages.py WORK
"""
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from synthetic_intervals import histogram  # noqa: E402 (the documented buckets, one writer)

WORK = sys.argv[1]
T0 = 1795341600.0  # 2026-11-22T10:00:00Z


def ts(t):
    d = datetime.datetime.fromtimestamp(T0, datetime.timezone.utc) + datetime.timedelta(
        microseconds=round(t * 1e6))
    return d.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def line(rec):
    return json.dumps(rec, separators=(",", ":")) + "\n"


def write_job(name, ranks, per_node, seconds_of, steps=20, last_step=None, ends=None,
              resources=False, bindings=False, intervals=False):
    """A job of `ranks` ranks, `per_node` a node; rank r's step takes seconds_of(r) and it writes
    steps 0..last_step(r)-1; ends(r, t) gives its last log lines after its last step at t."""
    d = os.path.join(WORK, name)
    os.makedirs(d)
    with open(os.path.join(d, "plan.json"), "w") as f:
        json.dump({"version": 1, "job": {"name": "resnet", "id": name}}, f)
    with open(os.path.join(d, "job.yaml"), "w") as f:
        f.write("name: resnet\ngpus_per_rank: 1\n")
    for r in range(ranks):
        host = "node%d" % (r // per_node)
        log = ["%s dtrain: rank %d of %d started on %s (local rank %d of %d, pid %d): train"
               % (ts(0), r, ranks, host, r % per_node, per_node, 100 + r)]
        recs = []
        if bindings:
            recs.append(line({"v": 2, "type": "binding", "time": T0, "rank": r, "host": host,
                              "cpus": "%d-%d" % (8 * r, 8 * r + 7), "gpus": str(r % per_node),
                              "nics": {"NCCL_SOCKET_IFNAME": "=hsn%d" % (r % per_node)}}))
        secs = seconds_of(r)
        t = 0.0
        last = steps if last_step is None else last_step(r)
        for s in range(min(last, 20) if intervals else last):
            recs.append(line({"v": 2, "type": "coll", "time": T0 + t + secs - 0.02, "rank": r,
                              "seq": s, "op": "allreduce", "bytes": 4096, "phase": "enter"}))
            recs.append(line({"v": 2, "type": "coll", "time": T0 + t + secs, "rank": r, "seq": s,
                              "op": "allreduce", "bytes": 4096, "phase": "exit"}))
            t += secs
            recs.append(line({"v": 2, "type": "step", "time": T0 + t, "rank": r, "step": s,
                              "samples": 32, "seconds": secs, "comm_seconds": 0.02,
                              "data_seconds": secs / 10}))
            if resources and s % 5 == 4:
                recs.append(line({"v": 2, "type": "resource", "time": T0 + t, "rank": r,
                                  "interval": 5 * secs, "cpu_percent": 90 + r % 7,
                                  "rss_bytes": (2 << 30) + r * 4096, "gpu": r % per_node,
                                  "gpu_util_percent": 80 + r % 5, "gpu_memory_bytes": 30 << 30,
                                  "gpu_power_watts": 300.5}))
        if intervals:
            for first, final in ((20, 119), (120, last - 1)):
                n = final - first + 1
                began = T0 + t
                t += secs * n
                recs.append(line({"v": 2, "type": "interval", "time": T0 + t, "rank": r,
                                  "first_step": first, "last_step": final, "count": n,
                                  "began": began, "samples": histogram(32, n),
                                  "seconds": histogram(secs, n),
                                  "comm_seconds": histogram(0.02, n),
                                  "data_seconds": histogram(secs / 10, n)}))
        log += ends(r, t) if ends else ["%s dtrain: rank %d exited with status 0" % (ts(t + 0.1), r)]
        with open(os.path.join(d, "rank-%05d.log" % r), "w") as f:
            f.write("\n".join(log) + "\n")
        with open(os.path.join(d, "rank-%05d.jsonl" % r), "w") as f:
            f.write("".join(recs))
    return d


write_job("page-clean", 4, 2, lambda r: 0.1, resources=True, bindings=True)


def failed_end(r, t):
    if r == 2:
        return ["%s dtrain: rank 2 was killed by signal 9 (SIGKILL)" % ts(t + 0.05)]
    return ["%s dtrain: allreduce #12 (4096 bytes, rank %d of 4): tcp: missing ranks: 2; "
            "not complete (DTRAIN_TIMEOUT)" % (ts(t + 5), r),
            "%s dtrain: rank %d exited with status 1" % (ts(t + 5.1), r)]


write_job("page-failed", 4, 2, lambda r: 0.1, last_step=lambda r: 12 if r == 2 else 13,
          ends=failed_end)
write_job("page-intervals", 2, 2, lambda r: 0.19 if r == 1 else 0.1, steps=200, intervals=True)
write_job("page-64", 64, 4, lambda r: 0.15 if r == 37 else 0.1, resources=True)


def stopped_end(r, t):
    return ["%s dtrain: rank %d was killed by signal 15 (SIGTERM)" % (ts(40.5), r)]


d = write_job("page-stacks", 4, 2, lambda r: 0.1, last_step=lambda r: 5 if r == 2 else 6,
              ends=stopped_end)
os.makedirs(os.path.join(d, "stacks"))
for r in range(4):
    main = ["_start", "__libc_start_main", "main", "train_step"]
    main += ["matmul"] if r == 2 else ["dtrain::Comm::allreduce", "__poll"]
    helper = ["clone3", "start_thread", "?? from libpmix.so.2" if r == 3 else "pmix_progress",
              "epoll_wait"]
    with open(os.path.join(d, "stacks", "rank-%05d.json" % r), "w") as f:
        json.dump({"rank": r, "host": "node%d" % (r // 2), "pid": 100 + r, "attempt": 0,
                   "taken_at_us": int((T0 + 40) * 1e6), "threads": [main, helper]}, f)
