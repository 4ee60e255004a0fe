#!/usr/bin/env bash
# `dtrain report` (docs/report.md) on real run directories, checked in Debian's headless Chromium
# from file:// with JavaScript on: a 1-rank and a 2-rank Fashion-MNIST run (their scaling study),
# a 2-rank run whose rank 1 is SIGKILLed mid-training, one that restarts after a failure of rank 1
# (attempts, checkpoints, time lost), and a synthetic 1,024-rank run written like
# a real one (rank logs, step, collective and resource records, a killed rank). Each page must
# render without a script error (the console's and the page's own record of one), hold every rank,
# name the culprit of the failed runs, show the scaling study's efficiency as `dtrain stats`
# computes it, show resource use where the metric files have samples and "not recorded" where
# not, show the core and NIC each rank of the 2-rank run really had (each pinned to one core) and
# how long each checkpoint save took, and stay under 2 MiB at 1,024 ranks. The screenshots stay in ARTIFACTS.
#   report_browser_test.sh DTRAIN TRAIN SRC ARTIFACTS
set -euo pipefail
DTRAIN=$1 TRAIN=$2 SRC=$3 ARTIFACTS=$4
source "$SRC/tests/integration/cli/lib.sh"
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
CHROMIUM=$(command -v chromium || true)
enter_workdir report-test
mkdir -p "$ARTIFACTS"
cp "$SRC/examples/fashion-mnist/job.yaml" job.yaml
# A record per step (the Meter writes intervals of steps by default): the killed run's watcher
# counts its rank's step records, and r2's resource samples are laid over its steps' times.
export DTRAIN_RECORDS=steps
short=(--epochs 1 --steps-per-epoch 40 --warmup-steps 5 --log-every 20 --no-checkpoint)

echo "== Fashion-MNIST, 1 and 2 ranks; the 2 ranks each pinned to one core"
# After `dtrain bind`, each rank of the 2-rank run narrows itself to one CPU of those it was given
# (as mpirun --bind-to core would) and names a NIC by hand; it notes what it then has, which its
# binding record must say (docs/metrics.md), and the page must show.
cat > pin.sh <<'SH'
cpu=$(/usr/bin/python3 -c 'import os, sys; a = sorted(os.sched_getaffinity(0)); print(a[int(sys.argv[1]) % len(a)])' "$DTRAIN_RANK")
export NCCL_SOCKET_IFNAME==lo
{ echo "cpus=$cpu"; echo "gpus=${CUDA_VISIBLE_DEVICES-unset}"
  env | grep -E '^(DTRAIN_NICS|NCCL_IB_HCA|NCCL_SOCKET_IFNAME|GLOO_SOCKET_IFNAME|UCX_NET_DEVICES)=.' | sed 's/^/nic:/'
} >"$DTRAIN_RUN_DIR/pinned-$DTRAIN_RANK.txt"
exec taskset -c "$cpu" "$@"
SH
out=$("$DTRAIN" submit job.yaml --set ranks_per_node=1 --set "run_dir=$work/runs/r1" \
  --set "command=$(yaml_command "$TRAIN" "${short[@]}")" 2>&1) || fail "submit with 1 rank exited $?: $out"
out=$("$DTRAIN" submit job.yaml --set ranks_per_node=2 --set "run_dir=$work/runs/r2" \
  --set "command=$(yaml_command bash "$work/pin.sh" "$TRAIN" "${short[@]}")" 2>&1) ||
  fail "submit with 2 ranks exited $?: $out"

echo "== Fashion-MNIST, 2 ranks, rank 1 SIGKILLed after its 50th step record"
# exec keeps the shell's pid, so the watcher's kill reaches the trainer itself; 20 epochs never
# finish first. The test fails on an empty count (no metric file yet), so the watcher keeps waiting.
cat > kill_rank1.sh <<SH
if [ "\$DTRAIN_RANK" = 1 ]; then
  (until [ "\$(grep -sc '"type":"step"' "\$DTRAIN_RUN_DIR/rank-00001.jsonl")" -ge 50 ] 2>/dev/null; do sleep 0.05; done
   kill -9 \$\$) &
