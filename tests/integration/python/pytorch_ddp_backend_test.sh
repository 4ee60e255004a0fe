#!/usr/bin/env bash
# examples/pytorch-ddp with backend "dtrain" by a flag only (--backend dtrain), through
# `dtrain submit` on the local site (framework: torch, 2 ranks, real mpirun): the same short run
# with gloo and with dtrain prints the same loss at every step and the same test accuracy (2 ranks:
# each sum has one addition, the same in both backends). With dtrain, DDP's allreduces run on the
# process's one Context (dtrain.init()'s, which the example's Meter follows; issue 46 item 5):
# `dtrain stats` and `dtrain report`'s table of ranks show comm % above 0 on every rank, and
# `dtrain timeline` the time in them (before: comm % 0.0, "went through another library", and no
# such allreduce): at the default detail (docs/metrics.md) as the comm seconds of the interval
# records' slices, and with DTRAIN_RECORDS=steps (a heartbeat per collective) as the gradient
# buckets' allreduces.
#   pytorch_ddp_backend_test.sh DTRAIN SRC BUILD
set -euo pipefail
DTRAIN=$1 SRC=$2 BUILD=$3
source "$SRC/tests/integration/cli/lib.sh"
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
enter_workdir ddp-backend-test
example_job_yaml "$SRC" "$BUILD" pytorch-ddp
losses() { sed -n 's/^\(.* \)\?step \([0-9]*\) loss \([0-9.]*\)$/\2 \3/p' <<< "$1"; }
declare -A loss final
for backend in gloo dtrain; do
  command=$(yaml_command "/usr/bin/python3, $SRC/examples/pytorch-ddp/train.py" --epochs 1 \
    --steps-per-epoch 40 --log-every 1 --no-checkpoint --backend "$backend")
  out=$("$DTRAIN" submit job.yaml --set "command=$command" 2>&1) ||
    fail "the run with --backend $backend exited $?: $out"
  expect_contains "$out" "seed 2026, backend $backend" "header of the $backend run"
  loss[$backend]=$(losses "$out")
  expect_eq 40 "$(wc -l <<< "${loss[$backend]}")" "loss lines of the $backend run"
  final[$backend]=$(grep -o 'final test accuracy .*' <<< "$out") || fail "no final accuracy in: $out"
  echo "$backend: $(tail -n 1 <<< "${loss[$backend]}" | cut -d' ' -f2) at step 40, ${final[$backend]}"
done
run_dir=$(grep -o 'run directory [^ ]*' <<< "$out" | head -1 | cut -d' ' -f3)
[[ -d $run_dir ]] || fail "no run directory in the dtrain run's output: $out"
# expect_comm_above_zero WHERE TABLE AWK_FIELD: ranks 0 and 1's comm % (the field AWK_FIELD of
# the line whose first field is the rank, in TABLE) above 0.
expect_comm_above_zero() {
  local where=$1 table=$2 field=$3 r comm
  for r in 0 1; do
    comm=$(awk -v r="$r" "\$1 == r { print $field; exit }" <<< "$table")
    awk -v c="${comm:-0}" 'BEGIN { exit !(c > 0) }' ||
      fail "rank $r's comm % in $where: expected above 0, got [$comm]: $table"
    echo "$where: rank $r comm % $comm"
  done
}
stats=$("$DTRAIN" stats "$run_dir")
expect_comm_above_zero "dtrain stats" "$(awk 'NF == 9' <<< "$stats")" '$NF'
[[ $stats != *"went through another library"* ]] || fail "dtrain stats: $stats"
# The default detail: steps 20-39 are one interval record per rank, its comm seconds DDP's.
trace=$("$DTRAIN" timeline -o - "$run_dir")
interval=$(grep -o '"name":"steps [0-9]*-[0-9]*","ph":"X","pid":0,[^}]*"args":{[^}]*}' <<< "$trace" | head -1)
comm=$(sed -n 's/.*"comm_seconds":\([0-9.e-]*\).*/\1/p' <<< "$interval")
awk -v c="${comm:-0}" 'BEGIN { exit !(c > 0) }' ||
  fail "dtrain timeline: rank 0's interval slice has no comm seconds: [$interval]"
echo "dtrain: rank 0's interval slice in the timeline: $interval"
# The report's table of ranks (in the page's data: runs[0].ranks, its columns and rows) shows the
# same comm %.
"$DTRAIN" report "$run_dir" -o page.html >/dev/null
report_comm=$(/usr/bin/python3 - page.html <<'PY'
import json, sys
page = open(sys.argv[1], encoding="utf-8").read()
start = page.index('id="dtrain-report-data">') + len('id="dtrain-report-data">')
table = json.loads(page[start:page.index("</script>", start)])["runs"][0]["ranks"]
column = table["columns"].index("comm %")
for row in table["rows"]:
    print(row[0], row[column].rstrip(" %"))
PY
)
expect_comm_above_zero "dtrain report's table of ranks" "$report_comm" '$2'
# A heartbeat per collective (DTRAIN_RECORDS=steps): the gradient buckets, allreduces of 1,000
# bytes or more (the example's own are 4 to 16 bytes).
command=$(yaml_command "/usr/bin/python3, $SRC/examples/pytorch-ddp/train.py" --epochs 1 \
  --steps-per-epoch 40 --log-every 1 --no-checkpoint --backend dtrain)
out=$("$DTRAIN" submit job.yaml --set "command=$command" --set env.DTRAIN_RECORDS=steps 2>&1) ||
  fail "the run with --backend dtrain and DTRAIN_RECORDS=steps exited $?: $out"
run_dir=$(grep -o 'run directory [^ ]*' <<< "$out" | head -1 | cut -d' ' -f3)
buckets=$("$DTRAIN" timeline -o - "$run_dir" |
  grep -c '"name":"allreduce","ph":"X","pid":0,.*"args":{"bytes":[0-9]\{4,\},' || true)
((buckets >= 40)) || fail "dtrain timeline: $buckets gradient allreduces on rank 0 (expected 40 or more)"
echo "dtrain: $buckets gradient allreduces in rank 0's timeline (DTRAIN_RECORDS=steps)"
expect_eq "${loss[gloo]}" "${loss[dtrain]}" "every step's loss, dtrain against gloo"
expect_eq "${final[gloo]}" "${final[dtrain]}" "final accuracy, dtrain against gloo"
echo PASS
