#!/usr/bin/env bash
# `dtrain bind` under real launchers. Every rank's dry-run entry must be the entry `dtrain topo`
# prints for the same topology and rank count (one solver, applied the same way everywhere), the
# launcher must be recognised, and the values must be the ones the topology predicts.
#
#   bind_test.sh DTRAIN FIXTURE_DIR dry-run LAUNCHER_NAME LAUNCHER...   e.g. openmpi mpirun -n 4
#   bind_test.sh DTRAIN FIXTURE_DIR exec    LAUNCHER...                 runs a command per rank
#   bind_test.sh DTRAIN FIXTURE_DIR live    LAUNCHER...                 binds this machine's CPUs
#   bind_test.sh DTRAIN FIXTURE_DIR errors                              bad input -> exit 2
set -euo pipefail
dtrain=$1 fixtures=$2 mode=$3
shift 3
topologies=$fixtures/topologies

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Variables of an enclosing launcher (ctest under srun or mpirun) must not leak into a bare run.
bare() {
  env -u OMPI_COMM_WORLD_RANK -u PALS_RANKID -u PMI_RANK -u SLURM_PROCID -u PMIX_RANK "$@"
}

# check_dry_run LAUNCHER_NAME N TOPOLOGY OUTPUT: each of the N lines is one rank's JSON object.
check_dry_run() {
  local name=$1 n=$2 topo=$3 out=$4 expected
  expected=$(bare "$dtrain" topo --topology "$topo" --ranks-per-node "$n" --json)
  python3 - "$name" "$n" "$out" "$expected" <<'PY'
import json, sys
name, n, out, expected = sys.argv[1], int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
lines = [l for l in out.splitlines() if l.startswith("{")]
if len(lines) != n:
    sys.exit(f"FAIL: expected {n} JSON lines, got {len(lines)}:\n{out}")
seen = {}
for line in lines:
    j = json.loads(line)
    r = j["local_rank"]
    if r in seen:
        sys.exit(f"FAIL: local rank {r} reported twice")
    seen[r] = j
    want = expected["ranks"][r]
    checks = {
        "launcher": (j["launcher"], name),
        "local_size": (j["local_size"], n),
        "bind_cpus (an XML file never binds this machine)": (j["bind_cpus"], False),
        "rank entry = dtrain topo's": (j["rank"], want),
        "DTRAIN_LOCAL_RANK": (j["env"]["DTRAIN_LOCAL_RANK"], str(r)),
        "DTRAIN_CPUSET": (j["env"]["DTRAIN_CPUSET"], want["cpus"]),
        "DTRAIN_NICS": (j["env"]["DTRAIN_NICS"], ",".join(want["nics"])),
    }
    if want["gpus"]:
        checks["CUDA_VISIBLE_DEVICES"] = (j["env"]["CUDA_VISIBLE_DEVICES"],
                                          ",".join(map(str, want["visible_gpus"])))
    for what, (got, exp) in checks.items():
        if got != exp:
            sys.exit(f"FAIL: rank {r}: {what}: expected {exp!r}, got {got!r}")
if sorted(seen) != list(range(n)):
    sys.exit(f"FAIL: expected local ranks 0..{n-1}, got {sorted(seen)}")
print(f"ok: {name}, {n} ranks, {expected['node']['source']}")
PY
}

case $mode in
  dry-run)
    name=$1
    shift
    for topo in polaris-like-4xa100.xml tioga-cray-ex235a-8xmi250x.xml lassen-power9-4xv100.xml \
      quartz-nogpu.xml; do
      out=$(timeout 120 "$@" "$dtrain" bind --topology "$topologies/$topo" --dry-run --json -- true) ||
        fail "$* dtrain bind --topology $topo: exit $?"$'\n'"$out"
      check_dry_run "$name" 4 "$topologies/$topo" "$out"
    done
    # The values themselves, not only agreement: the Polaris reversal and its NIC sharing.
    out=$(timeout 120 "$@" "$dtrain" bind --topology "$topologies/polaris-like-4xa100.xml" \
      --dry-run --json)
    python3 - "$out" <<'PY'
import json, sys
ranks = {j["local_rank"]: j for j in map(json.loads, (l for l in sys.argv[1].splitlines() if l.startswith("{")))}
want = {0: ("3", "=mlx5_0", "0-7,32-39"), 1: ("2", "=mlx5_1", "8-15,40-47"),
        2: ("1", "=mlx5_1", "16-23,48-55"), 3: ("0", "=mlx5_0", "24-31,56-63")}
for r, (gpu, hca, cpus) in want.items():
    env = ranks[r]["env"]
    got = (env["CUDA_VISIBLE_DEVICES"], env["NCCL_IB_HCA"], env["DTRAIN_CPUSET"])
    if got != (gpu, hca, cpus):
        sys.exit(f"FAIL: Polaris rank {r}: expected {(gpu, hca, cpus)}, got {got}")
