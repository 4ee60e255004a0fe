#!/usr/bin/env bash
# dtrain.init() and backend="dtrain" in one program hold one Context (torch_shared_context.py):
# rank 1 stopped with SIGSTOP, rank 0's collective fails at DTRAIN_TIMEOUT (10 s) and rank 0's
# process ends within 17 s of the stop; before, its teardown waited a second DTRAIN_TIMEOUT in the
# process group's own, healthy Context (about 24 s here; 10 min 5 s with the default 300 s).
#   torch_shared_context_test.sh PYTHON
set -uo pipefail
PYTHON=$1
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp)
fail() {
  echo "FAIL: $1" >&2
  [[ -n ${rank1:-} ]] && kill -KILL "$rank1" 2>/dev/null
  exit 1
}
DTRAIN_TIMEOUT=10 bash "$here/../runtime/tcp_launch.sh" 2 "$PYTHON" \
  "$here/torch_shared_context.py" >"$out" 2>&1 &
launch=$!
rank0="" rank1=""
for _ in $(seq 300); do
  # Not by line: the ranks' lines may interleave (their text and newline are two writes).
  rank0=$(grep -oE 'rank 0: pid [0-9]+' "$out" | cut -d' ' -f4 || true)
  rank1=$(grep -oE 'rank 1: pid [0-9]+' "$out" | cut -d' ' -f4 || true)
  [[ -n $rank0 && -n $rank1 ]] && break
  kill -0 "$launch" 2>/dev/null || fail "the ranks ended before the stop: $(cat "$out")"
  sleep 0.1
done
[[ -n $rank0 && -n $rank1 ]] || fail "no pids after 30 s: $(cat "$out")"
stopped=$SECONDS
while kill -0 "$rank0" 2>/dev/null; do
  ((SECONDS - stopped < 60)) || fail "rank 0 still ran 60 s after the stop: $(cat "$out")"
  sleep 0.2
done
ended=$((SECONDS - stopped))
kill -KILL "$rank1" 2>/dev/null
wait "$launch"
cat "$out"
for r in 0 1; do
  grep -q "rank $r: the group's Context is dtrain.init()'s: yes" "$out" ||
    fail "rank $r's group does not run on dtrain.init()'s Context"
done
grep -q "TimeoutError: dtrain: allreduce #[0-9]* .*not complete after 10 s" "$out" ||
  fail "no timeout error on rank 0"
((ended <= 17)) || fail "rank 0 ended $ended s after the stop (expected at most 17 s: one DTRAIN_TIMEOUT)"
echo "ok: rank 0 ended $ended s after rank 1 stopped (DTRAIN_TIMEOUT=10)"
echo PASS
