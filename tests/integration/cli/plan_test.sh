#!/usr/bin/env bash
# dtrain plan: the node-level rank map from the site profile's topology (the Polaris GPU reversal
# falls out of it), from --topology, from a user profile's relative path; and its errors.
set -euo pipefail
DTRAIN=$1
SRC=$2
source "$(dirname "$0")/lib.sh"
enter_workdir plan-test

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
out=$("$DTRAIN" plan job.yaml 2>&1) && status=0 || status=$?
expect_eq 2 "$status" "exit status ($out)"
expect_contains "$out" "dtrain: site mysite: topology ../node.xml: no such file; expected an hwloc XML at $work/node.xml" "message"
out=$("$DTRAIN" plan "$SRC/tests/fixtures/golden/polaris/job.yaml" --set ranks_per_node=100 2>&1) && status=0 || status=$?
expect_eq 2 "$status" "exit status ($out)"
expect_contains "$out" "100 ranks per node" "message"

# Each case: exit status 2 and the message, within 10 s (a FIFO used to block for ever).
expect_refused() {  # message what args...
  local message=$1 what=$2 status
  shift 2
  set +e
  out=$(timeout 10 "$DTRAIN" plan "$@" 2>&1)
  status=$?
  set -e
  expect_eq 2 "$status" "$what: exit status ($out)"
  expect_contains "$out" "$message" "$what: message"
}

echo "== Polaris' queue limits are checked at plan time, naming the field (issue 36, item 4)"
polaris="$SRC/tests/fixtures/golden/polaris-conda/job.yaml"
expect_refused "job.yaml: nodes: expected 10-496 nodes in queue prod on site polaris, got 4" \
  "4 nodes in prod" "$polaris" --set queue=prod
expect_refused "job.yaml: walltime: expected at most 03:00:00 for 12 nodes in queue prod on site polaris (routed to small), got 48:00:00" \
  "48 hours in prod" "$polaris" --set queue=prod --set nodes=12 --set walltime=48:00:00
expect_refused "job.yaml: queue: site polaris has no default queue for 4 nodes and a walltime of 02:00:00" \
  "no default queue fits" "$polaris" --set walltime=02:00:00
out=$("$DTRAIN" plan "$polaris" --set nodes=12 --set walltime=02:00:00) || fail "plan of 12 nodes for 2 hours exited $?"
expect_contains "$out" "#PBS -q prod" "the default queue for 12 nodes and 2 hours"

echo "== invalid UTF-8 is refused where the spec is read: by plan --json and submit alike, no run directory"
printf 'name: bytes\nsite: local\ncommand: [echo, "caf\xe9"]\n' > bytes.yaml
for args in "plan bytes.yaml" "plan --json bytes.yaml" "submit bytes.yaml"; do
  set +e
  out=$(timeout 20 "$DTRAIN" $args 2>&1)
  status=$?
  set -e
  expect_eq 2 "$status" "$args: exit status ($out)"
  expect_contains "$out" 'bytes.yaml:3: command[1]: expected UTF-8 text, got "caf\xe9" (byte \xe9 at offset 3 begins no UTF-8 character)' "$args: message"
  [[ $out != *json.exception* ]] || fail "$args: a raw nlohmann exception: $out"
done
! compgen -G "runs/bytes-*" >/dev/null || fail "submit of a spec with invalid UTF-8 left a run directory: $(ls runs)"

echo "== a profile's filesystems are tokens: no scheduler option rides in on a name"
printf 'name: fs\nscheduler: pbspro\nlauncher: mpiexec\ndefault_filesystems: ["home -A evil"]\n' > site/fs.yaml
expect_refused "site/fs.yaml:4: default_filesystems[0]: expected a filesystem name such as eagle (1 to 64 letters, digits, '_', '-' or '.'), got \"home -A evil\"" \
  "profile filesystems" job.yaml --set site=site/fs.yaml

echo "== a profile's env names are checked like the spec's (they reach export and mpirun -x)"
for scheduler in slurm pbspro pbs cobalt local; do
  cat > site/evil.yaml <<YAML
name: evil
scheduler: $scheduler
launcher: mpirun
env:
  "X;touch $work/PWNED;Y": v
