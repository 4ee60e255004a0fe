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

make_workdir() {
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-cli-test.XXXXXX")
  trap 'rm -rf "'"$dir"'"' EXIT
  echo "$dir"
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
