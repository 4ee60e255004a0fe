#!/usr/bin/env bash
# The run directory's readers at scale (issue 47; docs/benchmarks.md, "Records at scale"):
# gen_run_dir writes a RANKS x STEPS run directory at the default detail (interval records) and
# one of FULL_RANKS x STEPS at full detail (DTRAIN_RECORDS=steps: a step record and two heartbeats
# per step; FULL_RANKS=0 leaves it out) into a temporary directory, deleted at the end. Each of
# `stats`, `report`, `timeline`, `logs --first-error` and `logs --hang` reads each directory under
# GNU time: the wall seconds and the maximum RSS, with the machine's load (uptime) beside them.
# Fails when a reader of the default-detail directory takes over 60 s or 1 GiB, or when one exits
# with an error (full detail: times only). With BASE, another dtrain (the previous version), each
# reader runs with both binaries alternately, BASE first, and both figures are printed; with
# FULL_BASE=0, BASE runs only on the default-detail directory (at full detail the previous version
# took some 10 minutes a reader at 1,024 ranks). READERS (a comma-separated list) picks readers.
#   readers_at_scale.sh DTRAIN GEN [RANKS] [STEPS] [FULL_RANKS] [BASE]
set -euo pipefail
dtrain=$(realpath "$1") gen=$(realpath "$2") ranks=${3:-1024} steps=${4:-50000} full=${5:-0}
base=${6:+$(realpath "$6")}
[[ -x /usr/bin/time ]] || { echo "readers_at_scale: /usr/bin/time (GNU time) is required" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-readers-at-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
readonly max_seconds=60 max_kib=$((1024 * 1024))
status=0

# One reader of DIR by BIN: prints "WALL_S RSS_KIB CPU_S" (CPU_S: user and system seconds, what
# the reader would take of the cores on a quiet machine), or exits non-zero with the reader's error.
measure() {  # bin dir what...
  local bin=$1 dir=$2
  shift 2
  local out
  if [[ $1 == report ]]; then out=(-o "$work/report.html"); elif [[ $1 == timeline ]]; then
    out=(-o "$work/trace.json"); else out=(); fi
  if ! /usr/bin/time -f "%e %M %U %S" -o "$work/time.out" "$bin" "$@" "$dir" "${out[@]}" \
    > /dev/null 2> "$work/err"; then
    echo "readers_at_scale: $bin $* $dir failed: $(tail -3 "$work/err")" >&2
    return 1
  fi
  awk '{printf "%s %s %.1f\n", $1, $2, $3 + $4}' "$work/time.out"
}

run_set() {  # detail ranks
  local detail=$1 n=$2 dir=$work/$1-$2
  local started=$SECONDS
  "$gen" "$dir" "$n" "$steps" "$detail"
  echo "# $detail: $n ranks x $steps steps, $(du -sb "$dir" | cut -f1) bytes" \
    "($(cat "$dir"/rank-*.jsonl | wc -c) of metric records), written in $((SECONDS - started)) s"
  cat "$dir"/rank-*.jsonl > /dev/null  # the page cache, as for every reader after the first
  local reader readers
  IFS=, read -r -a readers <<< "${READERS:-stats,report,timeline,logs --first-error,logs --hang}"
  for reader in "${readers[@]}"; do
    local line="$detail $n x $steps: $reader:" new base_figures=""
    # shellcheck disable=SC2086
    if [[ -n $base ]] && [[ $detail == intervals || ${FULL_BASE:-1} != 0 ]]; then
      if base_figures=$(measure "$base" "$dir" $reader); then
        base_figures=$(awk '{printf "; before: %.1f s, %.0f MiB, %.1f s CPU", $1, $2 / 1024, $3}' <<< "$base_figures")
      else
        base_figures="; before: failed"
      fi
    fi
    # shellcheck disable=SC2086
    if ! new=$(measure "$dtrain" "$dir" $reader); then
      status=1
      continue
    fi
    read -r wall kib cpu <<< "$new"
    echo "$line $(awk -v w="$wall" -v k="$kib" -v c="$cpu" 'BEGIN {printf "%.1f s, %.0f MiB, %.1f s CPU", w, k / 1024, c}')$base_figures; load $(uptime | sed 's/.*load average: //')"
    if [[ $detail == intervals ]] && { awk -v w="$wall" -v m="$max_seconds" 'BEGIN {exit !(w > m)}' ||
      ((kib > max_kib)); }; then
      echo "readers_at_scale: FAIL: $reader took $wall s and $kib KiB; expected at most $max_seconds s and $max_kib KiB" >&2
      status=1
    fi
  done
  rm -rf "$dir"
}

run_set intervals "$ranks"
((full > 0)) && run_set steps "$full"
exit $status