YAML
  expect_refused "site/evil.yaml:5: env.X;touch $work/PWNED;Y: expected a variable name of letters, digits and '_' not starting with a digit" \
    "$scheduler profile env key" job.yaml --set site=site/evil.yaml
done
[[ ! -e $work/PWNED ]] || fail "a profile's env key ran a command"

echo "== variables dtrain sets are refused in a spec's and a profile's env, on every site"
for site in local slurm polaris pbs k8s; do
  expect_refused "--set env={DTRAIN_RUN_DIR: /elsewhere}: env.DTRAIN_RUN_DIR: expected a variable of your own, got \"DTRAIN_RUN_DIR\", which dtrain sets for every rank" \
    "$site spec env" job.yaml --set site=$site --set 'env={DTRAIN_RUN_DIR: /elsewhere}'
done
printf 'name: own\nscheduler: slurm\nlauncher: srun\nenv: {DTRAIN_JOB_ID: "1"}\n' > site/own.yaml
expect_refused "site/own.yaml:4: env.DTRAIN_JOB_ID: expected a variable of your own" "profile env" \
  job.yaml --set site=site/own.yaml

echo "== with --site and --set, errors name the user's file and line, or the argument (issue 22, item 28)"
cat > commented.yaml <<'YAML'
# A job with comments and blank lines, which YAML re-emitted with the overrides would drop.

name: commented

command: [./train]   # the program
affinity:
  cpu: everywhere
YAML
for args in "" "--site pbs" "--set nodes=2" "--site polaris --set env.A=1 --set ranks_per_node=2"; do
  # shellcheck disable=SC2086
  expect_refused "commented.yaml:7: affinity.cpu: expected one of: " "bad field with [$args]" commented.yaml $args
done
expect_refused "--set ranks_per_node=lots: ranks_per_node: expected an integer from 1 to 1024, got \"lots\"" \
  "bad --set value" commented.yaml --set affinity.cpu=numa --set ranks_per_node=lots

echo "== special files as a profile or a topology: refused, never read or waited on"
ln -s /dev/zero site/zero.yaml
expect_refused "dtrain: site/zero.yaml: expected a site profile (.yaml) or a built-in site, got a character device" \
  "profile -> /dev/zero" job.yaml --set site=site/zero.yaml
mkfifo site/fifo.yaml node.fifo
expect_refused "dtrain: site/fifo.yaml: expected a site profile (.yaml) or a built-in site, got a FIFO (named pipe)" \
  "FIFO profile" job.yaml --set site=site/fifo.yaml
expect_refused "dtrain: topology: node.fifo: expected a readable hwloc XML file, got a FIFO (named pipe)" \
  "FIFO topology" job.yaml --topology node.fifo
echo "== the rank map: a line per rank up to 64 ranks, ranges of nodes beyond (issue 29, item 6)"
out=$("$DTRAIN" plan "$SRC/tests/fixtures/golden/slurm/job.yaml")
expect_contains "$out" "# rank map
  rank   node  local
     0      0      0
     1      0      1
     2      1      0
     3      1      1
# GPUs, cores and NICs" "the rank map of 2 nodes x 2 ranks"
start=$(date +%s%N)
out=$("$DTRAIN" plan "$SRC/tests/fixtures/golden/slurm/job.yaml" --set nodes=10000 --set ranks_per_node=4)
end=$(date +%s%N)
echo "# dtrain plan of 10,000 nodes x 4 ranks: $(((end - start) / 1000000)) ms (not asserted)"
expect_contains "$out" ": 10000 node(s) x 4 rank(s)
# rank map: 40000 ranks; n is the node
nodes 0-9999: ranks 4n..4n+3 (0-39999), local ranks 0-3
# GPUs, cores and NICs" "the rank map of 10,000 nodes"
(( $(wc -l <<<"$out") < 200 )) || fail "plan of 10,000 nodes printed $(wc -l <<<"$out") lines"
out=$("$DTRAIN" plan "$SRC/tests/fixtures/golden/slurm/job.yaml" --set nodes=17 --set ranks_per_node=4)
expect_contains "$out" "# rank map: 68 ranks; n is the node
nodes 0-16: ranks 4n..4n+3 (0-67), local ranks 0-3
" "the rank map of 17 nodes x 4 ranks (68, just over 64)"
echo PASS
