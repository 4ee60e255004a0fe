# Helpers for the multi-node tests (tests/integration/cluster's fixture): each check says what was
# expected and what was got. Source after the cluster's env.sh.
# fail, expect_eq, expect_contains, rank_output.
# shellcheck source=../cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
expect_match() { # haystack regex what
  [[ "$1" =~ $2 ]] || fail "$3: expected to match /$2/, got [$1]"
}

# The value of variable $2 in task $1's lines of `srun -l env` output in file $3.
task_var() {
  sed -n "s/^ *$1: $2=//p" "$3" | head -1
}

# Waits (up to $2 seconds, default 240) for batch job $1 to end; prints its final state. Polling,
# because sbatch --wait checks only every 10 s or so.
wait_job() {
  local job=$1 limit=${2:-240} state="" i
  for ((i = 0; i < limit * 5; i++)); do
    state=$(timeout 10 scontrol show job "$job" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
    sleep 0.2
  done
  echo "$state"
}

# A scratch directory on the file system every node shares (as a cluster's home or scratch file
# system), removed when the test exits.
scratch_dir() {
  local d
  d=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-multinode.XXXXXX")
  chmod 755 "$d"
  echo "$d"
}
