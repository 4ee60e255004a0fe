#!/usr/bin/env bash
# One rank fails while the others train (exception_probe, python/failing_rank.py): it throws,
# raises or exits non-zero at step 20, and must leave the job rather than wait in the collective
# teardown. Runs the launch with DTRAIN_TIMEOUT=60 and checks that it ended before that deadline
# (under WITHIN seconds), non-zero, with the failing rank's own message and a survivor's line
# naming rank 1 and its host.
#   failing_rank_test.sh [--within SECONDS] OWN SURVIVOR LAUNCHER ARGS...
#   --within: seconds the whole launch may take (default 30; DTRAIN_TIMEOUT is 60)
#   OWN: an extended regex a line of the failing rank's own output must match
#   SURVIVOR: an extended regex a survivor's line must match; {host} stands for this host's name
set -uo pipefail
within=30
if [[ ${1:-} == --within ]]; then
  within=$2
  shift 2
fi
own=$1 survivor=$2
shift 2
host_re=$(hostname | sed 's/[][\.*^$+?(){}|/]/\\&/g')
survivor=${survivor//\{host\}/$host_re}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$SECONDS
DTRAIN_TIMEOUT=60 timeout -s KILL 120 "$@" >"$out" 2>&1
status=$?
took=$((SECONDS - start))
cat "$out"
echo "failing_rank_test: the launch ended in $took s, exit status $status"
fail() {
  echo "failing_rank_test: FAIL: $*" >&2
  exit 1
}
((took < within)) ||
  fail "the launch took $took s; expected it to end well before DTRAIN_TIMEOUT=60 (under $within s)"
((status != 0)) || fail "the launch exited 0; expected the failing rank's status"
grep -Eq -- "$own" "$out" || fail "the failing rank's own message: expected a line matching /$own/"
grep -Eq -- "$survivor" "$out" || fail "the survivor: expected a line matching /$survivor/"
echo "failing_rank_test: PASS: rank 1 named, its own message printed"
