# Helpers for the CLI integration tests: each check says what was expected and what was got.
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

expect_eq() {  # expected actual what
  [[ "$1" == "$2" ]] || fail "$3: expected [$1], got [$2]"
}

expect_contains() {  # haystack needle what
  [[ "$1" == *"$2"* ]] || fail "$3: expected to contain [$2], got [$1]"
}

# Runs COMMAND, which must exit with STATUS and print NEEDLE (stdout and stderr together).
#   expect_status_and_message STATUS NEEDLE COMMAND...
expect_status_and_message() {
  local want=$1 needle=$2 out status
  shift 2
  set +e
  out=$("$@" 2>&1)
  status=$?
  set -e
  expect_eq "$want" "$status" "exit status of $*"
  expect_contains "$out" "$needle" "message of $*"
}

# A scratch directory as the working directory, removed when the test exits (killing first the
# `dtrain submit` whose pid is in submit_pid, if one is still running: submit_and_preempt sets
# it). Sets work. Call it in the test's own shell, not in $(...), or the trap would go with the
# subshell.
#   enter_workdir NAME
enter_workdir() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-$1.XXXXXX")
  submit_pid=
  trap 'leave_workdir' EXIT
  cd "$work"
}
leave_workdir() {
  [[ -z "${submit_pid:-}" ]] || kill "$submit_pid" 2>/dev/null || true
  rm -rf "$work"
}

# `$DTRAIN submit NAME.yaml`, its output in NAME.out and its exit status in status, which must be
# STATUS (the failure quotes the output).
#   submit_expecting STATUS NAME.yaml WHAT
submit_expecting() {
  local out_file=${2%.yaml}.out
  "$DTRAIN" submit "$2" >"$out_file" 2>&1 && status=0 || status=$?
  expect_eq "$1" "$status" "$3 ($(cat "$out_file"))"
}

# examples/NAME/job.yaml, the shipped spec, as ./job.yaml with this build's Python module and the
# example's files by absolute path, so that it runs from a test's work directory.
#   example_job_yaml SRC BUILD NAME
example_job_yaml() {
  local src=$1 build=$2 name=$3
  sed -e "s|PYTHONPATH: build/python|PYTHONPATH: $build/python|" \
      -e "s|examples/$name/|$src/examples/$name/|g" "$src/examples/$name/job.yaml" > job.yaml
  grep -q "PYTHONPATH: $build/python" job.yaml ||
    fail "examples/$name/job.yaml: no PYTHONPATH line to point at the build"
}

# A job's command as a YAML flow list: FIRST (YAML items already, e.g. "/usr/bin/python3,
# train.py"), then each word quoted.
#   yaml_command FIRST WORD...
yaml_command() {
  local out="[$1" w
  shift
  for w in "$@"; do out+=", \"$w\""; done
  echo "$out]"
}

# A rank log without the start and exit lines dtrain run-rank adds around the command's output
# (docs/logs.md): only what the command printed, each line still with its timestamp.
rank_output() {  # log
  grep -vE '^[^ ]+ dtrain: rank [0-9]+ (of [0-9]+ started on |exited with status |was killed by signal )' "$1" || true
}

# Preemption of a local job, as the examples' tests do it: `$DTRAIN submit job.yaml` with
# COMMAND in the background (its output in OUTFILE; its pid in submit_pid while it runs, for the
# caller's cleanup), SIGUSR1 to the launcher once rank 0 logged step 40, then the wait. Sets
# run_dir (the new directory under WORK/runs), status (the submit's exit status) and stopped (its
# output).
#   submit_and_preempt WORK COMMAND OUTFILE
submit_and_preempt() {
  local work=$1 command=$2 outfile=$3 before log="" mpirun_pid
  before=$(ls -d "$work"/runs/* | sort)
  "$DTRAIN" submit job.yaml --set "command=$command" >"$outfile" 2>&1 &
  submit_pid=$!
  for _ in $(seq 1200); do
    run_dir=$(comm -13 <(echo "$before") <(ls -d "$work"/runs/* | sort) | head -1)
    [[ -n "$run_dir" && -f "$run_dir/rank-00000.log" ]] && log="$run_dir/rank-00000.log"
    [[ -n "$log" ]] && grep -q ' step 40 loss' "$log" && break
    sleep 0.1
  done
  [[ -n "$log" ]] && grep -q ' step 40 loss' "$log" || fail "the run to interrupt never reached step 40"
  mpirun_pid=$(pgrep -P "$submit_pid" | head -1)
  [[ -n "$mpirun_pid" ]] || fail "no launcher under dtrain submit ($submit_pid)"
  kill -USR1 "$mpirun_pid"
  set +e
  wait "$submit_pid"
  status=$?
  set -e
  submit_pid=
  stopped=$(cat "$outfile")
}

# After submit_and_preempt, on two ranks: the run stopped with exit status 85 (a requeue request)
# at one step in [40, END), with the checkpoint it names saved under WORK/ck and both ranks'
# metrics up to the step before. Sets stop_step and ckpt.
#   expect_stopped WORK END
expect_stopped() {
  local work=$1 end=$2 r last
  expect_eq 85 "$status" "exit status of the signalled run (85 asks for a requeue): $stopped"
  stop_step=$(sed -n 's/^\(.* \)\?stopping at step \([0-9]*\) on a signal: checkpoint saved in .*/\2/p' <<< "$stopped")
  [[ -n "$stop_step" ]] || fail "expected 'stopping at step N on a signal: checkpoint saved', got: $stopped"
  ((stop_step >= 40 && stop_step < end)) || fail "stopped at step $stop_step; expected 40-$((end - 1))"
  ckpt=$(printf '%s/ck/ckpt-%012d' "$work" "$stop_step")
  [[ -f "$ckpt" ]] || fail "expected the checkpoint $ckpt, found: $(ls "$work/ck")"
  for r in 0 1; do
    last=$(grep '"type":"step"' "$run_dir/rank-0000$r.jsonl" | tail -1 | sed 's/.*"step":\([0-9]*\),.*/\1/')
    expect_eq $((stop_step - 1)) "$last" "last step rank $r recorded before stopping"
  done
}

# Then: `$DTRAIN submit job.yaml` with COMMAND resumes, and the stopped run's losses followed by
# the resumed run's are exactly FULL, the uninterrupted run's (the test's `losses` picks them out
# of an output). Sets out (the resumed run's output).
#   expect_resumed COMMAND FULL
expect_resumed() {
  local command=$1 full=$2 resumed
  out=$("$DTRAIN" submit job.yaml --set "command=$command" 2>&1) || fail "resumed run exited $?: $out"
  resumed=$( (losses "$stopped"; losses "$out") )
  [[ "$resumed" == "$full" ]] ||
    fail "stopped + resumed loss curve differs from the uninterrupted one:"$'\n'"$(diff <(echo "$full") <(echo "$resumed") | head)"
}
