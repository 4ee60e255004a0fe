#!/usr/bin/env bash
# dtrain submit on the local site: the run directory, each rank's timestamped log and
# environment, exit status passthrough, --dry-run, and spec errors.
set -euo pipefail
DTRAIN=$1
source "$(dirname "$0")/lib.sh"
enter_workdir cli-test

echo "== a 4-rank job: run directory, rank logs, rank environment, verbatim arguments"
cat > job.yaml <<YAML
name: envcheck
ranks_per_node: 4
command: [bash, -c, 'echo "rank=\$DTRAIN_RANK size=\$DTRAIN_WORLD_SIZE local=\$DTRAIN_LOCAL_RANK/\$DTRAIN_LOCAL_SIZE run_dir=\$DTRAIN_RUN_DIR greeting=\$GREETING"; printf "arg=%s\n" "\$1" >&2', x, "\$(touch $work/pwned) a'b\"c"]
env:
  GREETING: hello world
YAML
out=$("$DTRAIN" submit job.yaml) || fail "submit exited $?: $out"
run_dir=$(ls -d "$work"/runs/envcheck-*)
expect_contains "$out" "run directory $run_dir" "submit output"
for f in job.yaml launch.sh plan.json rank-00000.log rank-00001.log rank-00002.log rank-00003.log; do
  [[ -f "$run_dir/$f" ]] || fail "expected $run_dir/$f"
done
cmp job.yaml "$run_dir/job.yaml" || fail "run directory's job.yaml differs from the spec"
[[ ! -e "$work/pwned" ]] || fail "a command word was executed by the shell"
for r in 0 1 2 3; do
  log="$run_dir/rank-0000$r.log"
  expect_eq 2 "$(rank_output "$log" | wc -l)" "lines of the command's output in $log"
  expect_eq 4 "$(wc -l < "$log")" "line count of $log (with run-rank's start and exit lines)"
  expect_contains "$(head -1 "$log")" " dtrain: rank $r of 4 started on $(hostname) (local rank $r of 4, pid " "$log first line"
  expect_contains "$(tail -1 "$log")" " dtrain: rank $r exited with status 0" "$log last line"
  while IFS= read -r line; do
    [[ "$line" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z\  ]] ||
      fail "$log: expected an RFC 3339 UTC timestamp with microseconds, got [$line]"
  done < "$log"
  expect_contains "$(cat "$log")" "rank=$r size=4 local=$r/4 run_dir=$run_dir greeting=hello world" "$log"
  expect_contains "$(cat "$log")" "arg=\$(touch $work/pwned) a'b\"c" "$log"
done
python3 - "$run_dir/plan.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
assert plan["world_size"] == 4, plan
assert [r["rank"] for r in plan["ranks"]] == [0, 1, 2, 3], plan["ranks"]
assert plan["job"]["name"] == "envcheck"
assert plan["env"]["GREETING"] == "hello world"
PY

echo "== the job's exit status is submit's"
cat > fail.yaml <<'YAML'
name: failing
ranks_per_node: 2
command: [bash, -c, 'if [ "$DTRAIN_RANK" = 1 ]; then echo "rank 1 fails" >&2; exit 3; fi']
YAML
submit_expecting 3 fail.yaml "exit status of a job whose rank 1 exits 3"
expect_contains "$(cat runs/failing-*/rank-00001.log)" "rank 1 fails" "rank 1 log"
expect_contains "$(tail -1 runs/failing-*/rank-00001.log)" "dtrain: rank 1 exited with status 3" "rank 1 exit line"
# Issue 22, item 32: the summary names the rank that failed, as `dtrain logs --first-error` does.
expect_contains "$(cat fail.out)" "dtrain: first failure: rank 1 on $(hostname) exited with status 3" "submit summary"
expect_contains "$(cat fail.out)" "(details: dtrain logs --first-error $work/runs/failing-" "submit summary"
# Issue 35, item 5: dtrain's summary comes after the launcher's own banner (Open MPI's "Primary
# job terminated normally, but 1 process returned a non-zero exit code"), never inside it: it is
# printed once mpirun has exited.
[[ $(tail -2 fail.out | head -1) == "dtrain: first failure: "* &&
  $(tail -1 fail.out) == "dtrain: job "*" FAILED (exit status 3)"* ]] ||
  fail "expected the summary as the last two lines of the failed job's output, got: $(cat fail.out)"