fi
exec $TRAIN --epochs 20 --log-every 20 --no-checkpoint
SH
"$DTRAIN" submit job.yaml --set ranks_per_node=2 --set "run_dir=$work/runs/killed" \
  --set "command=[bash, $work/kill_rank1.sh]" >killed.out 2>&1 && status=0 || status=$?
[[ $status -ne 0 ]] || fail "the job with a killed rank exited 0: $(cat killed.out)"
grep -q ' dtrain: rank 1 was killed by signal 9 (SIGKILL)' "$work/runs/killed/rank-00001.log" ||
  fail "rank 1 was not SIGKILLed: $(cat "$work/runs/killed/rank-00001.log")"

echo "== Fashion-MNIST, 2 ranks, restarts: 1; rank 1 fails after step 30 of attempt 0"
"$DTRAIN" submit job.yaml --set restarts=1 --set restart_backoff=0 --set "run_dir=$work/runs/restarted" \
  --set "command=$(yaml_command "$TRAIN" --epochs 1 --steps-per-epoch 60 --warmup-steps 5 --log-every 20 \
    --checkpoint-every 20 --fail-at-step 30 --fail-rank 1)" >restarted.out 2>&1 ||
  fail "the restarted job exited $?: $(cat restarted.out)"

# Resource samples as libdtrain writes them (docs/metrics.md), every 0.2 s of the 2-rank run, GPU
# fields included; the 1-rank run keeps none of them, so its page says "not recorded".
/usr/bin/python3 - "$work/runs" <<'PY'
import json, sys
runs = sys.argv[1]
for r in (0, 1):
    path = "%s/r2/rank-%05d.jsonl" % (runs, r)
    steps = [json.loads(l) for l in open(path) if '"type":"step"' in l]
    t0, t1 = steps[0]["time"] - steps[0]["seconds"], steps[-1]["time"]
    with open(path, "a") as f:
        t = t0 + 0.2
        while t <= t1:
            f.write(json.dumps({"v": 2, "type": "resource", "time": t, "rank": r, "interval": 0.2,
                                "cpu_percent": 95.0 + r, "rss_bytes": 200000000 + r * 1000000,
                                "gpu": r, "gpu_util_percent": 70 + 5 * r,
                                "gpu_memory_bytes": 3000000000, "gpu_power_watts": 210.5},
                               separators=(",", ":")) + "\n")
            t += 0.2
path = "%s/r1/rank-00000.jsonl" % runs
keep = [l for l in open(path) if '"type":"resource"' not in l]
open(path, "w").writelines(keep)
PY

echo "== the binding records: the core each rank of r2 really had, and the checkpoints' saves"
/usr/bin/python3 - "$work/runs" <<'PY'
import json, os, sys
runs = sys.argv[1]
def fail(what):
    sys.exit("FAIL: " + what)
for r in (0, 1):
    pinned = dict(l.rstrip("\n").split("=", 1) for l in open("%s/r2/pinned-%d.txt" % (runs, r)))
    bindings = [json.loads(l) for l in open("%s/r2/rank-%05d.jsonl" % (runs, r)) if '"type":"binding"' in l]
    if len(bindings) != 1:
        fail("r2 rank %d: expected one binding record, got %d" % (r, len(bindings)))
    b = bindings[0]
    if b["cpus"] != pinned["cpus"]:
        fail("r2 rank %d: the record says cpus %r; the rank was pinned to %r" % (r, b["cpus"], pinned["cpus"]))
    if b.get("gpus", "unset") != pinned["gpus"]:
        fail("r2 rank %d: the record says gpus %r; CUDA_VISIBLE_DEVICES was %r" % (r, b.get("gpus"), pinned["gpus"]))
    nics = {k[4:]: v for k, v in pinned.items() if k.startswith("nic:")}
    if b["nics"] != nics or b["nics"].get("NCCL_SOCKET_IFNAME") != "=lo":
        fail("r2 rank %d: the record's nics %r; the rank had %r" % (r, b["nics"], nics))
    print("r2 rank %d: binding record %s" % (r, json.dumps(b)))
