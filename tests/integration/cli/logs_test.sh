#!/usr/bin/env bash
# dtrain logs / stats / timeline on run directories: real 4-rank local runs (a rank SIGKILLed,
# a rank whose run-rank dies silently, --follow while the job runs) and synthetic ones written
# here (heartbeats of a hang, metric records with known sums, runs at three scales).
set -euo pipefail
DTRAIN=$1
source "$(dirname "$0")/lib.sh"
enter_workdir logs-test
host=$(hostname)
ts_re='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z'

echo "== a real 4-rank run in which rank 2 is killed with SIGKILL"
cat > kill.yaml <<'YAML'
name: killed
ranks_per_node: 4
command: [bash, -c, 'for i in 1 2 3 4 5; do echo "rank $DTRAIN_RANK step $i"; sleep 0.1; done; if [ "$DTRAIN_RANK" = 2 ]; then echo "rank 2 about to die"; kill -9 $$; fi; sleep 30']
YAML
submit_expecting 137 kill.yaml "exit status of a job whose rank 2 was SIGKILLed"
run=$(ls -d "$work"/runs/killed-*)

merged=$("$DTRAIN" logs "$run")
expect_eq "$(cat "$run"/rank-*.log | wc -l)" "$(wc -l <<<"$merged")" "merged line count"
while IFS= read -r line; do
  [[ $line =~ $ts_re\ \[[0-3]@$host\]\  ]] || fail "expected '<time> [rank@$host] ' on every line, got [$line]"
done <<<"$merged"
cut -d' ' -f1 <<<"$merged" | LC_ALL=C sort -c || fail "merged lines are not in time order"
for r in 0 1 2 3; do
  # Each rank's lines keep their file order and gain only the prefix.
  expect_eq "$(sed 's/^\([^ ]*\) /\1 ['$r'@'$host'] /' "$run/rank-0000$r.log")" \
    "$(grep -F "[$r@$host]" <<<"$merged")" "rank $r lines in the merge"
done
expect_eq "$(LC_ALL=C sort -m -s -k1,1 "$run"/rank-*.log)" "$("$DTRAIN" logs --no-prefix "$run")" \
  "--no-prefix against sort -m -s -k1,1"

report=$("$DTRAIN" logs --first-error "$run")
echo "$report"
expect_contains "$report" "first failure: rank 2 on $host was killed by signal 9 (SIGKILL)" "--first-error"
expect_contains "$report" "culprit: exited first" "--first-error"
expect_contains "$report" "rank 2 about to die" "--first-error shows the culprit's last lines"
# A victim whose run-rank mpirun killed before it wrote its exit line went silent at its last
# line, which may precede rank 2's death: the header then does not say "after", and no interval
# is ever negative.
[[ $report == *"victims (3 ranks failed after rank 2):"* ||
  $report == *"victims (3 other failing ranks; rank 2 is the culprit):"* ]] ||
  fail "--first-error: expected a header for 3 victims of rank 2, got [$report]"
