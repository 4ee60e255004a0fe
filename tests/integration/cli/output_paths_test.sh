#!/usr/bin/env bash
# Where `dtrain report -o`, `timeline -o` and `stats --plot` may write (issue 45 item 2): only a
# regular file or a new path. Before, `report -o` renamed its page over whatever the path was (a
# device node: `-o /dev/null` as root replaced the machine's /dev/null; a FIFO; a symbolic link;
# the run's own plan.json or rank log), `-o DIR` failed with a raw rename error, `timeline -o
# FIFO` blocked forever and `stats --plot plan.json` truncated the run's plan. Each case checks
# the exit status, the message and the bytes left on disk. Synthetic run directories; no job
# runs; seconds. The device case makes its own character device (1,3, as /dev/null) in the test's
# directory, as root only.
#   output_paths_test.sh DTRAIN
set -euo pipefail
DTRAIN=$1
source "$(dirname "$0")/lib.sh"
enter_workdir output-paths

# Bounded: a writer that opens a FIFO waits for a reader forever (exit status 124 then).
dtrain_bounded() {
  timeout 30 "$DTRAIN" "$@"
}

# A two-rank run with step records, heartbeats and a plan.json.
t0=2026-11-22T10:00
mkdir run
for r in 0 1; do
  printf '%s:00.000000Z dtrain: rank %d of 2 started on node0 (local rank %d of 2, pid 1): ./t\n' \
    "$t0" "$r" "$r" >"run/rank-0000$r.log"
  printf '{"v":2,"type":"step","time":1795341601,"rank":%d,"step":0,"samples":8,"seconds":1,"comm_seconds":0}\n' \
    "$r" >"run/rank-0000$r.jsonl"
  printf '{"v":2,"type":"coll","time":1795341601.5,"rank":%d,"seq":0,"op":"allreduce","bytes":8,"phase":"enter"}\n' \
    "$r" >>"run/rank-0000$r.jsonl"
done
printf '{"job":{"name":"t"},"world_size":2}\n' >run/plan.json
cp -a run pristine

# The run's records are as they were, and no temporary file was left anywhere.
expect_run_untouched() {  # WHAT
  diff -r pristine run >/dev/null || fail "$1: the run directory changed: $(diff -r pristine run | head -5)"
  local left
  left=$(find . -name '*.partial-*' | head -3)
  [[ -z "$left" ]] || fail "$1: temporary files left behind: $left"
}

