#!/usr/bin/env bash
# The run directory's record files as `dtrain logs --first-error`, `--hang`, `stats` and
# `timeline` read them, on synthetic run directories (no job runs): attempts.jsonl,
# checkpoints.jsonl and job-end.jsonl must be regular files, read with a cap (a FIFO blocked every
# reader forever, a symlink to /dev/zero grew without end); a field out of its range is refused
# naming the file, line, field and range (values wrapped: attempt 2^31-1 printed as -2^31+1,
# 2^64-1 as -1); the reader's message is no other command's (`dtrain: stats:` was on all of them);
# only canonical rank file names count; a symbolic link loop is named, not a raw filesystem error.
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

echo "== attempt records: fields out of range"
new_run wraps
attempt_record 2147483647 "$t0:10.000000Z" >wraps/attempts.jsonl
expect_status_and_message 2 \
  'dtrain: wraps/attempts.jsonl:1: field "attempt": expected an integer from 0 to 999999, got 2147483647' \
  dtrain_bounded logs wraps --first-error
attempt_record 0 "$t0:10.000000Z" >wraps/attempts.jsonl
attempt_record 4294967297 "$t0:20.000000Z" >>wraps/attempts.jsonl
expect_status_and_message 2 \
  'dtrain: wraps/attempts.jsonl:2: field "attempt": expected an integer from 0 to 999999, got 4294967297' \
  dtrain_bounded stats wraps
attempt_record 0 "9999-11-22T10:00:10.000000Z" >wraps/attempts.jsonl
expect_status_and_message 2 \
  'dtrain: wraps/attempts.jsonl:1: field "end": expected a time from 1970-01-01T00:00:00Z to 2100-01-01T00:00:00Z, got "9999-11-22T10:00:10.000000Z"' \
  dtrain_bounded stats wraps
# Issue 45 item 7: an end an hour before its start read as "time lost to failures: 3700.9 s", an
# outcome the supervisor never writes as "failed and restarted".
attempt_record 0 "2026-11-22T09:00:00.000000Z" >wraps/attempts.jsonl
expect_status_and_message 2 \
  "dtrain: wraps/attempts.jsonl:1: field \"end\": expected a time at or after the attempt's start ($t0:00.000000Z), got \"2026-11-22T09:00:00.000000Z\"" \
  dtrain_bounded stats wraps
attempt_record 0 "$t0:10.000000Z" | sed 's/"restarted"/"exploded"/' >wraps/attempts.jsonl
for command in "stats wraps" "logs wraps --first-error"; do
  # shellcheck disable=SC2086
  expect_status_and_message 2 \
    'dtrain: wraps/attempts.jsonl:1: field "outcome": expected completed, restarted, ended or stopped, got "exploded"' \
    dtrain_bounded $command
done

echo "== metric records: fields out of range, named without another command's name"
metric_case() {  # DIR RECORD_OF_RANK_1 NEEDLE COMMAND...
  local dir=$1 record=$2 needle=$3
  shift 3
  new_run "$dir"
  echo "$record" >>"$dir/rank-00001.jsonl"
  expect_status_and_message 2 "dtrain: $dir/rank-00001.jsonl:3: $needle" dtrain_bounded "$@"
}
metric_case version '{"v":4294967298,"type":"step","time":1795341602,"rank":1,"step":1,"samples":8,"seconds":1,"comm_seconds":0}' \
  'schema version 4294967298 is not supported; expected 1 to 2' stats version
metric_case rank '{"v":2,"type":"step","time":1795341602,"rank":4294967297,"step":1,"samples":8,"seconds":1,"comm_seconds":0}' \
  'field "rank": expected an integer from 0 to 2147483647, got 4294967297' stats rank
metric_case samples '{"v":2,"type":"step","time":1795341602,"rank":1,"step":1,"samples":18446744073709551615,"seconds":1,"comm_seconds":0}' \
  'field "samples": expected an integer from 0 to 9223372036854775807, got 18446744073709551615' stats samples
metric_case seq '{"v":2,"type":"coll","time":1795341602,"rank":1,"seq":18446744073709551615,"op":"allreduce","bytes":8,"phase":"enter"}' \
  'field "seq": expected an integer from 0 to 9223372036854775807, got 18446744073709551615' logs seq --hang
