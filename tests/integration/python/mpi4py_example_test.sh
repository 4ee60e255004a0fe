#!/usr/bin/env bash
# examples/mpi4py through `dtrain submit` on the local site, as it is (no dtrain in the program,
# framework: none, 2 ranks, real mpirun): the result equals one process's run (full-batch gradient
# descent: the ranks' gradients add up to the whole set's), the accuracy is near the best possible
# for its overlapping classes, and `dtrain logs` shows both ranks' lines. Exits 77 (ctest: skipped)
# when mpi4py is missing.
#   mpi4py_example_test.sh DTRAIN SRC
set -euo pipefail
DTRAIN=$1 SRC=$2
source "$SRC/tests/integration/cli/lib.sh"
if ! /usr/bin/python3 -c "import mpi4py" 2>/dev/null; then
  echo "SKIP: Debian's python3-mpi4py is not installed for /usr/bin/python3 (scripts/install-deps installs it)"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-mpi4py-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
train=$SRC/examples/mpi4py/train.py
# The shipped spec, with the program by absolute path.
sed "s|examples/mpi4py/train.py|$train|" "$SRC/examples/mpi4py/job.yaml" > job.yaml
grep -q "$train" job.yaml || fail "job.yaml: no command naming examples/mpi4py/train.py"

echo "== one process, no launcher (mpi4py's singleton): the reference"
reference=$(/usr/bin/python3 "$train" | grep '^final loss') || fail "the one-process run printed no final line"
echo "$reference"
expect_contains "$reference" "on 1 ranks" "one-process run"

echo "== dtrain submit, 2 ranks"
out=$("$DTRAIN" submit job.yaml 2>&1) || fail "dtrain submit exited $?: $out"
echo "$out"
final=$(grep -o 'final loss .*' <<< "$out") || fail "no final line in: $out"
expect_eq "${reference/on 1 ranks/on 2 ranks}" "$final" "2 ranks' result against one process's"
accuracy=$(sed 's/.*test accuracy \([0-9.]*\) %.*/\1/' <<< "$final")
/usr/bin/python3 -c "import sys; a = float(sys.argv[1]); assert a >= 75.0, f'test accuracy {a} %; expected >= 75 %'" "$accuracy" ||
  fail "accuracy"

run_dir=$(ls -d "$work"/runs/mpi4py-* | tail -1)
logs=$("$DTRAIN" logs "$run_dir" 2>&1) || fail "dtrain logs exited $?: $logs"
echo "$logs"
for r in 0 1; do
  grep -qE "^[^ ]+ \[$r@[^]]+\] rank $r of 2 on [^:]+: 10000 of 20000 samples$" <<< "$logs" ||
    fail "dtrain logs: expected rank $r's line 'rank $r of 2 on HOST: 10000 of 20000 samples', got: $logs"
  grep -qE "^[^ ]+ \[$r@[^]]+\] dtrain: rank $r exited with status 0$" <<< "$logs" ||
    fail "dtrain logs: expected rank $r's exit line, got: $logs"
done
echo PASS
