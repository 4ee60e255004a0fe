#!/usr/bin/env bash
# dtrain plan: the node-level rank map from the site profile's topology (the Polaris GPU reversal
# falls out of it), from --topology, from a user profile's relative path; and its errors.
set -euo pipefail
DTRAIN=$1
SRC=$2
source "$(dirname "$0")/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-plan-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "== the built-in polaris profile names its node topology"
out=$("$DTRAIN" plan "$SRC/tests/fixtures/golden/polaris/job.yaml")
expect_contains "$out" "# on every node (" "plan output"
expect_contains "$out" "0     3     0000:c7:00.0  3,0,1,2  0     0-7,32-39    mlx5_0" "local rank 0"
expect_contains "$out" "3     0     0000:07:00.0  0,1,2,3  3     24-31,56-63  mlx5_0" "local rank 3"
gpus=$("$DTRAIN" plan --json "$SRC/tests/fixtures/golden/polaris/job.yaml" |
  python3 -c 'import json,sys; print([r["gpus"] for r in json.load(sys.stdin)["node_rank_map"]["ranks"]])')
expect_eq "[[3], [2], [1], [0]]" "$gpus" "GPUs of local ranks 0-3 in --json"

echo "== --topology, and a user profile's topology relative to the profile"
cp "$SRC/tests/fixtures/topologies/tioga-cray-ex235a-8xmi250x.xml" node.xml
mkdir site
cat > site/mysite.yaml <<YAML
name: mysite
scheduler: slurm
launcher: srun
topology: ../node.xml
YAML
cat > job.yaml <<YAML
name: j
site: $work/site/mysite.yaml
ranks_per_node: 8
command: [./train]
YAML
out=$("$DTRAIN" plan job.yaml)
expect_contains "$out" "# on every node ($work/node.xml)" "user profile topology"
out=$("$DTRAIN" plan job.yaml --topology "$SRC/tests/fixtures/topologies/polaris-like-4xa100.xml" --set ranks_per_node=4)
expect_contains "$out" "polaris-like-4xa100.xml)" "--topology wins"

echo "== errors: a missing topology, more ranks than the node holds"
rm node.xml
set +e
out=$("$DTRAIN" plan job.yaml 2>&1)
status=$?
set -e
expect_eq 2 "$status" "exit status ($out)"
expect_contains "$out" "dtrain: site mysite: topology ../node.xml: no such file; expected an hwloc XML at $work/node.xml" "message"
set +e
out=$("$DTRAIN" plan "$SRC/tests/fixtures/golden/polaris/job.yaml" --set ranks_per_node=100 2>&1)
status=$?
set -e
expect_eq 2 "$status" "exit status ($out)"
expect_contains "$out" "100 ranks per node" "message"
echo PASS
