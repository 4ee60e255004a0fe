#!/usr/bin/env bash
# A dead or hung rank: runs runtime_probe with RUNTIME_PROBE_DIE_RANK=1 (rank 1 sends itself
# SIGNAL: KILL, or STOP to hang without closing anything) and DTRAIN_TIMEOUT=5 under a launcher,
# and checks that every other rank failed with the collective's error (naming the operation and
# its sequence number, and matching EXPECT) well before this script's own 90 s limit.
#   kill_probe.sh N SIGNAL PROBE EXPECT LAUNCHER ARGS...
#   EXPECT: an extended regex every surviving rank's error must match; @HOST@ stands for this
#           machine's host name (every rank runs here)
set -uo pipefail
n=$1 signal=$2 probe=$3 expect=$4
shift 4
host_re=$(hostname | sed 's/[][\.*^$+?(){}|/]/\\&/g')
expect=${expect//@HOST@/$host_re}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$SECONDS
RUNTIME_PROBE_DIE_RANK=1 RUNTIME_PROBE_SIGNAL=$signal DTRAIN_TIMEOUT=5 \
  timeout -s KILL 90 "$@" "$probe" >"$out" 2>&1
took=$((SECONDS - start))
cat "$out"
fail() {
  echo "kill_probe: FAIL: $*" >&2
  exit 1
}
((took < 85)) || fail "the launch hung until the test's own 90 s limit"
for ((r = 0; r < n; r++)); do
  ((r == 1)) && continue
  line=$(grep "^runtime_probe: rank $r: dtrain: allreduce #" "$out" | head -1)
  [[ -n $line ]] || fail "rank $r: expected an allreduce error naming its sequence number"
  [[ $line =~ $expect ]] || fail "rank $r: expected the error to match /$expect/, got: $line"
done
echo "kill_probe: PASS: ranks other than 1 failed with the collective's error in $took s"
