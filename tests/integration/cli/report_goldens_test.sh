#!/usr/bin/env bash
# Report goldens (hwloc's test-hwloc-calc pattern, as the plan goldens of tests/unit/plan): what
# `dtrain topo`, `bind --dry-run`, `stats` and `logs --first-error`/`--hang` print for fixed inputs
# (the topology XMLs of tests/fixtures/topologies, the synthetic run directories of
# synthetic_runs.py) must be tests/fixtures/golden/reports/CASE.txt byte for byte, stdout and
# stderr together, with exit status 0; the page model of `dtrain report` (the JSON its page draws
# from, out of the page's dtrain-report-data element, one key a line) on synthetic_pages.py's
# directories must be tests/fixtures/golden/reports/page-*.json. DTRAIN_UPDATE_GOLDEN=1 rewrites
# the files instead; review their diff like any other change (docs/contributing.md).
#   report_goldens_test.sh DTRAIN SRC
set -euo pipefail
DTRAIN=$1
SRC=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
enter_workdir report-goldens
goldens=$SRC/tests/fixtures/golden/reports

# The inputs, under relative names: the commands run in $work.
ln -s "$SRC/tests/fixtures/topologies" topologies
python3 "$here/synthetic_runs.py" "$work"
python3 "$here/synthetic_intervals.py" "$work"
python3 "$here/synthetic_pages.py" "$work"

# CASE  ARGUMENTS (split at blanks: no argument has one)
cases=$(cat <<'CASES'
topo-polaris-like-4xa100          topo --topology topologies/polaris-like-4xa100.xml
topo-tioga-cray-ex235a-8xmi250x   topo --topology topologies/tioga-cray-ex235a-8xmi250x.xml
topo-lassen-power9-4xv100         topo --topology topologies/lassen-power9-4xv100.xml
topo-quartz-nogpu                 topo --topology topologies/quartz-nogpu.xml
topo-dgx2-16xv100-trimmed-cpu-none topo --topology topologies/dgx2-16xv100-trimmed.xml --cpu none
topo-pascal-2xp100                topo --topology topologies/pascal-2xp100.xml
topo-tioga-2-ranks                topo --topology topologies/tioga-cray-ex235a-8xmi250x.xml --ranks-per-node 2
topo-polaris-gpu-identity         topo --topology topologies/polaris-like-4xa100.xml --gpu identity
topo-quartz-4-ranks-json          topo --topology topologies/quartz-nogpu.xml --ranks-per-node 4 --json
bind-polaris-rank-0-of-4          bind --topology topologies/polaris-like-4xa100.xml --local-rank 0 --local-size 4 --dry-run
bind-polaris-rank-3-of-4          bind --topology topologies/polaris-like-4xa100.xml --local-rank 3 --local-size 4 --dry-run -- ./train --lr 0.1
bind-tioga-rank-5-of-8            bind --topology topologies/tioga-cray-ex235a-8xmi250x.xml --local-rank 5 --local-size 8 --dry-run
bind-quartz-rank-1-of-4           bind --topology topologies/quartz-nogpu.xml --local-rank 1 --local-size 4 --dry-run
bind-lassen-rank-2-of-4-json      bind --topology topologies/lassen-power9-4xv100.xml --local-rank 2 --local-size 4 --dry-run --json
stats-sums                        stats sums
stats-sums-json                   stats --json sums
stats-scaling                     stats scale4 scale1 scale2
stats-straggler2                  stats straggler2
stats-straggler2-json             stats --json straggler2
stats-straggler2-intervals        stats straggler2-intervals
stats-straggler2-intervals-json   stats --json straggler2-intervals
stats-arrivals                    stats arrivals
stats-arrivals-json               stats --json arrivals
logs-first-error-hang             logs --first-error hang
logs-first-error-sigcont          logs --first-error sigcont
logs-first-error-sigcont-logs-only logs --first-error sigcont-logs-only
logs-first-error-sigcont-json     logs --first-error --json sigcont
logs-hang-hang                    logs --hang hang
logs-hang-sigcont                 logs --hang sigcont
logs-hang-stacks                  logs --hang stacks
logs-hang-stacks-json             logs --hang --json stacks
logs-collapse-warnings            logs --collapse warnings
logs-collapse-warnings-tail       logs --collapse --tail 3 warnings
CASES
)

