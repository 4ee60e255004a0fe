#!/usr/bin/env bash
# The report page at scale (issue 47 item 3): `dtrain report` of a synthetic 1,024-rank run of
# 50,000 steps at the Meter's default detail (each rank: steps 0-19 as step records, then interval
# records of 5,000 steps; resource samples; rank 777 slow, rank 513 SIGKILLed at the end, the
# others stopped after it), written with fixed times. The page must be at most 5 MB and, in
# Debian's headless Chromium from file://, draw everything without a script error within 3 s of
# navigation (the page's own performance.now() when its script has finished), with the heat map's
# 128 rows of 8 ranks each; the table of ranks shows the culprit and the slowest ranks first, then
# 64 ranks a page, every rank met by pressing "next" through the pages. Exits 77 (skipped) where
# chromium is not installed, after the size check. Then the stacks section of synthetic_pages.py's
# page-stacks in the browser: the merged tree, rank 2 a branch of its own.
#   report_scale_test.sh DTRAIN SRC
set -euo pipefail
DTRAIN=$1 SRC=$2
source "$SRC/tests/integration/cli/lib.sh"
enter_workdir report-scale
python3 - "$work/big" 1024 50000 <<'PY'
import json, os, sys
d, n, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
T0 = 1795341600.0
GAMMA = 1.005 / 0.995
import math
def hist(value, count):
    return {"sum": value * count, "min": value, "max": value,
            "lo": math.ceil(math.log(value) / math.log(GAMMA)), "counts": [count]}
def ts(t):
    import datetime
    x = datetime.datetime.fromtimestamp(T0, datetime.timezone.utc) + datetime.timedelta(microseconds=round(t * 1e6))
    return x.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
def line(rec):
    return json.dumps(rec, separators=(",", ":")) + "\n"
os.makedirs(d)
json.dump({"version": 1, "job": {"name": "big", "id": "7"}, "nodes": n // 4, "ranks_per_node": 4,
           "world_size": n}, open(os.path.join(d, "plan.json"), "w"))
