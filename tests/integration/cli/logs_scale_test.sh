#!/usr/bin/env bash
# The readers at any size (issue 29, item 6): a synthetic run directory of RANKS rank logs and
# metric files, read by `dtrain logs` (merge, --tail, --grep, --collapse, --first-error, --hang),
# `stats` and `timeline` once with the open-file limit as high as the hard limit allows and once under
# `ulimit -n LIMIT` (soft and hard, so dtrain cannot raise it): the same bytes and exit statuses.
# Then `logs --follow` under the low limit prints every line of live logs, one of which appears
# later, and stops when all ranks have exited. Prints the wall time of each set.
#   logs_scale_test.sh DTRAIN RANKS LIMIT
set -euo pipefail
DTRAIN=$1 RANKS=$2 LIMIT=$3
source "$(dirname "$0")/lib.sh"
enter_workdir logs-scale-test
(( RANKS > LIMIT )) || fail "expected more rank files ($RANKS) than the limit ($LIMIT)"

# Rank r on node r/4 logs a start line, three steps and its end; rank CULPRIT fails first and
# never enters collective #3, which the others reach; every rank records steps and heartbeats.
python3 - "$work/run" "$RANKS" <<'PY'
import datetime, json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
culprit = n // 3
T0 = 1795341600.0  # 2026-11-22T10:00:00Z
def ts(t):
    x = datetime.datetime.fromtimestamp(T0, datetime.timezone.utc) + datetime.timedelta(microseconds=round(t * 1e6))
    return x.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
