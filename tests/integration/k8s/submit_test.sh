#!/usr/bin/env bash
# dtrain plan/submit for site k8s without a cluster: the manifest in `dtrain plan`, the message
# naming kubectl when it is not on PATH, and, with a stand-in kubectl that records its arguments,
# the command line, the run directory kept as the record of the job, and kubectl's own error
# quoted when it refuses the job (the run directory is then removed).
set -euo pipefail
DTRAIN=$1
SRC=$2
source "$SRC/tests/integration/cli/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-k8s-submit.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
cp "$SRC/examples/pi/k8s.yaml" job.yaml

echo "== dtrain plan shows the MPIJob"
out=$("$DTRAIN" plan job.yaml)
expect_contains "$out" "# site k8s (Kubernetes with the Kubeflow MPI Operator" "plan header"
expect_contains "$out" "# manifest (kubectl create -f)" "plan heading"
expect_contains "$out" "kind: MPIJob" "manifest"
expect_contains "$out" "     3      1      1" "rank 3 on node 1"

echo "== no kubectl on PATH"
mkdir empty
set +e
out=$(PATH="$work/empty" "$DTRAIN" submit job.yaml 2>&1)
status=$?
set -e
expect_eq 2 "$status" "exit status ($out)"
expect_contains "$out" "dtrain: kubectl not found on PATH; expected kubectl configured for a cluster with the Kubeflow MPI Operator to submit to site k8s" "message"
[[ ! -e runs ]] || [[ -z $(ls -A runs) ]] || fail "a run directory was left behind: $(ls -A runs)"

echo "== a stand-in kubectl that accepts the job"
mkdir bin
cat > bin/kubectl <<'SH'
#!/usr/bin/env bash
printf '%s\n' "$@" > "$KUBECTL_LOG"
if [[ -n ${KUBECTL_FAIL:-} ]]; then
  echo 'Error from server (AlreadyExists): error when creating "mpijob.yaml": mpijobs.kubeflow.org "pi" already exists' >&2
  exit 1
fi
echo "mpijob.kubeflow.org/pi"
SH
chmod +x bin/kubectl
export KUBECTL_LOG=$work/kubectl.args
out=$(PATH="$work/bin:$PATH" "$DTRAIN" submit job.yaml)
expect_contains "$out" "dtrain: submitted mpijob.kubeflow.org/pi to kubernetes (site k8s, 4 ranks), record in $work/runs/pi-" "submit output"
expect_contains "$out" "kubectl logs -f job/pi-launcher" "how to follow it"
run_dir=$(ls -d runs/pi-*)
args=$(paste -sd' ' kubectl.args)
expect_eq "create -f $work/$run_dir/mpijob.yaml -o name" "$args" "kubectl arguments"
for f in job.yaml mpijob.yaml plan.json; do
  [[ -f $run_dir/$f ]] || fail "$run_dir/$f missing"
done
expect_eq "$("$DTRAIN" submit --dry-run job.yaml)" "$(cat "$run_dir/mpijob.yaml")" "the manifest submitted"
script=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["script"])' "$run_dir/plan.json")
expect_eq "mpijob.yaml" "$script" "plan.json script"

echo "== a run_dir names the pods' directory; the record stays under the submit directory"
rm -rf runs
out=$(PATH="$work/bin:$PATH" "$DTRAIN" submit job.yaml --set run_dir=/proc/not-here/runs)
expect_contains "$out" "record in $work/runs/pi-" "submit output"
grep -q '"DTRAIN_RUN_DIR": "/proc/not-here/runs"' runs/pi-*/plan.json || fail "DTRAIN_RUN_DIR in plan.json"

echo "== kubectl refuses the job"
rm -rf runs
set +e
out=$(KUBECTL_FAIL=1 PATH="$work/bin:$PATH" "$DTRAIN" submit job.yaml 2>&1)
status=$?
set -e
expect_eq 1 "$status" "exit status ($out)"
expect_contains "$out" "-o name\` exited with status 1:" "command line in the message"
expect_contains "$out" 'mpijobs.kubeflow.org "pi" already exists' "kubectl's output in the message"
[[ -z $(ls -A runs 2>/dev/null) ]] || fail "a run directory was left behind: $(ls -A runs)"

echo "== --wait is refused before anything is submitted"
set +e
out=$(PATH="$work/bin:$PATH" "$DTRAIN" submit --wait job.yaml 2>&1)
status=$?
set -e
expect_eq 2 "$status" "exit status ($out)"
expect_contains "$out" "dtrain: submit: --wait: not supported for site k8s (Kubernetes); follow the job with" "message"

echo "== a name Kubernetes cannot use"
set +e
out=$("$DTRAIN" plan job.yaml --set name=Pi_Run 2>&1)
status=$?
set -e
expect_eq 2 "$status" "exit status ($out)"
expect_contains "$out" "job.yaml: name: the MPI operator names the job's service and pods after it (Pi_Run-worker-1)" "message"
echo PASS
