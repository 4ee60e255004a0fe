#!/usr/bin/env bash
# Every signal the job spec accepts (`checkpoint.signal`, listed by the spec's own error message)
# reaches the rank end to end: sent to `dtrain supervise`, passed on by it and by `dtrain run-rank`'s
# logger to the rank's command, whose trap writes it to the rank log. The supervisor once forwarded
# XCPU and URG while the logger swallowed them (issue 30, item 3).
#   signals_test.sh DTRAIN
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DTRAIN=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

printf 'name: x\ncommand: [true]\ncheckpoint: {signal: NONE}\n' >bad.yaml
message=$("$DTRAIN" plan bad.yaml 2>&1) && fail "a bad checkpoint.signal was accepted"
names=$(sed -n 's/.*checkpoint.signal: expected one of: \(.*\), got "NONE".*/\1/p' <<<"$message")
[[ -n $names ]] || fail "no list of accepted signals in: $message"
echo "the spec accepts: $names"

cat >rank.sh <<'SH'
for s in "$@"; do trap "echo got $s; exit 0" "$s"; done
echo ready
while :; do sleep 0.05; done
SH
for name in ${names//,/}; do
  rm -rf run
  OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_LOCAL_RANK=0 \
    OMPI_COMM_WORLD_LOCAL_SIZE=1 "$DTRAIN" supervise --run-dir run -- \
    "$DTRAIN" run-rank --run-dir run -- bash rank.sh ${names//,/} >"out-$name" 2>&1 &
  pid=$!
  for ((i = 0; i < 100; i++)); do
    grep -qs ' ready$' run/rank-00000.log && break
    sleep 0.05
  done
  grep -qs ' ready$' run/rank-00000.log || fail "the rank did not start: $(cat "out-$name")"
  kill -"$name" "$pid"
  # A signal that is not passed on leaves the rank running: end it after 10 s.
  for ((i = 0; i < 200; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    pkill -KILL -f "bash rank.sh" || true
    kill -KILL "$pid" 2>/dev/null || true
  fi
  status=0
  wait "$pid" || status=$?
  log=$(cat run/rank-00000.log)
  expect_contains "$log" " got $name" "SIG$name: the rank log (supervise exited $status: $(cat "out-$name"))"
  expect_contains "$log" "dtrain: rank 0 exited with status 0" "SIG$name: the rank's exit line"
  echo "ok: SIG$name reached the rank"
done
echo PASS