os.makedirs(d)
json.dump({"version": 1, "job": {"name": "scale", "id": "1"}}, open(os.path.join(d, "plan.json"), "w"))
open(os.path.join(d, "job.yaml"), "w").write("name: scale\ngpus_per_rank: 1\n")
for r in range(n):
    jitter = (r % 97) * 1e-6  # interleaves the files, with ties between ranks 97 apart
    lines = ["%s dtrain: rank %d of %d started on node%d (local rank %d of 4, pid %d): train"
             % (ts(jitter), r, n, r // 4, r % 4, 1000 + r)]
    recs = []
    for s in range(3):
        t = 0.1 * (s + 1) + jitter
        lines.append("%s step %d of rank %d" % (ts(t), s, r))
        recs.append({"v": 2, "type": "coll", "time": T0 + t, "rank": r, "seq": s,
                     "op": "allreduce", "bytes": 4096, "phase": "enter"})
        recs.append({"v": 2, "type": "coll", "time": T0 + t + 0.01, "rank": r, "seq": s,
                     "op": "allreduce", "bytes": 4096, "phase": "exit"})
        recs.append({"v": 2, "type": "step", "time": T0 + t + 0.02, "rank": r, "step": s,
                     "samples": 32 + r % 5, "seconds": 0.1, "comm_seconds": 0.01,
                     "data_seconds": 0.001})
    if r == culprit:
        lines.append("%s error: CUDA out of memory on rank %d" % (ts(0.45), r))
        lines.append("%s dtrain: rank %d exited with status 1" % (ts(0.5), r))
    else:
        recs.append({"v": 2, "type": "coll", "time": T0 + 0.4 + jitter, "rank": r, "seq": 3,
                     "op": "allreduce", "bytes": 4096, "phase": "enter"})
        lines.append("waiting without a timestamp")
        lines.append("%s dtrain: rank %d was killed by signal 15 (SIGTERM)" % (ts(1.5 + jitter), r))
    with open(os.path.join(d, "rank-%05d.log" % r), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(d, "rank-%05d.jsonl" % r), "w") as f:
        f.write("".join(json.dumps(x) + "\n" for x in recs))
PY
culprit=$((RANKS / 3))

# Every reader, its stdout, stderr and exit status in DIR (a fresh one per limit).
read_all() {  # dir
  local d=$1 run=$work/run i=0 cmd
  mkdir "$d"
  cd "$d"
  for cmd in "logs $run" "logs --no-prefix $run" "logs --tail 7 $run" "logs --grep step.2 $run" \
    "logs --rank 1-$((RANKS - 2)) $run" "logs --first-error $run" "logs --first-error --json $run" \
    "logs --hang $run" "logs --hang --json $run" "stats $run" "stats --json $run" \
    "timeline $run -o trace.json" "logs --collapse $run"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    "$DTRAIN" $cmd > "$i.out" 2> "$i.err" && echo 0 > "$i.status" || echo $? > "$i.status"
  done
  cd "$work"
}
export -f read_all
export DTRAIN RANKS work

start=$(date +%s.%N)
bash -c 'ulimit -n "$(ulimit -Hn)"; read_all high'
mid=$(date +%s.%N)
bash -c "ulimit -n $LIMIT; read_all low"
end=$(date +%s.%N)
echo "# $RANKS rank logs + metric files: all readers $(awk -v a="$start" -v b="$mid" 'BEGIN {printf "%.2f", b - a}') s with ulimit -n $(ulimit -Hn), $(awk -v a="$mid" -v b="$end" 'BEGIN {printf "%.2f", b - a}') s with ulimit -n $LIMIT"

for f in high/*; do
  name=$(basename "$f")
  cmp -s "$f" "low/$name" || fail "$name differs under ulimit -n $LIMIT: $(diff "$f" "low/$name" | head -5)"
done
expect_eq "$(ls high)" "$(ls low)" "files written"

echo "== the outputs are right, not only equal"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do
  expect_eq 0 "$(cat "high/$i.status")" "exit status of reader $i ($(cat "high/$i.err"))"
done
expect_eq "$(cat "$work"/run/rank-*.log | wc -l)" "$(wc -l < high/1.out)" "merged line count"
cut -d' ' -f1 high/2.out | grep -E '^[0-9]{4}-' | LC_ALL=C sort -c || fail "merged lines are not in time order"
expect_eq "$(cat "$work"/run/rank-*.log | LC_ALL=C sort | md5sum)" "$(LC_ALL=C sort high/2.out | md5sum)" \
  "--no-prefix: the lines of the files"
expect_eq 7 "$(wc -l < high/3.out)" "--tail 7"
expect_eq "$RANKS" "$(wc -l < high/4.out)" "--grep step.2"
expect_contains "$(cat high/6.out)" "first failure: rank $culprit on node$((culprit / 4)) exited with status 1" "--first-error"
# The others as ranges: a few words at any number of ranks.
expect_contains "$(cat high/8.out)" "hang: rank $culprit never entered collective #3 (allreduce of 4096 bytes) that ranks 0-$((culprit - 1)),$((culprit + 1))-$((RANKS - 1)) reached" "--hang"
# --collapse: the line every rank but the culprit printed is one line (issue 46, item 4).
expect_eq "[ranks 0-$((culprit - 1)),$((culprit + 1))-$((RANKS - 1)) @ $(((RANKS + 3) / 4)) hosts] waiting without a timestamp" \
  "$(grep 'waiting without' high/13.out)" "--collapse"
expect_eq $(($(wc -l < high/1.out) - RANKS + 2)) "$(wc -l < high/13.out)" "--collapse line count"
python3 - high/11.out high/trace.json "$RANKS" <<'PY'
import json, sys
s, t, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
assert len(s["ranks"]) == n and s["total"]["samples"] == sum(3 * (32 + r % 5) for r in range(n)), s["total"]
names = {e["pid"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
assert names == set(range(n)), len(names)
PY

echo "== --follow under ulimit -n $LIMIT: live logs, one appearing later"
# live/: the first two lines of every log but the last rank's (one process: forks are slow here).
# PART 1 writes those; PART 2 appends the rest, and the last rank's log appears whole, by a
# rename, as a rank that started late.
live_logs() {  # part
  python3 - "$work" "$RANKS" "$1" <<'PY'
import os, sys
work, n, part = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for r in range(n):
    name = "rank-%05d.log" % r
    lines = open(os.path.join(work, "run", name)).readlines()
    if r == n - 1:
        if part == "2":
            open(os.path.join(work, "late.log"), "w").writelines(lines)
            os.rename(os.path.join(work, "late.log"), os.path.join(work, "live", name))
    elif part == "1":
        open(os.path.join(work, "live", name), "w").writelines(lines[:2])
    else:
        open(os.path.join(work, "live", name), "a").writelines(lines[2:])
PY
}
mkdir live
live_logs 1
bash -c "ulimit -n $LIMIT; exec timeout 120 \"\$DTRAIN\" logs --follow live" > followed.txt 2> follow.err &
follow_pid=$!
for _ in $(seq 600); do
  (( $(wc -l < followed.txt) >= 2 * (RANKS - 1) )) && break
  sleep 0.1
done
expect_eq $((2 * (RANKS - 1))) "$(wc -l < followed.txt)" "lines --follow printed before the ranks ended"
live_logs 2
wait $follow_pid || fail "logs --follow exited $? (124: it did not stop): $(cat follow.err)"
expect_eq "$(sort high/1.out)" "$(sort followed.txt)" "lines printed by --follow"
echo PASS