[[ ! $report =~ \(-[0-9] ]] || fail "--first-error: a negative interval in [$report]"
python3 - "$("$DTRAIN" logs --first-error --json "$run")" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
assert r["culprit"]["rank"] == 2 and r["culprit"]["state"] == "failed", r["culprit"]
assert sorted(v["rank"] for v in r["victims"]) == [0, 1, 3], r["victims"]
PY

echo "== filters: --rank, --grep, --since/--until, --tail"
expect_eq "$(grep -cE '\[(0|3)@' <<<"$merged")" "$("$DTRAIN" logs --rank 0,3 "$run" | wc -l)" "--rank 0,3 lines"
[[ -z $("$DTRAIN" logs --rank 0,3 "$run" | grep -E '\[(1|2)@' || true) ]] || fail "--rank 0,3 printed other ranks"
expect_eq "$(grep -E '\] rank [0-9] step [24]$' <<<"$merged")" "$("$DTRAIN" logs --grep 'step [24]$' "$run")" "--grep"
expect_eq "$(tail -3 <<<"$merged")" "$("$DTRAIN" logs --tail 3 "$run")" "--tail 3"
since=$(sed -n 5p <<<"$merged" | cut -d' ' -f1)
until=$(sed -n 9p <<<"$merged" | cut -d' ' -f1)
expect_eq "$(awk -v a="$since" -v b="$until" '$1 >= a && $1 <= b' <<<"$merged")" \
  "$("$DTRAIN" logs --since "$since" --until "$until" "$run")" "--since/--until"

echo "== a rank whose run-rank is killed goes silent: it is the culprit"
# The others keep printing, as training ranks do, so their logs go on after rank 1's stops even
# when mpirun's SIGKILL leaves one of them without an exit line.
cat > silent.yaml <<'YAML'
name: silent
ranks_per_node: 4
command: [bash, -c, 'echo "rank $DTRAIN_RANK up"; sleep 0.5; if [ "$DTRAIN_RANK" = 1 ]; then echo "rank 1 last words"; sleep 0.2; kill -9 $PPID; exit 0; fi; while true; do echo "rank $DTRAIN_RANK tick"; sleep 0.1; done']
YAML
"$DTRAIN" submit silent.yaml > silent.out 2>&1 || true
run=$(ls -d "$work"/runs/silent-*)
[[ -z $(grep ' dtrain: rank 1 \(exited\|was killed\)' "$run/rank-00001.log" || true) ]] ||
  fail "rank 1's log should have no exit line: $(cat "$run/rank-00001.log")"
report=$("$DTRAIN" logs --first-error "$run")
echo "$report"
expect_contains "$report" "first failure: rank 1 on $host went silent" "--first-error, silent rank"
expect_contains "$report" "culprit: went silent first" "--first-error, silent rank"
expect_contains "$report" "rank 1 last words" "--first-error, silent rank's last lines"

echo "== --follow prints a running job's lines and stops when every rank has exited"
cat > follow.yaml <<'YAML'
name: follow
ranks_per_node: 4
command: [bash, -c, 'for i in 1 2 3 4 5 6 7 8; do echo "rank $DTRAIN_RANK tick $i"; sleep 0.25; done']
YAML
"$DTRAIN" submit follow.yaml > follow.out 2>&1 &
submit_pid=$!
for _ in $(seq 100); do
  run=$(ls -d "$work"/runs/follow-* 2>/dev/null || true)
  [[ -n $run && -e $run/rank-00000.log ]] && break
  sleep 0.1
done
[[ -n $run ]] || fail "the follow job's run directory did not appear"
timeout 60 "$DTRAIN" logs --follow "$run" > followed.txt || fail "logs --follow exited $? (124: it did not stop)"
wait $submit_pid || fail "the follow job failed: $(cat follow.out)"
expect_eq "$("$DTRAIN" logs "$run" | sort)" "$(sort followed.txt)" "lines printed by --follow"
expect_eq 4 "$(grep -c 'exited with status 0' followed.txt)" "exit lines seen by --follow"

echo "== bad input is named and exits 2"
expect_status_and_message 2 "nosuch: expected a run directory, got nothing" "$DTRAIN" logs nosuch
expect_status_and_message 2 "--since: expected an RFC 3339 time" "$DTRAIN" logs --since yesterday "$run"
expect_status_and_message 2 "has no rank-00009.log" "$DTRAIN" logs --rank 9 "$run"
expect_status_and_message 2 'dtrain: logs: --tail: expected an integer from 1 to 1000000000, got "0"' "$DTRAIN" logs --tail 0 "$run"
expect_status_and_message 2 'dtrain: logs: --tail: expected an integer from 1 to 1000000000, got "x"' "$DTRAIN" logs --tail x "$run"
expect_status_and_message 2 "--grep \"a(\"" "$DTRAIN" logs --grep 'a(' "$run"
expect_status_and_message 2 "no rank-NNNNN.jsonl metric files" "$DTRAIN" logs --hang "$run"

echo "== synthetic run directories: a hang, known sums, three scales"
# hang, sums, scale1/2/4, sigcont and sigcont-logs-only (synthetic_runs.py says what each holds).
python3 "$(dirname "$0")/synthetic_runs.py" "$work"

echo "== --collapse: a line 8 ranks printed is one line, also while following (issue 46, item 4)"
collapsed=$("$DTRAIN" logs --collapse "$work/warnings")
expect_contains "$collapsed" "2026-11-22T10:00:01.000000Z [ranks 0-7 @ 4 hosts] UserWarning: TypedStorage is deprecated" "--collapse"
expect_eq 1 "$(grep -c UserWarning <<<"$collapsed")" "UserWarning lines with --collapse"
expect_eq 8 "$("$DTRAIN" logs "$work/warnings" | grep -c UserWarning)" "UserWarning lines without --collapse"
# Every rank has exited: --follow prints what is there and stops, collapsed the same way.
expect_eq "$collapsed" "$(timeout 30 "$DTRAIN" logs --follow --collapse "$work/warnings")" "--follow --collapse"
expect_status_and_message 2 "dtrain: logs: --collapse names the ranks of each line in its prefix; it cannot be combined with --no-prefix" \
  "$DTRAIN" logs --collapse --no-prefix "$work/warnings"
expect_status_and_message 2 "cannot be combined with --grep, --since, --until, --tail, --follow, --no-prefix or --collapse" \
  "$DTRAIN" logs --first-error --collapse "$work/warnings"

hang=$("$DTRAIN" logs --hang "$work/hang")
echo "$hang"
expect_contains "$hang" "hang: rank 2 never entered collective #5 (allreduce of 4096 bytes) that ranks 0-1,3 reached" "--hang"
expect_contains "$hang" "rank 2 on node1: last entered #4 at 2026-11-22T10:00:00.400000Z, left it at 2026-11-22T10:00:00.410000Z" "--hang"
expect_contains "$hang" "rank 0 on node0: entered #5 at 2026-11-22T10:00:00.500000Z, never left it" "--hang"
python3 - "$("$DTRAIN" logs --hang --json "$work/hang")" <<'PY'
import json, sys
h = json.loads(sys.argv[1])
assert h["missed_seq"] == 5 and [p["rank"] for p in h["never_entered"]] == [2], h
PY
expect_contains "$("$DTRAIN" logs --first-error "$work/hang")" "culprit: never entered collective #5" "--first-error with heartbeats"

echo "== a stopped rank woken late by SIGCONT is the culprit, not the victims that exited first (issue 22, item 24)"
# Rank 1 was stopped before allreduce #5; ranks 0 and 2 time out in it naming rank 1 and exit with
# status 1; Open MPI's SIGCONT then wakes rank 1, which enters #5, finds its peers gone, and is
# killed last. Both the victims' "missing ranks: 1" and the "failed" heartbeats name rank 1.
for d in sigcont sigcont-logs-only; do
  report=$("$DTRAIN" logs --first-error "$work/$d")
  echo "$report"
  expect_contains "$report" "first failure: rank 1 on node0 was killed by signal 9 (SIGKILL)" "--first-error $d"
  expect_contains "$report" "victims (2 other failing ranks; rank 1 is the culprit):" "--first-error $d"
done
expect_contains "$("$DTRAIN" logs --first-error "$work/sigcont")" "culprit: entered collective #5 (allreduce of 4096 bytes) only after it had failed on the ranks that waited for it" "--first-error heartbeats"
expect_contains "$("$DTRAIN" logs --first-error "$work/sigcont-logs-only")" "culprit: the other failing ranks' errors name it as missing" "--first-error logs only"
hang=$("$DTRAIN" logs --hang "$work/sigcont")
echo "$hang"
expect_contains "$hang" "failed: collective #5 (allreduce of 4096 bytes) failed on ranks 0,2; rank 1 had not entered it when it failed there" "--hang"
expect_contains "$hang" "rank 1 on node0: entered it only at 2026-11-22T10:00:08.900000Z" "--hang"

python3 - "$("$DTRAIN" stats --json "$work/sums")" <<'PY'
import json, sys
s = json.loads(sys.argv[1])
for r, rs in enumerate(s["ranks"]):
    samples = sum(10 + r + k for k in range(20))
    seconds = sum(0.1 + 0.01 * k for k in range(20))
    step_seconds = sorted(0.1 + 0.01 * k for k in range(20))
    assert rs["samples"] == samples, (rs, samples)
    assert abs(rs["seconds"] - seconds) < 1e-9
    assert abs(rs["samples_per_second"] - samples / seconds) < 1e-6
    assert abs(rs["p50_step_seconds"] - step_seconds[9]) < 1e-9, (rs, step_seconds)  # nearest rank
    assert abs(rs["p95_step_seconds"] - step_seconds[18]) < 1e-9, (rs, step_seconds)  # slow tail
    assert abs(rs["comm_share"] - 0.25) < 1e-9 and abs(rs["data_seconds"] - seconds / 10) < 1e-9
    assert rs["host"] == "node%d" % (r // 2)
total = sum(10 + r + k for r in range(3) for k in range(20))
assert s["total"]["samples"] == total
assert abs(s["total"]["samples_per_second"] - total / sum(0.1 + 0.01 * k for k in range(20))) < 1e-6
PY

table=$("$DTRAIN" stats "$work/scale4" "$work/scale1" "$work/scale2" --plot scaling.svg)
echo "$table"
expect_contains "$table" "# scaling against the smallest run (scale1)" "scaling table"
expect_contains "$table" "scale4                            4     4         3600     3.60       90.0%" "scaling table"
python3 - "$("$DTRAIN" stats --json "$work/scale1" "$work/scale2" "$work/scale4")" scaling.svg <<'PY'
import json, sys, xml.etree.ElementTree as ET
s = json.loads(sys.argv[1])
rows = s["scaling"]["rows"]
assert [r["ranks"] for r in rows] == [1, 2, 4]
assert [round(r["speedup"], 9) for r in rows] == [1.0, 2.0, 3.6], rows
assert [round(r["efficiency"], 9) for r in rows] == [1.0, 1.0, 0.9], rows
root = ET.parse(sys.argv[2]).getroot()  # raises on XML that is not well-formed
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
assert len(root.findall(f"{ns}circle")) == 3
assert root.find(f"{ns}polyline").get("class") == "measured"
PY
"$DTRAIN" stats "$work/sums" --plot ranks.svg > /dev/null
python3 - ranks.svg <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg"
assert len([r for r in root.findall(f"{ns}rect") if r.get("class") == "rank"]) == 3
PY

echo "== timeline without -o writes RUN_DIR/trace.json (issue 35, item 5)"
rm -f "$work/sums/trace.json"
out=$("$DTRAIN" timeline "$work/sums")
expect_contains "$out" "to $work/sums/trace.json" "timeline output without -o"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/sums/trace.json" ||
  fail "timeline without -o wrote no JSON trace at $work/sums/trace.json"
rm -f "$work/sums/trace.json"

echo "== timeline: a Chrome trace of every rank's steps and collectives"
out=$("$DTRAIN" timeline "$work/sums" -o trace.json)
expect_contains "$out" "to trace.json" "timeline output"
python3 - trace.json <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
steps = [e for e in ev if e["ph"] == "X" and e["tid"] == 0]
colls = [e for e in ev if e["ph"] == "X" and e["tid"] == 1]
assert len(steps) == 60 and len(colls) == 60, (len(steps), len(colls))
names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
assert names == {0: "rank 0 (node0)", 1: "rank 1 (node0)", 2: "rank 2 (node1)"}, names
PY
echo "== timeline: bounded by --max-events (each rank's last events) and --since/--until (issue 47)"
out=$("$DTRAIN" timeline "$work/sums" -o bounded.json --max-events 12)
expect_contains "$out" "wrote 24 trace events of 3 ranks" "bounded timeline output"
expect_contains "$out" "left out each rank's earliest events, 108 in all: each rank keeps its last 4 (--max-events 12 over 3 ranks)" "bounded timeline output"
python3 - bounded.json trace.json <<'PY'
import json, sys
bounded = json.load(open(sys.argv[1]))["traceEvents"]
whole = json.load(open(sys.argv[2]))["traceEvents"]
def last4(events, pid):
    mine = sorted((e for e in events if e["ph"] == "X" and e["pid"] == pid), key=lambda e: (e["ts"], e["tid"]))
    return [(e["name"], e["ts"]) for e in mine]
for pid in (0, 1, 2):
    assert last4(bounded, pid) == last4(whole, pid)[-4:], (pid, last4(bounded, pid))
assert len([e for e in bounded if e["ph"] == "M"]) == 12
PY
# A window: the events of the whole trace that overlap it, and no other.
window=$(python3 - trace.json <<'PY'
import json, sys, datetime
steps = sorted(e["ts"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X" and e["tid"] == 0)
mid = steps[len(steps) // 2]
fmt = lambda us: datetime.datetime.fromtimestamp(us / 1e6, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
print(fmt(mid), fmt(mid + 500000))
PY
)
read -r since until <<< "$window"
out=$("$DTRAIN" timeline "$work/sums" -o window.json --since "$since" --until "$until")
expect_contains "$out" "events outside --since/--until" "windowed timeline output"
python3 - window.json trace.json "$since" "$until" <<'PY'
import json, sys, datetime
win = json.load(open(sys.argv[1]))["traceEvents"]
whole = json.load(open(sys.argv[2]))["traceEvents"]
us = lambda t: round(datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp() * 1e6)
since, until = us(sys.argv[3]), us(sys.argv[4])
expect = [e for e in whole if e["ph"] == "X" and e["ts"] + e["dur"] >= since and e["ts"] <= until]
got = [e for e in win if e["ph"] == "X"]
assert got and sorted(map(json.dumps, got)) == sorted(map(json.dumps, expect)), (len(got), len(expect))
PY
expect_status_and_message 2 'dtrain: timeline: --since: expected an RFC 3339 time such as 2026-11-22T10:00:00Z or 2026-11-22T10:00:00.5+01:00, got "noon"' \
  "$DTRAIN" timeline "$work/sums" -o window.json --since noon
expect_status_and_message 2 'dtrain: timeline: --max-events: expected an integer from 0 to 9223372036854775807, got "-1"' \
  "$DTRAIN" timeline "$work/sums" -o window.json --max-events -1
echo "== hostile run directories (issue 22, item 30)"
# A host name that is not UTF-8: stats --json and timeline still write valid JSON.
cp -r "$work/sums" "$work/badhost"
python3 - "$work/badhost/rank-00000.log" <<'PY'
import sys
p = sys.argv[1]
b = open(p, "rb").read().replace(b"started on node0 ", b"started on caf\xe9\xff ", 1)
open(p, "wb").write(b)
PY
out=$("$DTRAIN" stats --json "$work/badhost") || fail "stats --json on a non-UTF-8 host exited $?: $out"
python3 -c 'import json,sys; s=json.loads(sys.argv[1]); assert s["ranks"][0]["host"] == "caf\ufffd\ufffd", s["ranks"][0]' "$out"
"$DTRAIN" timeline "$work/badhost" -o badhost.json >/dev/null || fail "timeline on a non-UTF-8 host exited $?"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' badhost.json
# A record filed under another rank's name is refused with both ranks named, and a failed
# timeline leaves neither a truncated trace nor a temporary file; an earlier trace stays whole.
cp -r "$work/sums" "$work/misfiled"
cp "$work/misfiled/rank-00000.jsonl" "$work/misfiled/rank-00001.jsonl"
echo "earlier" > misfiled.json
expect_status_and_message 2 "rank-00001.jsonl:1: expected rank 1 (as the file name rank-00001.jsonl says), got \"rank\": 0" \
  "$DTRAIN" timeline "$work/misfiled" -o misfiled.json
expect_eq "earlier" "$(cat misfiled.json)" "the trace file after a failed timeline"
[[ -z $(ls | grep partial || true) ]] || fail "a partial trace was left: $(ls)"
expect_status_and_message 2 "expected rank 1 (as the file name rank-00001.jsonl says)" "$DTRAIN" stats "$work/misfiled"
cp -r "$work/sums" "$work/malformed"
echo "not json" >> "$work/malformed/rank-00002.jsonl"
expect_status_and_message 2 "rank-00002.jsonl:61: expected one JSON object per line" "$DTRAIN" timeline "$work/malformed" -o misfiled.json
expect_eq "earlier" "$(cat misfiled.json)" "the trace file after a timeline that failed on a malformed line"
[[ -z $(ls | grep partial || true) ]] || fail "a partial trace was left: $(ls)"
# Sample counts near INT64_MAX: totals saturate instead of wrapping negative.
mkdir "$work/huge"
cp "$work/sums/rank-00000.log" "$work/huge/"
for i in 1 2; do
  echo '{"v": 2, "type": "step", "time": 1795341600.5, "rank": 0, "step": '$i', "samples": 9223372036854775000, "seconds": 1, "comm_seconds": 0, "data_seconds": 0}' >> "$work/huge/rank-00000.jsonl"
done
python3 -c 'import json,sys; s=json.loads(sys.argv[1]); assert s["total"]["samples"] == 2**63 - 1, s["total"]' \
  "$("$DTRAIN" stats --json "$work/huge")"
# CRLF line ends and a 100 MB line: the exit lines are recognised, the long line is quoted cut.
mkdir "$work/crlf"
python3 - "$work/crlf" <<'PY'
import sys
d = sys.argv[1]
with open(d + "/rank-00000.log", "wb") as f:
    f.write(b"2026-11-22T10:00:00.000000Z dtrain: rank 0 of 2 started on n0 (local rank 0 of 2, pid 1): x\r\n")
    f.write(b"2026-11-22T10:00:01.000000Z error: " + b"x" * (100 << 20) + b"\r\n")
    f.write(b"2026-11-22T10:00:02.000000Z dtrain: rank 0 exited with status 1\r\n")
with open(d + "/rank-00001.log", "wb") as f:
    f.write(b"2026-11-22T10:00:00.000000Z dtrain: rank 1 of 2 started on n1 (local rank 1 of 2, pid 2): x\r\n")
    f.write(b"2026-11-22T10:00:03.000000Z dtrain: rank 1 exited with status 0\r\n")
PY
report=$("$DTRAIN" logs --first-error "$work/crlf")
expect_contains "$report" "first failure: rank 0 on n0 exited with status 1" "--first-error on a CRLF log"
expect_contains "$report" "more bytes cut]" "--first-error cuts a 100 MB line"
(( ${#report} < 65536 )) || fail "--first-error printed ${#report} bytes for a 100 MB line"
[[ $report != *$'\r'* ]] || fail "--first-error quoted a carriage return"

echo "PASS"
