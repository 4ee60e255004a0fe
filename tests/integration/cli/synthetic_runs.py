#!/usr/bin/env python3
"""Writes the synthetic run directories of the logs/stats tests into WORK, with fixed times,
hosts and pids, so that what dtrain reports on them is the same on every machine (the report
goldens, tests/fixtures/golden/reports/, rely on it):

  hang               4 ranks; rank 2 never enters allreduce #5, in which the others wait
  sums               3 ranks; rank r, step s: 10 + r + s samples in 0.1 + 0.01 * s seconds
  scale1/2/4         the same job at 1, 2 and 4 ranks: 100 samples per 0.1 s step per rank,
                     90 % efficient at 4
  straggler2         2 ranks, 10 samples per 0.19 s step; rank 0 computes for 0.1 s and waits
                     0.09 s for rank 1, which computes for 0.19 s: 1.9x as long
  warnings           8 ranks on 4 nodes: each prints the same UserWarning within 70 ms, its own
                     loss line, the same "epoch 0 done" 3 s later (rank 5 twice), and exits
  sigcont            3 ranks; rank 1 stopped before allreduce #5: ranks 0 and 2 time out in it
                     naming rank 1 and exit with status 1; Open MPI's SIGCONT then wakes rank 1,
                     which enters #5, finds its peers gone, and is killed last
  sigcont-logs-only  the same without heartbeats (empty metric files)
  stacks             "hang" with the stacks the hang watch took (stacks/rank-NNNNN.json): ranks
                     0-1,3 wait in the allreduce, rank 2 computes in train_step, rank 3's second
                     thread has no symbol
  arrivals           3 ranks without the Meter (no metric files) whose loggers left their
                     collective waits (arrivals/rank-NNNNN.txt): 120 allreduces of 50 ms steps,
                     rank 1 arrives 10 ms after the others at each
  live               "hang" while it still runs (no exit line, no attempt or job-end record),
                     each rank's binding record naming four NIC variables and resource samples
                     with GPU fields: the report's live page (report_browser_test.sh)

Usage: synthetic_runs.py WORK
"""
import datetime
import json
import os
import sys

WORK = sys.argv[1]
T0 = 1795341600.0  # 2026-11-22T10:00:00Z