echo "== a Python traceback is quoted by its exception line (issue 22, item 21)"
cat > traceback.yaml <<'YAML'
name: traceback
ranks_per_node: 2
command: [python3, -c, 'import os, time; os.environ["DTRAIN_RANK"] == "1" and exec("raise ValueError(\"boom\")"); time.sleep(30)']
YAML
submit_expecting 1 traceback.yaml "exit status of a job whose rank 1 raised"
expect_contains "$(cat traceback.out)" "dtrain: first failure: rank 1 on $(hostname) exited with status 1: ValueError: boom" "submit summary"
report=$("$DTRAIN" logs --first-error runs/traceback-*)
expect_contains "$report" "): ValueError: boom" "--first-error quotes the exception line"
[[ $report != *"error line ("*"): Traceback"* ]] || fail "--first-error quoted the traceback header: $report"

echo "== Python ranks are unbuffered unless the spec says otherwise (issue 22, item 19)"
cat > unbuffered.yaml <<'YAML'
name: unbuffered
ranks_per_node: 1
command: [python3, -c, 'import os, time; print("first", os.environ.get("PYTHONUNBUFFERED")); time.sleep(1.5); print("second")']
YAML
env -u PYTHONUNBUFFERED "$DTRAIN" submit unbuffered.yaml > /dev/null || fail "submit unbuffered.yaml exited $?"
python3 - runs/unbuffered-*/rank-00000.log <<'PY'
import datetime, sys
lines = [l.split(" ", 1) for l in open(sys.argv[1]).read().splitlines() if " dtrain: rank " not in l]
assert [t for _, t in lines] == ["first 1", "second"], lines
when = [datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")) for ts, _ in lines]
assert (when[1] - when[0]).total_seconds() > 1.0, ("both lines stamped at one flush", lines)
PY

echo "== a job whose ranks ask for a requeue (exit 85) is stopped, not failed (issue 35, item 5)"
cat > requeue.yaml <<'YAML'
name: requeue
ranks_per_node: 2
command: [bash, -c, 'exit 85']
YAML
submit_expecting 85 requeue.yaml "exit status of a job whose ranks asked for a requeue"
expect_contains "$(cat requeue.out)" "stopped for a requeue (exit status 85): the ranks saved a checkpoint and asked to be run again" "submit summary"
[[ $(cat requeue.out) != *"first failure"* && $(cat requeue.out) != *FAILED* ]] ||
  fail "a requeue was reported as a failure: $(cat requeue.out)"

echo "== a job stopped at its walltime blames no rank (issue 22, item 20)"
cat > walltime.yaml <<'YAML'
name: walltime
ranks_per_node: 2
walltime: "00:00:03"
command: [bash, -c, 'echo started; exec sleep 60']
YAML
submit_expecting 124 walltime.yaml "exit status of a job stopped at its walltime"
expect_contains "$(cat walltime.out)" "FAILED (exit status 124): its walltime (00:00:03) was reached" "submit summary"
expect_contains "$(cat walltime.out)" "dtrain: first failure: no rank failed on its own" "submit summary"
# Every exit line there is says SIGTERM. Open MPI follows it with SIGKILL after a second, which
# can take a rank's logger before its exit line (about 1 run in 3 here): the logs alone then
# cannot tell a stopped rank from a silent one, but submit recorded the walltime in job-end.jsonl,
# so --first-error blames no rank either way.
for log in runs/walltime-*/rank-*.log; do
  if grep -q ' dtrain: rank [0-9]* \(exited\|was killed\)' "$log"; then
    expect_contains "$(tail -1 "$log")" "was killed by signal 15 (SIGTERM)" "$log's exit line at the walltime"
  fi
done
expect_contains "$(cat runs/walltime-*/job-end.jsonl)" '{"v":1,"status":124,"walltime_reached":true}' "job-end.jsonl"
report=$("$DTRAIN" logs --first-error runs/walltime-*)
expect_contains "$report" "no rank failed on its own: 2 of 2 ranks were stopped by the launcher when the job reached its walltime (as \`dtrain submit\` recorded)" "--first-error at the walltime"
[[ $report != *culprit* ]] || fail "--first-error blamed a rank for the walltime: $report"

echo "== --dry-run prints the script and writes nothing"
rm -rf runs
script=$("$DTRAIN" submit --dry-run job.yaml)
expect_contains "$script" "#!/usr/bin/env bash" "dry-run output"
expect_contains "$script" "export GREETING='hello world'" "dry-run output"
[[ ! -e runs ]] || fail "--dry-run created $(ls -R runs)"

echo "== a bad spec exits 2 naming file, line and field, and launches nothing"
printf 'name: x\ncommand: [true]\nranks_per_node: four\nnodez: 1\n' > bad.yaml
err=$("$DTRAIN" submit bad.yaml 2>&1) && status=0 || status=$?
expect_eq 2 "$status" "exit status for a bad spec"
expect_contains "$err" 'bad.yaml:3: ranks_per_node: expected an integer from 1 to 1024, got "four"' "error"
expect_contains "$err" 'bad.yaml:4: nodez: unknown field; did you mean "nodes"?' "error"
[[ ! -e runs ]] || fail "a bad spec created a run directory"

err=$("$DTRAIN" submit missing.yaml 2>&1) && status=0 || status=$?
expect_eq 2 "$status" "exit status for a missing spec"
expect_contains "$err" "dtrain: missing.yaml: cannot open it: No such file or directory; expected a job spec (YAML)" "error"

echo "== run-rank outside a launcher names the variables it looked for"
err=$(env -u OMPI_COMM_WORLD_RANK -u SLURM_PROCID -u PMI_RANK -u PALS_RANKID "$DTRAIN" run-rank --run-dir x -- true 2>&1) && status=0 || status=$?
expect_eq 2 "$status" "run-rank exit status without a launcher"
expect_contains "$err" "OMPI_COMM_WORLD_RANK, PALS_RANKID, PMI_RANK, SLURM_PROCID is set" "error"
echo "== framework torch on the local site: rendezvous variables and a core per rank"
cat > torch.yaml <<'YAML'
name: torchcheck
ranks_per_node: 2
framework: torch
command: [bash, -c, 'echo "$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $NODE_RANK $MASTER_ADDR $MASTER_PORT $DTRAIN_CPUSET"']
YAML
out=$("$DTRAIN" submit torch.yaml) || fail "submit exited $?: $out"
run_dir=$(ls -d "$work"/runs/torchcheck-*)
read -r _ _ _ _ _ _ port0 cpus0 < <(rank_output "$run_dir/rank-00000.log" | cut -d' ' -f2-)
read -r _ _ _ _ _ _ port1 cpus1 < <(rank_output "$run_dir/rank-00001.log" | cut -d' ' -f2-)
for r in 0 1; do
  line=$(rank_output "$run_dir/rank-0000$r.log" | cut -d' ' -f2-6)
  expect_eq "$r $r 2 2 0" "$line" "rank $r RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE NODE_RANK"
  expect_eq "$(hostname)" "$(rank_output "$run_dir/rank-0000$r.log" | cut -d' ' -f7)" "rank $r MASTER_ADDR"
done
expect_eq "$port0" "$port1" "MASTER_PORT agrees across ranks"
((port0 >= 61000 && port0 < 65536)) || fail "MASTER_PORT $port0 outside 61000-65535"
[[ -n $cpus0 && -n $cpus1 && $cpus0 != "$cpus1" ]] || fail "expected one distinct cpuset per rank, got [$cpus0] [$cpus1]"

echo "== a MASTER_PORT/MASTER_ADDR the spec sets wins over framework torch's (issue 22, item 18)"
cat > fixedport.yaml <<'YAML'
name: fixedport
ranks_per_node: 2
framework: torch
env: {MASTER_PORT: "29533", MASTER_ADDR: "127.0.0.1"}
command: [bash, -c, 'echo "$RANK $MASTER_ADDR $MASTER_PORT"']
YAML
out=$("$DTRAIN" submit fixedport.yaml) || fail "submit exited $?: $out"
run_dir=$(ls -d "$work"/runs/fixedport-*)
for r in 0 1; do
  expect_eq "$r 127.0.0.1 29533" "$(rank_output "$run_dir/rank-0000$r.log" | cut -d' ' -f2-)" "rank $r RANK MASTER_ADDR MASTER_PORT"
done
echo "PASS"