# What may differ between machines, replaced in one place: the scratch directory and the source
# tree's path (should a report print an absolute path).
normalise() {  # file
  local text
  text=$(cat "$1"; printf x)
  text=${text%x}
  text=${text//"$work"/<work>}
  text=${text//"$SRC"/<src>}
  printf '%s' "$text" >"$1"
}

update=${DTRAIN_UPDATE_GOLDEN:-}
failed=() names=()
while read -r name args; do
  names+=("$name.txt")
  actual=$work/$name.actual
  # A clean environment: no launcher's variables (bind would take its place from them), no
  # DTRAIN_* setting, the C locale.
  # shellcheck disable=SC2086
  env -i PATH="$PATH" "$DTRAIN" $args >"$actual" 2>&1 && status=0 || status=$?
  normalise "$actual"
  if ((status != 0)); then
    failed+=("$name")
    echo "FAIL: $name: dtrain $args: exit status $status; expected 0"
    cat "$actual"
  elif [[ $update == 1 ]]; then
    cmp -s "$actual" "$goldens/$name.txt" || { cp "$actual" "$goldens/$name.txt" && echo "updated $name.txt"; }
  elif ! cmp -s "$goldens/$name.txt" "$actual"; then
    failed+=("$name")
    echo "FAIL: $name: dtrain $args: the output differs from $goldens/$name.txt:"
    diff -u "$goldens/$name.txt" "$actual" || true
  else
    echo "ok: $name"
  fi
done <<<"$cases"

# The page models: written to standard output (-o -), the model taken out of the page and laid
# out one key a line for a readable diff; "generated" (when the page was written) is the one
# value that changes between runs (the jobs have ended: nothing else depends on the time).
model_of_page() {  # page.html model.json
  python3 - "$1" "$2" <<'PY'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="dtrain-report-data">(.*?)</script>', page, re.S)
if not m:
    sys.exit("no dtrain-report-data element in the page")
model = json.loads(m.group(1))
model["generated"] = "<generated>"
with open(sys.argv[2], "w", encoding="utf-8") as f:
    f.write(json.dumps(model, indent=1, ensure_ascii=False) + "\n")
PY
}
for run in page-clean page-failed page-intervals page-64 page-stacks; do
  names+=("$run.json")
  actual=$work/$run.actual.json
  env -i PATH="$PATH" "$DTRAIN" report "$run" -o - >"$work/$run.html" 2>"$work/$run.err" && status=0 || status=$?
  if ((status != 0)) || ! model_of_page "$work/$run.html" "$actual"; then
    failed+=("$run")
    echo "FAIL: $run: dtrain report $run -o -: exit status $status; expected 0 and a page"
    cat "$work/$run.err"
  elif [[ $update == 1 ]]; then
    cmp -s "$actual" "$goldens/$run.json" || { cp "$actual" "$goldens/$run.json" && echo "updated $run.json"; }
  elif ! cmp -s "$goldens/$run.json" "$actual"; then
    failed+=("$run")
    echo "FAIL: $run: the page model of dtrain report $run differs from $goldens/$run.json:"
    diff -u "$goldens/$run.json" "$actual" || true
  else
    echo "ok: $run"
  fi
done

# A golden without a case is stale: nothing checks it any more.
shopt -s nullglob
for file in "$goldens"/*.txt "$goldens"/*.json; do
  [[ " ${names[*]} " == *" $(basename "$file") "* ]] || {
    failed+=("$(basename "$file")")
    echo "FAIL: $file: no case of $0 writes it; remove it or add its case"
  }
done
((${#failed[@]} == 0)) || fail "${#failed[@]} of ${#names[@]} report goldens: ${failed[*]} (DTRAIN_UPDATE_GOLDEN=1 rewrites them)"
echo "PASS: ${#names[@]} report goldens"
