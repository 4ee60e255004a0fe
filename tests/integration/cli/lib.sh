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