open(os.path.join(d, "job.yaml"), "w").write("name: big\nnodes: %d\nranks_per_node: 4\n" % (n // 4))
culprit, slow, every = 513, 777, 5000
for r in range(n):
    host = "node%d" % (r // 4)
    secs = 0.36 if r == slow else 0.3
    recs, t = [], 0.0
    for s in range(20):
        t += secs
        recs.append(line({"v": 2, "type": "step", "time": T0 + t, "rank": r, "step": s, "samples": 64,
                          "seconds": secs, "comm_seconds": 0.05, "data_seconds": 0.02}))
    first = 20
    while first < steps:
        last = min(steps, first + every) - 1
        c = last - first + 1
        began = T0 + t
        t += secs * c
        recs.append(line({"v": 2, "type": "interval", "time": T0 + t, "rank": r, "first_step": first,
                          "last_step": last, "count": c, "began": began, "samples": hist(64, c),
                          "seconds": hist(secs, c), "comm_seconds": hist(0.05, c), "data_seconds": hist(0.02, c)}))
        recs.append(line({"v": 2, "type": "resource", "time": T0 + t, "rank": r, "interval": 10,
                          "cpu_percent": 90 + r % 10, "rss_bytes": (2 << 30) + r * 4096, "gpu": r % 4,
                          "gpu_util_percent": 85, "gpu_memory_bytes": 30 << 30, "gpu_power_watts": 300.5}))
        first = last + 1
    log = ["%s dtrain: rank %d of %d started on %s (local rank %d of 4, pid %d): train.py" % (ts(0), r, n, host, r % 4, 1000 + r)]
    if r == culprit:
        log.append("%s dtrain: rank %d was killed by signal 9 (SIGKILL)" % (ts(t + 0.1), r))
    else:
        log.append("%s dtrain: rank %d was killed by signal 15 (SIGTERM)" % (ts(t + 2), r))
    open(os.path.join(d, "rank-%05d.log" % r), "w").write("\n".join(log) + "\n")
    open(os.path.join(d, "rank-%05d.jsonl" % r), "w").write("".join(recs))
PY
start=$(date +%s.%N)
out=$("$DTRAIN" report big -o "$work/big.html" 2>&1) || fail "dtrain report big exited $?: $out"
echo "$out (in $(python3 -c "print(round($(date +%s.%N) - $start, 2))") s)"
size=$(stat -c %s big.html)
((size <= 5000000)) || fail "the page of 1,024 ranks x 50,000 steps is $size bytes; expected at most 5 MB"
echo "the page of 1,024 ranks x 50,000 steps: $size bytes"

CHROMIUM=$(command -v chromium || true)
if [[ -z "$CHROMIUM" ]]; then
  echo "SKIP: chromium is not installed (scripts/install-deps installs it): the page was not loaded"
  exit 77
fi
# The time from navigation to the end of the page's script, noted on the body by a script after it.
python3 - big.html timed.html <<'PY'
import sys
text = open(sys.argv[1]).read()
i = text.rfind("</body>")
probe = '<script>document.body.setAttribute("data-load-ms", String(Math.round(performance.now())));</script>\n'
# Then what a reader of the table of ranks sees: the ranks shown first, and every rank met by
# pressing "next" through its pages.
probe += """<script>
(function () {
  const ranks = () => [...document.querySelectorAll("tr[data-rank]")].map((r) => r.getAttribute("data-rank"));
  document.body.setAttribute("data-first-ranks", ranks().join(","));
  const next = document.querySelector(".pager-next");
  const seen = new Set(ranks());
  for (let i = 0; next && !next.disabled && i < 1000; ++i) {
    next.click();
    for (const r of ranks()) seen.add(r);
  }
  document.body.setAttribute("data-ranks-seen", [...seen].join(","));
})();
</script>
"""
open(sys.argv[2], "w").write(text[:i] + probe + text[i:])
PY
timeout 120 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --no-first-run \
  --user-data-dir="$work/chromium-profile" --enable-logging=stderr --v=0 \
  --dump-dom "file://$work/timed.html" >timed.dom 2>timed.console ||
  fail "chromium --dump-dom timed.html exited $?: $(tail -5 timed.console)"
if grep -E 'CONSOLE|Uncaught' timed.console; then fail "big: the console has messages (above)"; fi
body=$(grep -o '<body[^>]*>' timed.dom)
[[ "$body" != *data-js-error* && "$body" == *'data-rendered="yes"'* ]] || fail "big: the script did not finish: $body"
ms=$(sed -n 's/.*data-load-ms="\([0-9]*\)".*/\1/p' <<<"$body")
[[ -n "$ms" ]] || fail "big: no load time on the body: $body"
echo "loaded and drawn in $ms ms (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
((ms <= 3000)) || fail "big: the page took $ms ms to load and draw; expected at most 3,000"
python3 - timed.dom <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)
body = re.search(r"<body[^>]*>", dom).group(0)
def ranks_of(attr):
    m = re.search(r'%s="([^"]*)"' % attr, body)
    check(m, "no %s on the body: the probe did not run" % attr)
    return [int(x) for x in m.group(1).split(",") if x]
first = ranks_of("data-first-ranks")
# The culprit and the slowest ranks above the first page of 64.
check(first[:2] == [513, 777] and first[-64:] == list(range(64)) and len(first) <= 64 + 5 + 1,
      "expected ranks 513 and 777 above the first page (ranks 0-63) of the table, got %s" % first)
seen = sorted(set(ranks_of("data-ranks-seen")))
check(seen == list(range(1024)), "expected every rank 0-1023 in the pages of the table, got %d" % len(seen))
check("page 16 of 16" in dom, "the table of ranks does not end on page 16 of 16")
heat = re.findall(r"<title>ranks (\d+-\d+):", dom)
check(len(set(heat)) == 128, "expected the heat map's 128 rows of 8 ranks, got %d" % len(set(heat)))
check("rank 777 on node194" in dom, "the slow rank 777 is not named")
check(re.search(r'<tr data-rank="513" class="culprit', dom), "rank 513 is not marked the culprit")
print("the table of ranks: 513 and 777 first, 16 pages of 64 ranks; 128 heat map rows, rank 777 named, rank 513 the culprit")
PY

# The stacks the hang watch took, merged on the page (synthetic_pages.py's page-stacks): rank 2,
# in matmul while ranks 0-1,3 wait in the allreduce, is a branch of its own.
python3 "$SRC/tests/integration/cli/synthetic_pages.py" "$work/pages"
"$DTRAIN" report pages/page-stacks -o "$work/stacks.html" >/dev/null
timeout 120 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --no-first-run \
  --user-data-dir="$work/chromium-profile" --dump-dom "file://$work/stacks.html" >stacks.dom 2>/dev/null ||
  fail "chromium --dump-dom stacks.html exited $?"
python3 - stacks.dom <<'PY'
import html, re, sys
m = re.search(r'<pre class="stacks" id="run-0-stacks">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
if not m:
    sys.exit("FAIL: page-stacks: no stacks section")
tree = html.unescape(m.group(1))
want = "    ranks 0-1,3 (3):\n      dtrain::Comm::allreduce\n      __poll\n    rank 2:\n      matmul\n"
if want not in tree:
    sys.exit("FAIL: page-stacks: the merged stacks read %r; expected rank 2 apart:\n%s" % (tree, want))
print("page-stacks: the merged stacks, rank 2 apart")
PY
echo PASS
