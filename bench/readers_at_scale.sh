#!/usr/bin/env bash
# The run directory's readers at scale (issue 47; docs/benchmarks.md, "Records at scale"):
# gen_run_dir writes a RANKS x STEPS run directory at the default detail (interval records) and
# one of FULL_RANKS x STEPS at full detail (DTRAIN_RECORDS=steps: a step record and two heartbeats
# per step; FULL_RANKS=0 leaves it out) into a temporary directory, deleted at the end. Each of
# `stats`, `report`, `timeline`, `logs --first-error` and `logs --hang` reads each directory under
# GNU time: the wall seconds and the maximum RSS, with the machine's load (uptime) beside them.
# Fails when a reader takes over 60 s or 1 GiB (of the full-detail directory: at FULL_CHECK_RANKS,
# default 1,024, or more; smaller ones are timed only), or when one exits with an error. With
# BASE, another dtrain (the previous version), each reader runs with both binaries alternately,
# BASE first, and both figures are printed; with FULL_BASE=0, BASE runs only on the default-detail
# directory (at full detail the previous version took some 10 minutes a reader at 1,024 ranks). READERS (a comma-separated list) picks readers.
# Each report page is then opened in headless Chromium (when installed): its size and the time
# from navigation to the page drawn and laid out (its script's data-rendered, then a forced
# layout) are printed; over 5 MB or 3 s fails, at either detail.
#   readers_at_scale.sh DTRAIN GEN [RANKS] [STEPS] [FULL_RANKS] [BASE]
set -euo pipefail
dtrain=$(realpath "$1") gen=$(realpath "$2") ranks=${3:-1024} steps=${4:-50000} full=${5:-0}
base=${6:+$(realpath "$6")}
[[ -x /usr/bin/time ]] || { echo "readers_at_scale: /usr/bin/time (GNU time) is required" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-readers-at-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
readonly max_seconds=60 max_kib=$((1024 * 1024)) max_page_bytes=$((5 * 1000 * 1000)) max_open_ms=3000
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

# Opens PAGE in headless Chromium with a probe after the page's own script: prints the milliseconds
# from navigation start to the page drawn and laid out, or fails naming what went wrong.
page_open_ms() {  # page
  local page=$1 probed=$work/probed.html
  /usr/bin/python3 - "$page" "$probed" <<'PY'
import sys
text = open(sys.argv[1]).read()
i = text.rfind("</body>")
probe = ("<script>document.body.offsetHeight;"
         "document.body.setAttribute('data-open-ms', performance.now().toFixed(0));</script>")
open(sys.argv[2], "w").write(text[:i] + probe + text[i:])
PY
  local dom
  dom=$(timeout 120 chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$work/chromium-profile" --window-size=1280,900 --dump-dom "file://$probed" \
    2>/dev/null) || { echo "readers_at_scale: chromium could not open $page" >&2; return 1; }
  local body
  body=$(grep -o '<body[^>]*>' <<< "$dom")
  [[ $body == *'data-rendered="yes"'* && $body != *data-js-error* ]] ||
    { echo "readers_at_scale: $page did not render: $body" >&2; return 1; }
  sed -n 's/.*data-open-ms="\([0-9]*\)".*/\1/p' <<< "$body"
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
    if { [[ $detail == intervals ]] || ((n >= ${FULL_CHECK_RANKS:-1024})); } &&
      { awk -v w="$wall" -v m="$max_seconds" 'BEGIN {exit !(w > m)}' || ((kib > max_kib)); }; then
      echo "readers_at_scale: FAIL: $reader took $wall s and $kib KiB; expected at most $max_seconds s and $max_kib KiB" >&2
      status=1
    fi
    if [[ $reader == report ]] && command -v chromium > /dev/null; then
      local bytes ms
      bytes=$(stat -c %s "$work/report.html")
      if ! ms=$(page_open_ms "$work/report.html"); then
        status=1
      else
        echo "$detail $n x $steps: the report page: $bytes bytes, open in Chromium in $ms ms; load $(uptime | sed 's/.*load average: //')"
        if ((bytes > max_page_bytes || ms > max_open_ms)); then
          echo "readers_at_scale: FAIL: the page is $bytes bytes and opened in $ms ms; expected at most $max_page_bytes bytes and $max_open_ms ms" >&2
          status=1
        fi
      fi
    fi
  done
  rm -rf "$dir"
}

run_set intervals "$ranks"
((full > 0)) && run_set steps "$full"
exit $status
