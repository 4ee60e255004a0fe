#!/usr/bin/env bash
# dtrain::init() applying the rank's affinity entry itself (no dtrain bind, no SPANK plugin), under
# a real launcher. affinity_probe prints one line per rank; init_affinity_check.py checks them.
#
#   init_affinity_test.sh PROBE FIXTURE_DIR MODE [N] LAUNCHER ARGS...
# MODE:
#   topology N     DTRAIN_TOPOLOGY=Tioga's export (8 GPUs), N ranks: each rank's GPUs and CPUs as
#                  the expected-locality table predicts; this machine's CPUs untouched
#   preset         DTRAIN_CPUSET already set (a launcher applied the entry): nothing changes
#   off            DTRAIN_AFFINITY=off: nothing is exported
#   bad-value      DTRAIN_AFFINITY=yes: init() fails naming the variable and the accepted values
#   missing-file   DTRAIN_TOPOLOGY names no file: init() fails naming the file
#   live-unbound   this machine, started with --bind-to none: every thread of every rank ends up on
#                  the rank's cpuset (whole cores, disjoint between ranks)
#   live-bound     this machine, the launcher's default binding: left as the launcher set it
#   single         no launcher (run bare): a single process is left alone
#   no-gpu-driver  no launcher, DTRAIN_AFFINITY=on, HWLOC_COMPONENTS_VERBOSE=1: the entry is applied,
#                  and hwloc's GPU runtime components (OpenCL, GL...), which would start a GPU
#                  driver in the process before CUDA_VISIBLE_DEVICES is set, stay disabled (bare,
#                  because mpirun loads hwloc with every component itself)
set -euo pipefail
probe=$1 fixtures=$2 mode=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
topologies=$fixtures/topologies
tioga=$topologies/tioga-cray-ex235a-8xmi250x.xml
n=0
if [[ $mode == topology ]]; then
  n=$1
  shift
fi
launcher=("$@")

fail() {
  echo "init_affinity_test: FAIL: $*" >&2
  exit 1
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT
# launch VAR=VALUE...: the probe under the launcher with only those of the variables below set
# (an enclosing dtrain bind or Slurm step must not leak in); output in $out, exit status in $status.
launch() {
  status=0
  local bare=()
  ((${#launcher[@]})) || bare=(-u PMIX_NAMESPACE -u PMIX_RANK -u DTRAIN_BOOTSTRAP
    -u OMPI_COMM_WORLD_SIZE -u OMPI_COMM_WORLD_RANK -u PMI_SIZE -u PMI_RANK -u SLURM_PROCID)
  timeout -k 10 120 env "${bare[@]}" -u DTRAIN_CPUSET -u DTRAIN_GPUS -u CUDA_VISIBLE_DEVICES \
    -u SLURM_STEP_GPUS -u ROCR_VISIBLE_DEVICES -u HIP_VISIBLE_DEVICES -u DTRAIN_AFFINITY \
    -u DTRAIN_TOPOLOGY "$@" ${launcher[@]+"${launcher[@]}"} "$probe" >"$out" 2>&1 || status=$?
  cat "$out"
  ((status != 124 && status != 137)) || fail "timed out"
}
check() {
  python3 "$here/init_affinity_check.py" "$1" "$out" "${@:2}"
}
expect_line() {
  ((status != 0)) || fail "expected a non-zero exit status"
  grep -qxF "$1" "$out" || fail "expected the line [$1]"
  ! grep -q $'^affinity_probe\t' "$out" || fail "a rank got past init()"
}

case $mode in
  topology)
    launch DTRAIN_TOPOLOGY="$tioga"
    ((status == 0)) || fail "exit status $status; expected 0"
    check topology "$n" "$topologies/expected-locality.tsv" "$tioga"
    ;;
  preset)
    launch DTRAIN_CPUSET=0 DTRAIN_TOPOLOGY="$tioga"
    ((status == 0)) || fail "exit status $status; expected 0"
    check preset
    ;;
  off)
    launch DTRAIN_AFFINITY=off DTRAIN_TOPOLOGY="$tioga"
    ((status == 0)) || fail "exit status $status; expected 0"
    check off
    ;;
  bad-value)
    launch DTRAIN_AFFINITY=yes
    expect_line 'affinity_probe: failed: dtrain: DTRAIN_AFFINITY: unknown value; expected on or off (or unset: apply when a launcher started the process), got "yes"'
    echo "ok: a bad DTRAIN_AFFINITY fails init() with its message"
    ;;
  missing-file)
    launch DTRAIN_TOPOLOGY=/nonexistent/node.xml
    expect_line 'affinity_probe: failed: dtrain: affinity: DTRAIN_TOPOLOGY=/nonexistent/node.xml: topology: /nonexistent/node.xml: cannot open it: No such file or directory; expected a readable hwloc XML file'
    echo "ok: a missing DTRAIN_TOPOLOGY file fails init() naming it"
    ;;
  live-unbound)
    launch
    ((status == 0)) || fail "exit status $status; expected 0"
    # Whole cores as the kernel groups PUs, one line per core ("0,1"), independent of hwloc.
    cores=$(lscpu -p=CPU,CORE | grep -v '^#' |
      awk -F, '{c[$2] = c[$2] (c[$2] == "" ? "" : ",") $1} END {for (k in c) print c[k]}')
    check live-unbound "$cores"
    ;;
  live-bound)
    launch
    ((status == 0)) || fail "exit status $status; expected 0"
    check live-bound
    ;;
  single)
    launch
    ((status == 0)) || fail "exit status $status; expected 0"
    check single
    ;;
  no-gpu-driver)
    # Only meaningful where hwloc has such a component to leave out.
    all=$(HWLOC_COMPONENTS_VERBOSE=1 lstopo-no-graphics --of console 2>&1 >/dev/null |
      grep 'Final list' || true)
    [[ $all =~ [\ ,](opencl|gl|cuda|nvml|rsmi|levelzero)\( ]] ||
      fail "hwloc here enables no GPU runtime component (libhwloc-plugins missing?): [$all]"
    launch DTRAIN_AFFINITY=on HWLOC_COMPONENTS_VERBOSE=1
    ((status == 0)) || fail "exit status $status; expected 0"
    check on
    lists=$(grep 'Final list of enabled discovery components' "$out" || true)
    [[ -n $lists ]] || fail "hwloc listed no components: init() did not load this machine's topology"
    if grep -qE '[ ,](opencl|gl|cuda|nvml|rsmi|levelzero)\(' <<<"$lists"; then
      fail "init() enabled a GPU runtime component: $lists"
    fi
    echo "ok: init() loads this machine's topology without hwloc's GPU runtime components"
    ;;
  *)
    fail "unknown mode $mode"
    ;;
esac