# COMMAND's flag and default file name: report -o report.html, timeline -o trace.json.
for command in report timeline; do
  if [[ $command == report ]]; then name=report.html; else name=trace.json; fi
  echo "== $command: FIFOs, devices and sockets are refused and left alone"
  mkfifo "$command.fifo"
  expect_status_and_message 2 \
    "dtrain: $command: -o $command.fifo: expected a regular file, a new path or a directory (for $name in it), got a FIFO (named pipe); for standard output give -o -" \
    dtrain_bounded "$command" run -o "$command.fifo"
  [[ -p $command.fifo ]] || fail "$command -o FIFO: the FIFO was replaced by $(stat -c %F "$command.fifo")"
  # The same through a symbolic link, and as the default output.
  ln -s "$command.fifo" "$command.fifo-link"
  expect_status_and_message 2 "dtrain: $command: -o $command.fifo-link: expected a regular file, a new path or a directory (for $name in it), got a FIFO (named pipe)" \
    dtrain_bounded "$command" run -o "$command.fifo-link"
  [[ -L $command.fifo-link && -p $command.fifo ]] || fail "$command -o LINK-TO-FIFO: the link or the FIFO was replaced"
  mkfifo "run/$name"
  expect_status_and_message 2 "dtrain: $command: run/$name: expected a regular file, a new path or a directory (for $name in it), got a FIFO (named pipe)" \
    dtrain_bounded "$command" run
  [[ -p run/$name ]] || fail "$command without -o: the FIFO run/$name was replaced"
  rm "run/$name"
  if mknod "$command.null" c 1 3 2>/dev/null; then
    expect_status_and_message 2 "dtrain: $command: -o $command.null: expected a regular file, a new path or a directory (for $name in it), got a character device; for standard output give -o -" \
      dtrain_bounded "$command" run -o "$command.null"
    [[ -c $command.null && $(stat -c %t,%T "$command.null") == 1,3 ]] ||
      fail "$command -o DEVICE: the device node was replaced by $(stat -c %F "$command.null")"
  else
    echo "SKIP: $command -o DEVICE: cannot make a character device here (needs root with CAP_MKNOD)"
  fi
  python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$command.sock"
  expect_status_and_message 2 "got a socket; for standard output give -o -" \
    dtrain_bounded "$command" run -o "$command.sock"
  [[ -S $command.sock ]] || fail "$command -o SOCKET: the socket was replaced"
  expect_run_untouched "$command -o special files"

  echo "== $command: the run's own files are refused by any name"
  for target in run/plan.json run/rank-00000.log run/rank-00001.jsonl run/../run/plan.json; do
    expect_status_and_message 2 \
      "dtrain: $command: -o $target: expected a path that is none of the run's records, got run/${target##*/}, a record of the run directory run" \
      dtrain_bounded "$command" run -o "$target"
  done
  ln -s run/plan.json "$command-plan-link"
  ln run/rank-00000.log "$command-log-hardlink"
  expect_status_and_message 2 "dtrain: $command: -o $command-plan-link: expected a path that is none of the run's records, got run/plan.json" \
    dtrain_bounded "$command" run -o "$command-plan-link"
  expect_status_and_message 2 "dtrain: $command: -o $command-log-hardlink: expected a path that is none of the run's records, got run/rank-00000.log" \
    dtrain_bounded "$command" run -o "$command-log-hardlink"
  [[ -L $command-plan-link ]] || fail "$command -o LINK-TO-PLAN: the link was replaced"
  expect_run_untouched "$command -o the run's records"

  echo "== $command: symbolic links: followed to a regular file, refused to nothing or in a loop"
  mkdir -p pages
  echo old >"pages/$command-real"
  ln -s "pages/$command-real" "$command-link"
  expect_status_and_message 0 "to $command-link" dtrain_bounded "$command" run -o "$command-link"
  [[ -L $command-link ]] || fail "$command -o LINK: the link was replaced by a file"
  [[ $(head -c 20 "pages/$command-real") != old ]] || fail "$command -o LINK: the file it leads to still holds the old bytes"
  ln -s nosuch/x "$command-dangling"
  expect_status_and_message 2 "dtrain: $command: -o $command-dangling: expected a regular file, a new path or a directory (for $name in it), got a symbolic link to nothing (nosuch/x)" \
    dtrain_bounded "$command" run -o "$command-dangling"
  [[ -L $command-dangling && ! -e nosuch ]] || fail "$command -o DANGLING-LINK: the link was replaced or followed"
  ln -s "$command-loop" "$command-loop"
  expect_status_and_message 2 "dtrain: $command: -o $command-loop: expected a regular file, a new path or a directory (for $name in it), got a symbolic link loop (Too many levels of symbolic links)" \
    dtrain_bounded "$command" run -o "$command-loop"
  expect_run_untouched "$command -o links"

  echo "== $command: a directory means DIR/$name; a regular file is replaced, keeping its mode"
  mkdir "$command-dir"
  expect_status_and_message 0 "to $command-dir/$name" dtrain_bounded "$command" run -o "$command-dir"
  [[ -s $command-dir/$name ]] || fail "$command -o DIR wrote no $command-dir/$name"
  expect_status_and_message 0 "to $command-dir/$name" dtrain_bounded "$command" run -o "$command-dir/"
  mkdir -p "$command-dir2/$name"
  expect_status_and_message 2 "dtrain: $command: -o $command-dir2: $command-dir2/$name: expected a regular file, a new path or a directory (for $name in it), got a directory" \
    dtrain_bounded "$command" run -o "$command-dir2"
  echo old >"$command-file"
  chmod 600 "$command-file"
  expect_status_and_message 0 "to $command-file" dtrain_bounded "$command" run -o "$command-file"
  expect_eq 600 "$(stat -c %a "$command-file")" "$command -o FILE: the mode of the replaced file"
  [[ $(head -c 20 "$command-file") != old ]] || fail "$command -o FILE: the file still holds the old bytes"
  expect_status_and_message 2 "dtrain: $command: -o: expected a file path, got an empty value (leave -o out for run/$name)" \
    dtrain_bounded "$command" run -o ""
  expect_run_untouched "$command -o DIR and FILE"

  echo "== $command: -o - is standard output, with the summary on standard error"
  dtrain_bounded "$command" run -o - >"$command.stdout" 2>"$command.stderr" ||
    fail "$command -o - exited $?: $(cat "$command.stderr")"
  expect_contains "$(cat "$command.stderr")" "to standard output" "$command -o - summary"
  if [[ $command == timeline ]]; then
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' timeline.stdout ||
      fail "timeline -o - printed no JSON trace alone: $(head -c 300 timeline.stdout)"
  else
    [[ $(head -c 15 report.stdout) == "<!DOCTYPE html>" && $(tail -c 8 report.stdout) == "</html>"* ]] ||
      fail "report -o - printed no page alone: $(head -c 100 report.stdout) ... $(tail -c 100 report.stdout)"
  fi
  [[ ! -e ./- ]] || fail "$command -o - wrote a file named -"