metric_case time '{"v":2,"type":"step","time":-1e18,"rank":1,"step":1,"samples":8,"seconds":1,"comm_seconds":0}' \
  'field "time": expected Unix seconds from 0 to 4102444800, got -1e+18' timeline time -o time.json
[[ ! -e time.json ]] || fail "timeline wrote a trace of a run with a bad time: $(head -c 300 time.json)"
metric_case first 'not json' 'expected one JSON object per line' logs first --first-error
for command in "logs first --first-error" "logs first --hang" "timeline first -o first.json"; do
  set +e
  # shellcheck disable=SC2086
  out=$(dtrain_bounded $command 2>&1)
  set -e
  [[ $out != *"stats:"* ]] || fail "$command: the message names another command: $out"
done

echo "== rank file names: only the canonical one counts"
new_run names
cp names/rank-00001.log names/rank-000001.log
cp names/rank-00001.jsonl names/rank-000001.jsonl
expect_eq "$(cat names/rank-0000[01].log | wc -l)" "$("$DTRAIN" logs names | wc -l)" \
  "lines merged beside rank-000001.log"
expect_eq "2 16" "$("$DTRAIN" stats --json names |
  python3 -c 'import json,sys; s=json.load(sys.stdin); print(len(s["ranks"]), s["total"]["samples"])')" \
  "ranks and samples stats counts beside rank-000001.jsonl"

echo "== rank logs that cannot be read are named, and their rank is not replaced by a victim"
# Issue 45 item 6: rank 1's log a FIFO, a directory, a dangling link, a loop or /dev/zero was left
# out without a word, and rank 0, which only reported rank 1 missing, was named the culprit.
victims_run() {  # DIR: 3 ranks, rank 1's log replaced by the caller; ranks 0 and 2 name it missing
  mkdir "$1"
  local r
  for r in 0 2; do
    printf '%s:00.000000Z dtrain: rank %d of 3 started on node0 (local rank %d of 3, pid 1): ./t
' \
      "$t0" "$r" "$r" >"$1/rank-0000$r.log"
    printf '%s:06.000000Z dtrain: allreduce: tcp: missing ranks: 1; rank 1 closed its connection\n' \
      "$t0" >>"$1/rank-0000$r.log"
    printf '%s:06.%d00000Z dtrain: rank %d exited with status 1\n' "$t0" "$((r + 1))" "$r" \
      >>"$1/rank-0000$r.log"
  done
}
victims_run unread-fifo && mkfifo unread-fifo/rank-00001.log
victims_run unread-dir && mkdir unread-dir/rank-00001.log
victims_run unread-dangling && ln -s nothing unread-dangling/rank-00001.log
victims_run unread-loop && ln -s rank-00001.log unread-loop/rank-00001.log
victims_run unread-zero && ln -s /dev/zero unread-zero/rank-00001.log
for why in "fifo:a FIFO (named pipe)" "dir:a directory" "dangling:a symbolic link to nothing" \
  "loop:cannot open it: Too many levels of symbolic links" "zero:a character device"; do
  dir=unread-${why%%:*}
  out=$(dtrain_bounded logs "$dir" --first-error 2>&1) || fail "$dir: exit $?: $out"
  expect_contains "$out" "first failure: unknown: the log of rank 1 could not be read" "$dir"
  expect_contains "$out" "  $dir/rank-00001.log (rank 1): ${why#*:}" "$dir"
  [[ $out != *"first failure: rank 0"* ]] || fail "$dir: a victim named the culprit: $out"
done

echo "== symbolic link loops"
new_run looped
ln -s rank-00002.log looped/rank-00002.log
ln -s rank-00002.jsonl looped/rank-00002.jsonl
expect_status_and_message 0 "first failure: rank 1 on node0 exited with status 3" \
  dtrain_bounded logs looped --first-error
expect_status_and_message 0 "total" dtrain_bounded stats looped
ln -s self self
expect_status_and_message 2 \
  "dtrain: self: expected a run directory, got a symbolic link loop (Too many levels of symbolic links)" \
  dtrain_bounded logs self
echo PASS
