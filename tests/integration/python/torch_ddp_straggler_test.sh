#!/usr/bin/env bash
# Stragglers without code change for torch (issue 46 item 3): an unmodified DDP program on
# backend="dtrain" (torch_ddp_straggler.py: no dtrain.init(), no Meter), 2 ranks through
# `dtrain submit` on the local site, rank 1 sleeping 1.25x as long each step: rank 0's logger names
# rank 1 in the job's output and RUN_DIR/stragglers.log (off the CPU a fifth of its time or more
# outside its collectives: one-second samples of a rank computing 80 % of the time read as
# computing every time, so the line says the share), and `dtrain stats` names it from the
# gradient allreduces' waits alone.
#   torch_ddp_straggler_test.sh DTRAIN SRC BUILD
set -euo pipefail
DTRAIN=$1 SRC=$2 BUILD=$3
source "$SRC/tests/integration/cli/lib.sh"
enter_workdir ddp-straggler
host=$(hostname)
cat >job.yaml <<YAML
name: ddp-straggler
site: local
nodes: 1
ranks_per_node: 2
framework: torch
env:
  PYTHONPATH: $BUILD/python
  STRAGGLER_RANK: "1"
command: [/usr/bin/python3, $SRC/tests/integration/python/torch_ddp_straggler.py, "150"]
YAML
submit_expecting 0 job.yaml "the DDP job with a slow rank 1"
grep -qE "^dtrain: straggler: rank 1 on $host arrived last in [0-9.]+ % of the last [0-9]+ collectives" job.out ||
  fail "no live line naming rank 1 in: $(cat job.out)"
run_dir=$(ls -d runs/ddp-straggler-*)
grep -q ' dtrain: straggler: rank 1 ' "$run_dir/stragglers.log" || fail "no line in stragglers.log"
# Its step's extra time is a sleep: its logger's samples of the process say so.
grep -qE "^dtrain: straggler: rank 1 .*: a straggler; it is off the CPU [0-9.]+ % of its time outside collectives, the others [0-9.]+ % \\(sleeping, loading data, or waiting for a lock or a CPU: not computing then\\); the others waited" job.out ||
  fail "the live line does not say rank 1 is off the CPU outside collectives: $(grep '^dtrain: straggler:' job.out)"
stats=$("$DTRAIN" stats "$run_dir")
grep -qE "^  rank 1 on $host arrived last in [0-9.]+ % of the last [0-9]+ collectives" <<<"$stats" ||
  fail "stats names no rank 1: $stats"
echo "ok: $(grep -m1 '^dtrain: straggler:' job.out)"
