# dtrain.Meter: the same rank-NNNNN.jsonl records as the C++ Meter (docs/metrics.md), including
# the heartbeats of collectives called from Python, and the step() timer.
import json
import os
import time

import numpy as np
import pytest

import dtrain
from conftest import run_fresh

# A record per step and a heartbeat per collective (docs/metrics.md, "Detail"): what these tests
# compare. Set before the session's init() reads it (this file runs in a process of its own).
os.environ["DTRAIN_RECORDS"] = "steps"


def records(path, kind):
    with open(path) as f:
        return [r for r in map(json.loads, f) if r["type"] == kind]


def test_disabled_without_a_run_dir(ctx):
    meter = dtrain.Meter(ctx)
    assert not meter.enabled and meter.path == ""
    meter.record(0, 32, 0.1)  # dropped


def test_record_writes_step_records(ctx, tmp_path):
    meter = dtrain.Meter(ctx, tmp_path)
    assert meter.enabled and meter.path == str(tmp_path / "rank-00000.jsonl")
    meter.record(3, 32, 0.0123)
    meter.add_data_seconds(0.5)
    meter.record(4, 32, 0.0125)
    meter.record(5, 16, 0.01, data_seconds=0.002)
    meter.flush()
    steps = records(meter.path, "step")
    assert [(r["step"], r["samples"], r["seconds"]) for r in steps] == [
        (3, 32, 0.0123), (4, 32, 0.0125), (5, 16, 0.01)]
    assert "data_seconds" not in steps[0] and steps[1]["data_seconds"] == 0.5
    assert steps[2]["data_seconds"] == 0.002
    assert all(r["v"] == 2 and r["rank"] == 0 for r in steps)


def test_run_dir_from_the_environment(tmp_path):
    path = run_fresh("import dtrain; print(dtrain.Meter(dtrain.init()).path)",
                     DTRAIN_RUN_DIR=str(tmp_path))
    assert path == str(tmp_path / "rank-00000.jsonl")


def test_step_times_the_body_and_numbers_the_steps(ctx, tmp_path):
    meter = dtrain.Meter(ctx, str(tmp_path))
    with meter.step(8) as number:
        assert number == 0
        time.sleep(0.05)
    with meter.step(8):
        pass
    with meter.step(4, step=10):
        pass
    with meter.step(4) as number:
        assert number == 11
    with pytest.raises(KeyError):
        with meter.step(4):
            raise KeyError("a failed step records nothing")
    meter.flush()
    steps = records(meter.path, "step")
    assert [r["step"] for r in steps] == [0, 1, 10, 11]
    assert steps[0]["seconds"] >= 0.05 and steps[1]["seconds"] < 0.05


def test_step_counts_only_the_collectives_inside_it(ctx, tmp_path):
    # A collective before the step (a checkpoint's broadcast, Preemption's vote) was charged to
    # the next step: comm % above 100 in `dtrain stats`.
    meter = dtrain.Meter(ctx, tmp_path)
    ctx.allreduce(np.ones(1 << 16, np.float32))
    ctx.barrier()
    with meter.step(8):
        time.sleep(0.005)
    with meter.step(8):
        ctx.allreduce(np.ones(1 << 16, np.float32))
    meter.flush()
    outside, inside = records(meter.path, "step")
    assert outside["comm_seconds"] == 0.0, outside
    assert 0.0 < inside["comm_seconds"] <= inside["seconds"], inside


def test_step_numbers_continue_from_the_resumed_checkpoint(tmp_path):
    # A restarted attempt numbered its steps from 0 again: `dtrain stats` then dropped every step
    # record of the failed attempt as redone. After load_latest() of the checkpoint of step 19
    # the Meter goes on at 20, without step=.
    script = f"""
import dtrain
ctx = dtrain.init()
ckpt = dtrain.Checkpointer(ctx, {str(tmp_path / "ckpt")!r})
meter = dtrain.Meter(ctx, {str(tmp_path)!r})
if ckpt.load_latest() is None:
    for _ in range(25):
        with meter.step(8) as number:
            pass
        if number == 19:
            ckpt.save(number, b"state")
else:
    with meter.step(8) as number:
        pass
meter.flush()
print(number, meter.next_step)
"""
    assert run_fresh(script) == "24 25"
    assert run_fresh(script, DTRAIN_ATTEMPT="1") == "20 21"
    steps = [(r["step"], r.get("attempt", 0)) for r in records(tmp_path / "rank-00000.jsonl",
                                                                "step")]
    assert steps == [(n, 0) for n in range(25)] + [(20, 1)]


def test_collectives_from_python_write_heartbeats(ctx, tmp_path):
    meter = dtrain.Meter(ctx, tmp_path)
    seq = ctx.next_sequence
    ctx.allreduce(np.ones(1024, np.float32))
    meter.flush()
    beats = [r for r in records(meter.path, "coll") if r["seq"] == seq]
    assert [(r["op"], r["bytes"], r["phase"]) for r in beats] == [
        ("allreduce", 4096, "enter"), ("allreduce", 4096, "exit")]


def test_bad_values_and_directories_are_errors(ctx, tmp_path):
    meter = dtrain.Meter(ctx, tmp_path)
    with pytest.raises(dtrain.InvalidError) as e:
        meter.record(0, 1, -1.0)
    assert e.value.code == "invalid" and isinstance(e.value, ValueError)
    with pytest.raises(dtrain.InvalidError):
        meter.record(0, 1, float("nan"))
    with pytest.raises(dtrain.SysError, match="cannot open") as e:
        dtrain.Meter(ctx, tmp_path / "missing")
    assert e.value.code == "system" and isinstance(e.value, OSError)


def test_two_ranks_never_wait_longer_in_a_step_than_the_step(tmp_path):
    # The C++ loop with comm % = 518.4, on 2 ranks over TCP: every step holds a small
    # allreduce, and between steps rank 0 waits in a barrier for rank 1, which sleeps first. That
    # wait belongs to no step; it was charged to rank 0's next step, 5 times its length.
    import socket
    import subprocess
    import sys
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = f"""
import time, numpy as np, dtrain
ctx = dtrain.init()
meter = dtrain.Meter(ctx, {str(tmp_path)!r})
for _ in range(4):
    with meter.step(8):
        time.sleep(0.02)
        ctx.allreduce(np.ones(4, np.float32))
    if ctx.rank == 1:
        time.sleep(0.1)
    ctx.barrier()
meter.flush()
"""
    env = dict(os.environ, DTRAIN_BOOTSTRAP="tcp", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(port), WORLD_SIZE="2", DTRAIN_TIMEOUT="60")
    ranks = [subprocess.Popen([sys.executable, "-c", script], env=dict(env, RANK=str(r)))
             for r in range(2)]
    assert [p.wait(timeout=90) for p in ranks] == [0, 0]
    steps = records(tmp_path / "rank-00000.jsonl", "step")
    assert len(steps) == 4
    for r in steps:
        assert 0 < r["comm_seconds"] <= r["seconds"], r
    # Steps 1-3 followed a 0.1 s wait outside them; each lasted about 0.02 s.
    assert all(r["comm_seconds"] < 0.08 for r in steps[1:]), steps
