#!/usr/bin/env bash
# Runs a command that must fail: passes when it exits non-zero and its output (stdout and stderr
# together) contains TEXT, a fixed string. ctest's PASS_REGULAR_EXPRESSION alone would ignore the
# exit status, and pass a program that printed the message and carried on.
# Usage: expect_failure.sh TEXT COMMAND [ARG...]
set -uo pipefail
text=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if ((rc == 0)); then
  echo "expect_failure: exited 0; expected a non-zero status" >&2
  exit 1
fi
if ! grep -qF -- "$text" <<<"$out"; then
  echo "expect_failure: the output lacks: $text" >&2
  exit 1
fi
echo "ok: exit status $rc, with the message"