saves = [json.loads(l) for l in open("%s/restarted/checkpoints.jsonl" % runs)]
if not saves:
    fail("restarted: no checkpoint records")
for c in saves:
    if not (isinstance(c.get("seconds"), float) and 0 <= c["seconds"] < 60):
        fail("restarted: a checkpoint record without the save's seconds: %r" % c)
    if os.path.exists(c["path"]) and os.path.getsize(c["path"]) != c.get("bytes"):
        fail("restarted: the record says %r bytes; %s has %d" % (c.get("bytes"), c["path"], os.path.getsize(c["path"])))
print("restarted: %d saves, e.g. %s" % (len(saves), json.dumps(saves[0])))
PY

echo "== a synthetic 1,024-rank run: rank 777 slow, rank 513 killed"
/usr/bin/python3 - "$work/runs/big" 1024 <<'PY'
import datetime, json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
T0 = 1795341600.0  # 2026-11-22T10:00:00Z
def ts(t):
    x = datetime.datetime.fromtimestamp(T0, datetime.timezone.utc) + datetime.timedelta(microseconds=round(t * 1e6))
    return x.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
def line(rec):
    return json.dumps(rec, separators=(",", ":")) + "\n"
os.makedirs(d)
ranks = [{"rank": r, "node": r // 8, "local_rank": r % 8, "host": "node%03d" % (r // 8)} for r in range(n)]
json.dump({"version": 1, "job": {"name": "big", "id": "7", "site": "polaris"}, "nodes": n // 8,
           "ranks_per_node": 8, "world_size": n, "ranks": ranks}, open(os.path.join(d, "plan.json"), "w"))
open(os.path.join(d, "job.yaml"), "w").write("name: big\nsite: polaris\nnodes: %d\nranks_per_node: 8\ngpus_per_rank: 1\n" % (n // 8))
steps, culprit, slow = 30, 513, 777
for r in range(n):
    host = "node%03d" % (r // 8)
    log = ["%s dtrain: rank %d of %d started on %s (local rank %d of 8, pid %d): train.py" % (ts(0), r, n, host, r % 8, 1000 + r)]
    recs, t = [], 1.0
    last = 20 if r == culprit else steps
    for s in range(last):
        secs = 0.5 if r == slow else 0.3
        recs.append(line({"v": 2, "type": "coll", "time": T0 + t + secs - 0.05, "rank": r, "seq": s, "op": "allreduce", "bytes": 1 << 20, "phase": "enter"}))
        recs.append(line({"v": 2, "type": "coll", "time": T0 + t + secs, "rank": r, "seq": s, "op": "allreduce", "bytes": 1 << 20, "phase": "exit"}))
        recs.append(line({"v": 2, "type": "step", "time": T0 + t + secs, "rank": r, "step": s, "samples": 64, "seconds": secs, "comm_seconds": 0.05, "data_seconds": 0.02}))
        if s % 5 == 4:
            recs.append(line({"v": 2, "type": "resource", "time": T0 + t + secs, "rank": r, "interval": 5, "cpu_percent": 90 + r % 10, "rss_bytes": (2 << 30) + r * 4096, "gpu": r % 8, "gpu_util_percent": 85, "gpu_memory_bytes": 30 << 30, "gpu_power_watts": 300.5}))
        t += 0.5
        if s % 10 == 0:
            log.append("%s step %d loss 0.5" % (ts(t), s))
    if r == culprit:
        log.append("%s rank %d last words" % (ts(t), r))
        log.append("%s dtrain: rank %d was killed by signal 9 (SIGKILL)" % (ts(t + 0.1), r))
    else:
        log.append("%s RuntimeError: peer closed the connection (rank %d)" % (ts(t + 2), r))
        log.append("%s dtrain: rank %d exited with status 1" % (ts(t + 2.1), r))
    open(os.path.join(d, "rank-%05d.log" % r), "w").write("\n".join(log) + "\n")
    open(os.path.join(d, "rank-%05d.jsonl" % r), "w").write("".join(recs))
PY

echo "== a hung job that still runs (synthetic_runs.py's live): rank 2 never entered allreduce #5"
/usr/bin/python3 "$SRC/tests/integration/cli/synthetic_runs.py" "$work/synthetic"

echo "== the pages"
report() {  # NAME RUN_DIR...: the page of the runs into NAME.html
  local name=$1 out
  shift
  out=$("$DTRAIN" report "$@" -o "$work/$name.html" 2>&1) || fail "dtrain report $* exited $?: $out"
  expect_contains "$out" "to $work/$name.html" "dtrain report's output"
  echo "$out"
}
report r1 runs/r1
report r2 runs/r2
report killed runs/killed
report big runs/big
report scaling runs/r1 runs/r2
report restarted runs/restarted
report live synthetic/live
# Without -o the page goes beside the records.
out=$("$DTRAIN" report runs/r2 2>&1) || fail "dtrain report runs/r2 exited $?: $out"
expect_contains "$out" "runs/r2/report.html" "the default page"
[[ -s runs/r2/report.html ]] || fail "no runs/r2/report.html"
size=$(stat -c %s big.html)
((size < 2 * 1024 * 1024)) || fail "the page of 1,024 ranks is $size bytes; expected under 2 MiB"
echo "the page of 1,024 ranks: $size bytes"
expect_status_and_message 2 "expected a run directory, got nothing" "$DTRAIN" report runs/nosuch
mkdir empty
expect_status_and_message 2 "empty: no plan.json, rank-NNNNN.log or rank-NNNNN.jsonl; expected the run directory of a dtrain job" \
  "$DTRAIN" report empty
expect_status_and_message 2 "report: -o $work/nosuch/r.html: cannot write it: No such file or directory" \
  "$DTRAIN" report runs/r1 -o "$work/nosuch/r.html"

if [[ -z "$CHROMIUM" ]]; then
  echo "SKIP: chromium is not installed (scripts/install-deps installs it): the pages were written but not rendered"
  exit 77
fi

# Renders PAGE.html in headless Chromium: the DOM after the scripts ran into PAGE.dom, the console
# into PAGE.console, a screenshot into ARTIFACTS/PAGE.png.
render() {  # page height
  local page=$1 height=$2 flags=(--headless=new --no-sandbox --disable-gpu --no-first-run
    --user-data-dir="$work/chromium-profile" --enable-logging=stderr --v=0 --hide-scrollbars)
  timeout 120 "$CHROMIUM" "${flags[@]}" --dump-dom "file://$work/$page.html" \
    >"$page.dom" 2>"$page.console" || fail "chromium --dump-dom $page.html exited $?: $(tail -5 "$page.console")"
  timeout 120 "$CHROMIUM" "${flags[@]}" --window-size=1200,"$height" \
    --screenshot="$ARTIFACTS/$page.png" "file://$work/$page.html" >/dev/null 2>&1 ||
    fail "chromium --screenshot $page.html exited $?"
  [[ -s "$ARTIFACTS/$page.png" ]] || fail "no screenshot of $page.html"
  # Chromium logs every console message, the page's errors among them, as INFO:CONSOLE lines.
  if grep -E 'CONSOLE|Uncaught' "$page.console"; then
    fail "$page.html: the console has messages (above)"
  fi
  # The page's script marks the body when it has drawn everything, and records any error there.
  local body
  body=$(grep -o '<body[^>]*>' "$page.dom")
  [[ "$body" != *data-js-error* ]] || fail "$page.html: a script error: $body"
  [[ "$body" == *'data-rendered="yes"'* ]] || fail "$page.html: the script did not finish: $body"
}
for page in r1 r2 killed scaling restarted live; do render $page 5200; done
render big 6400

# Layout and colours, which the DOM does not hold: PAGE.html with report_probe.js after its own
# script, rendered 1280 pixels wide; the probe's findings land in PAGE.probe.dom (data-probe).
probe() {  # page
  local page=$1
  /usr/bin/python3 - "$work/$page.html" "$SRC/tests/integration/examples/report_probe.js" \
    "$work/$page-probe.html" <<'PY'
import sys
page, probe, out = sys.argv[1:4]
text = open(page).read()
i = text.rfind("</body>")
open(out, "w").write(text[:i] + "<script>\n" + open(probe).read() + "</script>\n" + text[i:])
PY
  timeout 120 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$work/chromium-profile" --hide-scrollbars --window-size=1280,900 \
    --dump-dom "file://$work/$page-probe.html" >"$page.probe.dom" 2>/dev/null ||
    fail "chromium --dump-dom $page-probe.html exited $?"
}
for page in r2 killed live; do probe $page; done

# What a person sees, from the DOM after the scripts ran.
/usr/bin/python3 - "$work" "$DTRAIN" <<'PY'
import html, json, re, subprocess, sys
work, dtrain = sys.argv[1], sys.argv[2]
def dom(page):
    return open("%s/%s.dom" % (work, page)).read()
def text(fragment):
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))
def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)
def ranks_present(page, n):
    got = sorted(int(x) for x in re.findall(r'<tr data-rank="(\d+)"', dom(page)))
    check(got == list(range(n)), "%s: expected rows for ranks 0-%d, got %d rows" % (page, n - 1, len(got)))
def culprit(page, rank):
    m = re.search(r'<div class="culprit-box" id="run-0-culprit">(.*?)</div>', dom(page), re.S)
    check(m, "%s: no culprit box" % page)
    t = text(m.group(1))
    check(t.startswith("First failure: rank %d on " % rank) and "SIGKILL" in t, "%s: culprit box says %r" % (page, t))
    return t
ranks_present("r1", 1)
ranks_present("r2", 2)
ranks_present("killed", 2)
# Past 64 ranks the table has pages of 64 (cli_report_scale walks them all), the culprit and the
# stragglers above them.
got = [int(x) for x in re.findall(r'<tr data-rank="(\d+)"', dom("big"))]
check(got == [513, 777] + list(range(64)), "big: expected ranks 513 and 777, then the first page of ranks 0-63, got %s" % got[:70])
check("page 1 of 16" in dom("big"), "big: the table of ranks is not on page 1 of 16")
print("killed:", culprit("killed", 1))
print("big:", culprit("big", 513)[:120])
check(re.search(r'<tr data-rank="513" class="culprit pinned">', dom("big")), "big: rank 513's row is not marked the culprit")
# Stragglers: rank 777 is slow on a heat map of 128 rows; it is named.
check("rank 777 on node097" in text(dom("big")), "big: the straggler rank 777 is not named")
check(dom("big").count('<rect') > 1000, "big: no heat map")
# Resources: charts where recorded, "not recorded" where not.
check(re.search(r'<div id="run-0-resources"><div class="chart"><svg', dom("r2")), "r2: no resource charts")
check("GPU utilisation %" in dom("r2") and "GPU utilisation %" in dom("big"), "no GPU chart")
m = re.search(r'<p class="none" id="run-0-resources">([^<]*)</p>', dom("r1"))
check(m and "not recorded" in m.group(1), "r1: expected resource use 'not recorded'")
# Where each rank ran: r2's cores and NIC as the binding records say (checked against what the
# ranks had, above); the synthetic run has no binding records and says so.
def row_cells(page, rank):
    m = re.search(r'<tr data-rank="%d"[^>]*>(.*?)</tr>' % rank, dom(page), re.S)
    check(m, "%s: no row for rank %d" % (page, rank))
    return [text(c) for c in re.findall(r"<td>(.*?)</td>", m.group(1), re.S)]
# Where a rank ran is a line under its row (as columns, the NIC variables pushed steps and
# samples/s out of the page): "cores: 3; CUDA_VISIBLE_DEVICES: -; NIC: NCCL_SOCKET_IFNAME==lo".
def binding(page, rank, what):
    m = re.search(r'<tr class="binding" data-binding-rank="%d">.*?<span class="binding-%s">(.*?)</span>' % (rank, what), dom(page), re.S)
    check(m, "%s: no %s under rank %d's row" % (page, what, rank))
    return text(m.group(1))
for r in (0, 1):
    pinned = dict(l.rstrip("\n").split("=", 1) for l in open("%s/runs/r2/pinned-%d.txt" % (work, r)))
    cores, gpus, nic = (binding("r2", r, w) for w in ("cores", "gpus", "nic"))
    check(cores == "cores: " + pinned["cpus"], "r2: rank %d's cores read %r; it had %r" % (r, cores, pinned["cpus"]))
    check(nic.startswith("NIC: ") and "NCCL_SOCKET_IFNAME==lo" in nic, "r2: rank %d's NIC reads %r" % (r, nic))
    print("r2 rank %d: %s; %s; %s" % (r, cores, gpus, nic))
m = re.search(r'<p class="note" id="run-0-binding-note">([^<]*)</p>', dom("big"))
check(m and "not recorded" in m.group(1), "big: expected the binding 'not recorded'")
# The checkpoints of the restarted run: how long each save took and its size.
saves = re.findall(r'<tr class="checkpoint">(.*?)</tr>', dom("restarted"), re.S)
check(saves, "restarted: no checkpoint rows")
for row in saves:
    cells = [text(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
    check(re.fullmatch(r"[0-9.]+ (s|ms|us)", cells[3]) and re.fullmatch(r"[0-9.]+ (B|KiB|MiB)", cells[4]),
          "restarted: a checkpoint row reads %r" % cells)
# (The page's script, inline, holds the note's text too: the element is what a person sees.)
check('<p class="note">How long a save took' not in dom("restarted"), "restarted: the page says the duration is not recorded")
print("restarted: checkpoint", cells)
# A restarted run: both attempts, attempt 0 restarted with its cause, the time it cost.
attempts = re.findall(r'<tr class="attempt">(.*?)</tr>', dom("restarted"), re.S)
check(len(attempts) == 2, "restarted: expected 2 attempts, got %d" % len(attempts))
check("restarted" in text(attempts[0]) and "injected failure after step 30 on rank 1" in text(attempts[0]),
      "restarted: attempt 0 reads %r" % text(attempts[0]))
check("completed" in text(attempts[1]), "restarted: attempt 1 reads %r" % text(attempts[1]))
check(re.search(r"Time lost to failures: [0-9.]+ m?s", text(dom("restarted"))), "restarted: no time lost")
check("the earlier attempts and why they ended are below" in dom("restarted"), "restarted: the verdict does not point at attempt 0")
# The scaling study: r2 against r1, the efficiency `dtrain stats` computes.
stats = json.loads(subprocess.check_output([dtrain, "stats", "--json", work + "/runs/r1", work + "/runs/r2"]))
want = [r for r in stats["scaling"]["rows"] if r["run"] == "r2"][0]["efficiency"] * 100
m = re.search(r'<tr data-run="r2">.*?<td class="efficiency">([0-9.]+) %</td>', dom("scaling"), re.S)
check(m, "scaling: no efficiency for r2")
got = float(m.group(1))
check(abs(got - want) <= max(0.05, want * 0.005), "scaling: efficiency %s %%, dtrain stats says %.3f %%" % (got, want))
check('<a href="#run-1">r2</a>' in dom("scaling"), "scaling: r2 does not link to its section")
print("scaling: r2's efficiency %s %% (dtrain stats: %.2f %%)" % (got, want))

# A hung job that still runs (no exit line, no end record): it reads as running, never as ended,
# and the collective its ranks are stuck in leads the collectives, marked as in progress.
live = dom("live")
facts = dict((text(k), text(v)) for k, v in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", live, re.S))
check("ended" not in facts and re.fullmatch(r"[0-9].* so far", facts.get("running for", "")),
      "live: the job's facts read %r; expected 'running for ... so far' and no 'ended'" % facts)
check(facts.get("exit") == "none yet (running)", "live: exit reads %r" % facts.get("exit"))
m = re.search(r'<p class="in-progress" id="run-0-in-progress">(.*?)</p>', live, re.S)
check(m, "live: no collective in progress")
now = text(m.group(1))
check(now.startswith("In progress: #5 allreduce of 4 KiB: in progress since 2026-11-22T10:00:00.500000Z (")
      and now.endswith("before this page was written): ranks 0-1,3 are in it; rank 2 (on node1) has not "
                       "entered it (it left #4 at 2026-11-22T10:00:00.410000Z)."),
      "live: the collective in progress reads %r" % now)
rows = re.findall(r"<tr( class=\"in-progress\")?><td>(#\d+ [^<]*)</td>", live)
check(rows and rows[0] == (' class="in-progress"', "#5 allreduce of 4 KiB (in progress)"),
      "live: the collectives' first row is %r" % (rows[:1],))
print("live: running for %s; %s" % (facts["running for"], now))

# What the browser drew, 1280 pixels wide (report_probe.js): the attempt bars agree with the badge
# (a running job's in the badge's colour, red only for an attempt that ended failed), and the
# table of ranks needs no horizontal scrolling, its steps and samples/s in view.
def probe(page):
    m = re.search(r'data-probe="([^"]*)"', open("%s/%s.probe.dom" % (work, page)).read())
    check(m, "%s: the probe did not run" % page)
    return json.loads(html.unescape(m.group(1)))
RED, RUNNING = "rgb(217, 83, 79)", "rgb(31, 79, 153)"
for page, badge in (("live", "running"), ("killed", "failed"), ("r2", "finished")):
    p = probe(page)
    check(p["badge"] == badge, "%s: the badge reads %r; expected %r" % (page, p["badge"], badge))
    fills = [b["fill"] for b in p["bars"]]
    check(fills, "%s: no attempt bar" % page)
    if badge == "running":
        check(fills[-1] == RUNNING and RED not in fills, "%s: the bars of a running job are %r" % (page, p["bars"]))
    elif badge == "failed":
        check(fills[-1] == RED, "%s: the last bar of a failed job is %r" % (page, p["bars"]))
    else:
        check(RED not in fills and RUNNING not in fills, "%s: the bars of a finished job are %r" % (page, p["bars"]))
    r = p["ranks"]
    check(p["page_width"] <= p["width"] and r["scroll_width"] <= r["client_width"],
          "%s: at %d pixels the page is %d wide and the table of ranks %d in a box of %d" %
          (page, p["width"], p["page_width"], r["scroll_width"], r["client_width"]))
    check(all(r["cells"].get(c, {}).get("visible") for c in ("steps", "samples/s")),
          "%s: the steps and samples/s cells of the first rank are not in view: %r" % (page, r["cells"]))
    print("%s at %d px: table %d of %d px, bars %s" % (page, p["width"], r["scroll_width"], r["client_width"], fills))
PY
echo "screenshots in $ARTIFACTS"
echo PASS
