#!/usr/bin/env bash
# The run directory's record files as `dtrain logs --first-error`, `--hang`, `stats` and
# `timeline` read them, on synthetic run directories (no job runs): attempts.jsonl,
# checkpoints.jsonl and job-end.jsonl must be regular files, read with a cap (a FIFO blocked every
# reader forever, a symlink to /dev/zero grew without end).
#   run_records_test.sh DTRAIN
set -euo pipefail
DTRAIN=$1
source "$(dirname "$0")/lib.sh"
enter_workdir run-records

# Every reader is bounded by `timeout` (a FIFO used to block it) and by `ulimit -v` (a symlink to
# /dev/zero used to read until memory ran out): both failures show as a wrong exit status.
dtrain_bounded() {
  (ulimit -v 4000000 && exec timeout 30 "$DTRAIN" "$@")
}

t0=2026-11-22T10:00
# A two-rank run in which rank 1 failed; metric records of both ranks (steps and heartbeats).
new_run() {  # DIR
  mkdir "$1"
  local r
  for r in 0 1; do
    printf '%s:00.000000Z dtrain: rank %d of 2 started on node0 (local rank %d of 2, pid 1): ./t\n' \
      "$t0" "$r" "$r" >"$1/rank-0000$r.log"
    printf '{"v":2,"type":"step","time":1795341601,"rank":%d,"step":0,"samples":8,"seconds":1,"comm_seconds":0}\n' \
      "$r" >"$1/rank-0000$r.jsonl"
    printf '{"v":2,"type":"coll","time":1795341601.5,"rank":%d,"seq":0,"op":"allreduce","bytes":8,"phase":"enter"}\n' \
      "$r" >>"$1/rank-0000$r.jsonl"
  done
  printf '%s:05.000000Z dtrain: rank 1 exited with status 3\n' "$t0" >>"$1/rank-00001.log"
}
attempt_record() {  # ATTEMPT END
  printf '{"v":1,"attempt":%s,"start":"%s:00.000000Z","end":"%s","status":1,"outcome":"restarted","cause":"x","ranks":2,"nodes":["node0"],"checkpoints":0}\n' \
    "$1" "$t0" "$2"
}

new_run good
expect_status_and_message 0 "first failure: rank 1 on node0 exited with status 3" \
  dtrain_bounded logs good --first-error

echo "== attempts.jsonl, checkpoints.jsonl, job-end.jsonl: special files are refused"
new_run fifo
mkfifo fifo/attempts.jsonl
for command in "logs fifo --first-error" "logs fifo --hang" "stats fifo"; do
  # shellcheck disable=SC2086
  expect_status_and_message 2 \
    "dtrain: fifo/attempts.jsonl: expected attempt records (JSON Lines), got a FIFO (named pipe)" \
    dtrain_bounded $command
done
rm fifo/attempts.jsonl
mkfifo fifo/job-end.jsonl
expect_status_and_message 2 \
  "dtrain: fifo/job-end.jsonl: expected job end records (JSON Lines), got a FIFO (named pipe)" \
  dtrain_bounded logs fifo --first-error
new_run zero
ln -s /dev/zero zero/checkpoints.jsonl
expect_status_and_message 2 \
  "dtrain: zero/checkpoints.jsonl: expected checkpoint records (JSON Lines), got a character device" \
  dtrain_bounded stats zero
new_run loop
ln -s attempts.jsonl loop/attempts.jsonl
expect_status_and_message 2 \
  "dtrain: loop/attempts.jsonl: cannot open it: Too many levels of symbolic links; expected attempt records (JSON Lines)" \
  dtrain_bounded logs loop --first-error

echo PASS