def ts(t):
    d = datetime.datetime.fromtimestamp(T0 + t, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%06dZ" % d.microsecond


def new_run(name, job_name, job_yaml):
    d = os.path.join(WORK, name)
    os.makedirs(d)
    with open(os.path.join(d, "plan.json"), "w") as f:
        json.dump({"version": 1, "job": {"name": job_name, "id": name}}, f)
    with open(os.path.join(d, "job.yaml"), "w") as f:
        f.write(job_yaml)
    return d


def write_run(name, ranks, rate_of, hang_rank=None, steps=20, comm_of=lambda r, s: 0.25):
    d = new_run(name, "resnet", "name: resnet\ngpus_per_rank: 1\n")
    for r in range(ranks):
        host = "node%d" % (r // 2)
        with open(os.path.join(d, "rank-%05d.log" % r), "w") as log:
            log.write("%s dtrain: rank %d of %d started on %s (local rank %d of 2, pid %d): train\n"
                      % (ts(0), r, ranks, host, r % 2, 100 + r))
        t = 0.0
        with open(os.path.join(d, "rank-%05d.jsonl" % r), "w") as m:
            for s in range(steps):
                if hang_rank == r and s == 5:
                    break
                m.write(json.dumps({"v": 2, "type": "coll", "time": T0 + t, "rank": r, "seq": s,
                                    "op": "allreduce", "bytes": 4096, "phase": "enter"}) + "\n")
                if hang_rank is not None and s == 5:
                    break  # everyone else waits in #5 for the hung rank
                samples, seconds = rate_of(r, s)
                m.write(json.dumps({"v": 2, "type": "coll", "time": T0 + t + 0.01, "rank": r,
                                    "seq": s, "op": "allreduce", "bytes": 4096,
                                    "phase": "exit"}) + "\n")
                t += seconds
                m.write(json.dumps({"v": 2, "type": "step", "time": T0 + t, "rank": r, "step": s,
                                    "samples": samples, "seconds": seconds,
                                    "comm_seconds": seconds * comm_of(r, s),
                                    "data_seconds": seconds / 10}) + "\n")


def write_warnings(name):
    d = new_run(name, "warned", "name: warned\ncommand: [a]\n")
    for r in range(8):
        with open(os.path.join(d, "rank-%05d.log" % r), "w") as log:
            log.write("%s dtrain: rank %d of 8 started on node%d (local rank %d of 2, pid %d): train\n"
                      % (ts(0), r, r // 2, r % 2, 100 + r))
            log.write("%s UserWarning: TypedStorage is deprecated\n" % ts(1 + 0.01 * r))
            log.write("%s step 0 loss %.2f\n" % (ts(1.5), 2.3 - 0.01 * r))
            for _ in range(2 if r == 5 else 1):
                log.write("%s epoch 0 done\n" % ts(4.5 + 0.001 * r))
            log.write("%s dtrain: rank %d exited with status 0\n" % (ts(5), r))


def write_sigcont(name, heartbeats):
    d = new_run(name, "woken", "name: woken\ncommand: [a]\n")
    ends = {0: (6.0, 6.1, "exited with status 1"), 2: (6.05, 6.3, "exited with status 1"),
            1: (9.0, 9.2, "was killed by signal 9 (SIGKILL)")}
    for r in range(3):
        err_t, exit_t, how = ends[r]
        missing = "0, 2" if r == 1 else "1"
        with open(os.path.join(d, "rank-%05d.log" % r), "w") as log:
            log.write("%s dtrain: rank %d of 3 started on node0 (local rank %d of 3, pid %d): train\n"
                      % (ts(0), r, r, 100 + r))
            log.write("%s dtrain: allreduce #5 (4096 bytes, rank %d of 3): tcp: missing ranks: %s; "
                      "not complete (DTRAIN_TIMEOUT)\n" % (ts(err_t), r, missing))
            log.write("%s dtrain: rank %d %s\n" % (ts(exit_t), r, how))
        with open(os.path.join(d, "rank-%05d.jsonl" % r), "w") as m:
            if not heartbeats:
                continue

            def coll(seq, t, phase, failed=False):
                rec = {"v": 2, "type": "coll", "time": T0 + t, "rank": r, "seq": seq,
                       "op": "allreduce", "bytes": 4096, "phase": phase}
                if failed:
                    rec["failed"] = True
                m.write(json.dumps(rec) + "\n")

            coll(4, 0.5, "enter")
            coll(4, 0.6, "exit")
            if r == 1:
                coll(5, 8.9, "enter")  # woken after the others failed
            else:
                coll(5, 1.0, "enter")
                coll(5, err_t, "exit", failed=True)


write_run("hang", 4, lambda r, s: (32, 0.1), hang_rank=2)
write_run("sums", 3, lambda r, s: (10 + r + s, 0.1 + 0.01 * s))
write_run("scale1", 1, lambda r, s: (100, 0.1))
write_run("scale2", 2, lambda r, s: (100, 0.1))
write_run("scale4", 4, lambda r, s: (90, 0.1))
write_run("straggler2", 2, lambda r, s: (10, 0.19), comm_of=lambda r, s: 0.09 / 0.19 if r == 0 else 0)
write_warnings("warnings")
write_sigcont("sigcont", heartbeats=True)
write_sigcont("sigcont-logs-only", heartbeats=False)


def write_stacks(name):
    write_run(name, 4, lambda r, s: (32, 0.1), hang_rank=2)
    d = os.path.join(WORK, name, "stacks")
    os.makedirs(d)
    for r in range(4):
        main = ["_start", "__libc_start_main", "main", "train_step"]
        main += ["matmul"] if r == 2 else ["dtrain::Comm::allreduce", "__poll"]
        helper = ["clone3", "start_thread", "?? from libpmix.so.2" if r == 3 else "pmix_progress",
                  "epoll_wait"]
        with open(os.path.join(d, "rank-%05d.json" % r), "w") as f:
            json.dump({"rank": r, "host": "node%d" % (r // 2), "pid": 100 + r, "attempt": 0,
                       "taken_at_us": int((T0 + 40) * 1e6), "threads": [main, helper]}, f)


write_stacks("stacks")


def write_arrivals(name):
    d = new_run(name, "resnet", "name: resnet\n")
    os.makedirs(os.path.join(d, "arrivals"))
    for r in range(3):
        host = "node%d" % (r // 2)
        with open(os.path.join(d, "rank-%05d.log" % r), "w") as log:
            log.write("%s dtrain: rank %d of 3 started on %s (local rank %d of 2, pid %d): train\n"
                      % (ts(0), r, host, r % 2, 100 + r))
        # Each rank's own clock, off by r seconds: only durations count.
        waits = [300 + 7 * (c % 5) if r == 1 else 10300 + 50 * ((c + r) % 7) for c in range(120)]
        first = int((T0 + r) * 1e6) + (10000 if r == 1 else 0)
        with open(os.path.join(d, "arrivals", "rank-%05d.txt" % r), "w") as f:
            f.write("arrivals rank=%d host=%s\n" % (r, host))
            f.write("window index=0 first_enter_us=%d last_leave_us=%d waits_us=%s\n"
                    % (first, first + 120 * 50000, ",".join(str(w) for w in waits)))


write_arrivals("arrivals")


def write_live(name):
    write_run(name, 4, lambda r, s: (32, 0.1), hang_rank=2)
    d = os.path.join(WORK, name)
    for r in range(4):
        nics = {"DTRAIN_NICS": "mlx5_%d" % r, "NCCL_IB_HCA": "=mlx5_%d:1" % r,
                "NCCL_SOCKET_IFNAME": "=hsn%d" % r, "UCX_NET_DEVICES": "mlx5_%d:1" % r}
        with open(os.path.join(d, "rank-%05d.jsonl" % r), "a") as m:
            m.write(json.dumps({"v": 2, "type": "binding", "time": T0, "rank": r,
                                "host": "node%d" % (r // 2), "cpus": "%d-%d" % (16 * r, 16 * r + 15),
                                "gpus": str(r % 2), "nics": nics}) + "\n")
            for k in range(5):
                m.write(json.dumps({"v": 2, "type": "resource", "time": T0 + 0.1 * k, "rank": r,
                                    "interval": 0.1, "cpu_percent": 97.5, "rss_bytes": 3 << 30,
                                    "gpu": r % 2, "gpu_util_percent": 80,
                                    "gpu_memory_bytes": 30 << 30, "gpu_power_watts": 301.5})
                        + "\n")


write_live("live")