print("ok: Polaris-like reversal and NIC sharing")
PY
    ;;
  exec)
    # The rank's environment reaches the command, which replaces dtrain bind.
    out=$(timeout 120 "$@" "$dtrain" bind --topology "$topologies/polaris-like-4xa100.xml" -- \
      sh -c 'echo "rank=$DTRAIN_LOCAL_RANK/$DTRAIN_LOCAL_SIZE gpu=$CUDA_VISIBLE_DEVICES hca=$NCCL_IB_HCA order=$CUDA_DEVICE_ORDER"')
    echo "$out"
    for want in "rank=0/4 gpu=3 hca==mlx5_0" "rank=1/4 gpu=2 hca==mlx5_1" \
      "rank=2/4 gpu=1 hca==mlx5_1" "rank=3/4 gpu=0 hca==mlx5_0"; do
      grep -qx "$want order=PCI_BUS_ID" <<<"$out" || fail "expected a line [$want order=PCI_BUS_ID]"
    done
    # The command's exit status is dtrain bind's.
    set +e
    bare "$dtrain" bind --local-rank 0 --local-size 1 --topology "$topologies/pascal-2xp100.xml" \
      -- sh -c 'exit 7'
    status=$?
    bare "$dtrain" bind --local-rank 0 --local-size 1 -- /nonexistent/program 2>/dev/null
    missing=$?
    set -e
    [[ $status == 7 ]] || fail "exit status: expected 7, got $status"
    [[ $missing == 127 ]] || fail "missing command: expected exit 127, got $missing"
    echo "ok: environment exported, command exec'd, exit status passed through"
    ;;
  live)
    # This machine's topology: the CPU affinity is really applied.
    cores=$(bare "$dtrain" topo --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["node"]["cores"])')
    n=$((cores >= 2 ? 2 : 1))
    expected=$(bare "$dtrain" topo --ranks-per-node "$n" --json)
    out=$(timeout 120 "$@" -n "$n" "$dtrain" bind -- \
      sh -c 'echo "$DTRAIN_LOCAL_RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"')
    echo "$out"
    python3 - "$out" "$expected" "$n" <<'PY'
import json, sys
out, expected, n = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
got = dict(line.split() for line in out.splitlines() if line.strip())
for r in range(n):
    want = expected["ranks"][r]["cpus"]
    if got.get(str(r)) != want:
        sys.exit(f"FAIL: rank {r}: Cpus_allowed_list expected {want}, got {got.get(str(r))}")
print(f"ok: {n} ranks bound on this machine")
PY
    ;;
  errors)
    expect_error() {  # needle command...
      local needle=$1 out status
      shift
      set +e
      out=$(bare "$@" 2>&1)
      status=$?
      set -e
      [[ $status == 2 ]] || fail "$*: expected exit 2, got $status: $out"
      [[ $out == *"$needle"* ]] || fail "$*: expected the message to contain [$needle], got [$out]"
    }
    polaris=$topologies/polaris-like-4xa100.xml
    expect_error "expected one of OMPI_COMM_WORLD_RANK, PALS_RANKID, PMI_RANK, SLURM_PROCID (srun" \
      "$dtrain" bind --topology "$polaris" -- true
    expect_error "dtrain: topology: /nonexistent.xml: cannot open it" \
      "$dtrain" topo --topology /nonexistent.xml
    expect_error "truncated.xml:5: not well-formed XML: " \
      "$dtrain" topo --topology "$topologies/bad/truncated.xml"
    expect_error "no-allowed-pu.xml: no cores found" \
      "$dtrain" topo --topology "$topologies/bad/no-allowed-pu.xml"
    expect_error 'dtrain: affinity: --gpu: unknown policy "nearest"; expected closest, identity or none' \
      "$dtrain" topo --topology "$polaris" --gpu nearest
    expect_error 'dtrain: affinity: --nic: unknown policy "fast"' \
      "$dtrain" bind --local-rank 0 --local-size 1 --topology "$polaris" --nic fast -- true
    expect_error "40 ranks per node but only 36 cores" \
      "$dtrain" topo --topology "$topologies/quartz-nogpu.xml" --ranks-per-node 40
    expect_error "--cpus-allowed: expected a list such as 0-3,8" \
      "$dtrain" topo --topology "$polaris" --cpus-allowed 3-
    expect_error "does not say where this process sits on the node" \
      env PMI_RANK=0 PMI_SIZE=2 "$dtrain" bind --topology "$polaris" -- true
    # Flag values are dtrain's to read: no "Could not convert: --local-rank = a", no empty path
    # silently meaning this machine.
    expect_error 'dtrain: bind: --local-rank: expected an integer from 0 to 1023, got "a"' \
      "$dtrain" bind --local-rank a --local-size 1 --topology "$polaris" -- true
    expect_error 'dtrain: bind: --local-size: expected an integer from 1 to 1024, got "0x2"' \
      "$dtrain" bind --local-rank 0 --local-size 0x2 --topology "$polaris" -- true
    expect_error 'dtrain: topo: --ranks-per-node: expected an integer from 1 to 1024, got "0"' \
      "$dtrain" topo --topology "$polaris" --ranks-per-node 0
    expect_error 'dtrain: topo: --topology: expected an hwloc XML file (lstopo --of xml), got an empty value' \
      "$dtrain" topo --topology ""
    expect_error 'dtrain: bind: --topology: expected an hwloc XML file (lstopo --of xml), got an empty value' \
      "$dtrain" bind --local-rank 0 --local-size 1 --topology "" -- true
    out=$(bare "$dtrain" topo --topology "$topologies/bad/no-allowed-pu.xml" 2>&1) || true
    [[ $out != *"hwloc: Topology does not contain any PU"* ]] || fail "hwloc's own message reached the user: $out"
    echo "ok: bad input exits 2 with a message naming it"
    ;;
  *)
    fail "unknown mode $mode"
    ;;
esac
