#!/usr/bin/env bash
# dtrain doctor inside real jobs: under mpirun -n 2, or (with SLURM_DIR) under srun -n 2 on the
# localhost Slurm cluster, each rank bound by dtrain bind: every rank reports, the checks are
# green and the allreduce bandwidth check passes with no wrong element; alone, it says there is
# nothing to measure; a setting libdtrain refuses exits 2; two ranks sharing cores are named. The bandwidth gate is tested both ways
# with thresholds far from what any machine measures (0.001 GB/s passes, 10^6 GB/s fails), so
# the outcome never depends on how busy the test machine is.
#   doctor_test.sh DTRAIN [SLURM_DIR]
set -euo pipefail
DTRAIN=$1
source "$(dirname "$0")/lib.sh"

if [[ -n ${2:-} ]]; then
  echo "== srun -n 2 on the localhost Slurm cluster"
  source "$2/env.sh"
  out=$(timeout 120 srun -n 2 "$DTRAIN" bind --gpu none -- "$DTRAIN" doctor --min-busbw 0.001) ||
    fail "doctor under srun exited $?: $out"
  expect_contains "$out" "# dtrain doctor: 2 rank(s)" "srun doctor"
  expect_contains "$out" "ok: one GPU and disjoint cores per rank" "srun doctor checks"
  expect_contains "$out" "ok: allreduce" "srun doctor bandwidth"
  echo "== the bandwidth gate fails below its minimum"
  set +e
  out=$(timeout 120 srun -n 2 "$DTRAIN" bind --gpu none -- "$DTRAIN" doctor --min-busbw 1e6 2>&1)
  status=$?
  set -e
  ((status != 0)) || fail "doctor with --min-busbw 1e6 exited 0: $out"
  expect_contains "$out" "FAIL: allreduce" "srun doctor bandwidth gate"
  expect_contains "$out" "(minimum 1000000.00)" "srun doctor bandwidth gate"
  echo PASS
  exit 0
fi

echo "== mpirun -n 2"
out=$(timeout 120 mpirun --allow-run-as-root --oversubscribe -n 2 "$DTRAIN" bind -- "$DTRAIN" doctor --json --min-busbw 0.001) ||
  fail "doctor under mpirun exited $?: $out"
check=$(python3 - "$out" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
ranks = d["ranks"]
assert [r["rank"] for r in ranks] == [0, 1], ranks
assert all(r["launcher"] == "openmpi" and r["size"] == 2 for r in ranks), ranks
assert ranks[0]["cpuset"] != ranks[1]["cpuset"], ranks
a = d["allreduce"]
assert a["measured"] and a["wrong"] == 0 and a["busbw_gbps"] >= a["min_busbw_gbps"], a
assert d["warnings"] == [] and d["ok"], d["warnings"]
print("ok", d["versions"]["bootstrap"], round(a["busbw_gbps"], 2))
PY
) || fail "doctor --json under mpirun: $check"
echo "$check"

echo "== one process: nothing to measure, still green"
out=$(env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK "$DTRAIN" doctor) || fail "doctor alone exited $?: $out"
expect_contains "$out" "ok: one rank, no allreduce bandwidth to measure" "doctor alone"

echo "== a DTRAIN_* setting libdtrain refuses is bad input: exit 2 (docs/errors.md)"
out=$(env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK DTRAIN_BOOTSTRAP=bogus "$DTRAIN" doctor 2>&1) && status=0 || status=$?
expect_eq 2 "$status" "doctor exit status with DTRAIN_BOOTSTRAP=bogus ($out)"
expect_contains "$out" "DTRAIN_BOOTSTRAP: unknown method" "doctor with a bad setting"

echo "== two ranks on the same cores are named"
# DTRAIN_AFFINITY=off: otherwise init() would give the unbound ranks disjoint cores itself.
out=$(timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to none -x DTRAIN_AFFINITY=off \
  -n 2 "$DTRAIN" doctor --min-busbw 0.001 2>&1) && status=0 || status=$?
expect_eq 1 "$status" "doctor exit status with overlapping cpusets ($out)"
expect_contains "$out" "WARNING: ranks 0 and 1 on $(hostname) have overlapping cpusets" "warning"
echo PASS
