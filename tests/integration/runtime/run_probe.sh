#!/usr/bin/env bash
# Runs runtime_probe under a launcher (or bare) and checks what every rank printed:
#   rank=R size=S local_rank=L local_size=LS bootstrap=B
# Every rank 0..N-1 exactly once, size N, the right local rank and local size (one node here, so
# local rank = rank and local size = N), the expected bootstrap; and every process exited 0 (the
# probe checks its collectives exactly and fails otherwise).
#
#   run_probe.sh N BOOTSTRAP PROBE [LAUNCHER ARGS...]
#       e.g. run_probe.sh 4 pmix ./runtime_probe mpirun --allow-run-as-root --oversubscribe -n 4
#       with no launcher the probe runs bare, with the launcher variables removed.
# RUNTIME_PROBE_TIMEOUT (seconds, default 120) bounds the whole launch.
set -euo pipefail

if (($# < 3)); then
  echo "usage: run_probe.sh N BOOTSTRAP PROBE [LAUNCHER ARGS...]" >&2
  exit 2
fi
n=$1 bootstrap=$2 probe=$3
shift 3
limit=${RUNTIME_PROBE_TIMEOUT:-120}

if (($# == 0)); then
  cmd=(env -u PMIX_NAMESPACE -u PMIX_RANK -u DTRAIN_BOOTSTRAP "$probe")
else
  cmd=("$@" "$probe")
fi
echo "run_probe: ${cmd[*]}"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
# -k: a launcher that ignores SIGTERM is killed 10 s later, so ctest never hangs here.
timeout -k 10 "$limit" "${cmd[@]}" >"$out" 2>&1 || status=$?
cat "$out"

fail() {
  echo "run_probe: FAIL: $*" >&2
  exit 1
}
((status != 124 && status != 137)) || fail "timed out after ${limit}s"
((status == 0)) || fail "exit status $status; expected 0 (see the output above)"

mapfile -t lines < <(grep '^rank=' "$out" || true)
((${#lines[@]} == n)) || fail "expected $n rank lines, got ${#lines[@]}"
declare -A seen=()
for line in "${lines[@]}"; do
  [[ $line =~ ^rank=([0-9]+)\ size=([0-9]+)\ local_rank=([0-9]+)\ local_size=([0-9]+)\ bootstrap=([a-z]+)$ ]] ||
    fail "malformed line: $line"
  r=${BASH_REMATCH[1]}
  got="size=${BASH_REMATCH[2]} local_rank=${BASH_REMATCH[3]} local_size=${BASH_REMATCH[4]} bootstrap=${BASH_REMATCH[5]}"
  want="size=$n local_rank=$r local_size=$n bootstrap=$bootstrap"
  ((r < n)) || fail "rank $r out of range; expected 0 to $((n - 1))"
  [[ -z ${seen[$r]:-} ]] || fail "rank $r reported twice"
  seen[$r]=1
  [[ $got == "$want" ]] || fail "rank $r: expected [$want], got [$got]"
done
echo "run_probe: PASS: ranks 0..$((n - 1)) once each, size $n, bootstrap=$bootstrap, collectives exact"