done

echo "== stats --plot: the same rules, and no default name for a directory"
mkdir plots
expect_status_and_message 2 "dtrain: stats: --plot plots: expected a regular file or a new path, got a directory" \
  dtrain_bounded stats run --plot plots
expect_status_and_message 2 "dtrain: stats: --plot run/plan.json: expected a path that is none of the run's records, got run/plan.json, a record of the run directory run" \
  dtrain_bounded stats run --plot run/plan.json
expect_status_and_message 2 "dtrain: stats: --plot report.fifo: expected a regular file or a new path, got a FIFO (named pipe)" \
  dtrain_bounded stats run --plot report.fifo
expect_status_and_message 2 "dtrain: stats: --plot: expected a file path, got an empty value" \
  dtrain_bounded stats run --plot ""
expect_run_untouched "stats --plot"
expect_status_and_message 0 "total" dtrain_bounded stats run --plot plots/ranks.svg
[[ $(head -c 200 plots/ranks.svg) == *"<svg "* ]] || fail "stats --plot wrote no SVG: $(head -c 100 plots/ranks.svg)"

echo "== a bad command line reads as every dtrain message (issue 45 item 8)"
# CLI11's raw text was printed: "run_dir is required\nRun with --help for more information.",
# "--output: At Most 1 required but received 2", "--restarts: Value a not in range 0 to 1000".
expect_status_and_message 2 "dtrain: report: run_dir is required; see dtrain report --help" \
  dtrain_bounded report
expect_status_and_message 2 \
  "dtrain: report: --output: At Most 1 required but received 2; see dtrain report --help" \
  dtrain_bounded report run -o a.html -o b.html
expect_status_and_message 2 'dtrain: supervise: --restarts: expected an integer from 0 to 1000, got "a"' \
  dtrain_bounded supervise --run-dir run --restarts a -- true
for command in report "report run -o a.html -o b.html" "supervise --restarts a -- true"; do
  set +e
  # shellcheck disable=SC2086
  out=$(dtrain_bounded $command 2>&1)
  set -e
  [[ $out != *"Run with --help"* ]] || fail "$command: CLI11's raw text: $out"
done
echo PASS
