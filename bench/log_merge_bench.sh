#!/usr/bin/env bash
# `dtrain logs` against `LC_ALL=C sort -m -s -k1,1` on the same rank logs (issue 10): by default
# 256 files x 40,000 lines (about 1 GB), generated into a temporary directory that is deleted at
# the end. Checks that both produce the same bytes (dtrain logs --no-prefix), then times R runs of
# each with output to /dev/null and reports the median wall time, the ratio and the peak RSS
# (GNU time's %M). Prints numbers only; never fails on a slow machine.
#   log_merge_bench.sh DTRAIN GEN [FILES] [LINES] [RUNS]
set -euo pipefail
dtrain=$(realpath "$1") gen=$(realpath "$2") files=${3:-256} lines=${4:-40000} runs=${5:-3}
[[ -x /usr/bin/time ]] || { echo "log_merge_bench: /usr/bin/time (GNU time) is required" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-log-merge-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/run" "$work/sorttmp"
"$gen" "$work/run" "$files" "$lines"
bytes=$(cat "$work"/run/rank-*.log | wc -c)
cat "$work"/run/rank-*.log > /dev/null  # warm the page cache

# Same output order: the merge without prefixes is byte-identical to sort -m -s -k1,1 over the
# files in rank order.
a=$("$dtrain" logs --no-prefix "$work/run" | md5sum)
b=$(cd "$work/run" && LC_ALL=C TMPDIR="$work/sorttmp" sort -m -s -k1,1 rank-*.log | md5sum)
same=no
[[ $a == "$b" ]] && same=yes

measure() {  # label command... -> "wall_s rss_kib" per run, appended to $work/label
  local label=$1
  shift
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f "%e %M" -o "$work/time.out" "$@" > /dev/null
    cat "$work/time.out" >> "$work/$label"
  done
}
cd "$work/run"
export LC_ALL=C TMPDIR="$work/sorttmp"
measure sort sort -m -s -k1,1 rank-*.log
measure logs "$dtrain" logs "$work/run"
measure noprefix "$dtrain" logs --no-prefix "$work/run"

median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
col() { awk -v c="$2" '{print $c}' "$work/$1" | median; }
sort_s=$(col sort 1)
echo "# log_merge_bench: $files files x $lines lines, $bytes bytes, $(nproc) CPUs, $runs runs each, output to /dev/null"
echo "# same bytes as sort -m -s -k1,1 (dtrain logs --no-prefix): $same"
printf '%-52s %10s %14s %12s\n' "# command" "wall s" "sort / this" "peak RSS MiB"
for label in sort logs noprefix; do
  case $label in
    sort) cmd="LC_ALL=C sort -m -s -k1,1 rank-*.log" ;;
    logs) cmd="dtrain logs RUNDIR" ;;
    noprefix) cmd="dtrain logs --no-prefix RUNDIR" ;;
  esac
  s=$(col "$label" 1)
  rss=$(col "$label" 2)
  printf '%-52s %10s %14s %12s\n' "$cmd" "$s" "$(awk -v a="$sort_s" -v b="$s" 'BEGIN {printf "%.2f", a / b}')" \
    "$(awk -v k="$rss" 'BEGIN {printf "%.1f", k / 1024}')"
done
[[ $same == yes ]] || { echo "log_merge_bench: the outputs differ" >&2; exit 1; }
