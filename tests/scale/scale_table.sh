#!/usr/bin/env bash
# The emulated-scale table (issue 29): N ranks in nodes of K (emulate_nodes.sh), each doing
# start-up, a barrier, a 4 KiB and a 1 MiB allreduce (scale_probe), for libdtrain on its TCP
# bootstrap beside Open MPI (mpirun --oversubscribe, the same steps on bare MPI) and torch's gloo
# (init_process_group + the same all_reduces), measured in the same run. Prints one row per
# library: the slowest rank's init, barrier and allreduce times, descriptors and peak RSS per
# rank (median and largest), and whether every result was exact.
#
#   scale_table.sh --probe PATH --ranks N --per-node K [--only dtrain,mpi,gloo] [--timeout S]
#
# Every rank shares this machine's cores, so the times are what N processes on 2 cores take:
# compare libraries in one run and sizes by their growth, not as cluster figures. A library that
# cannot start N ranks here (memory: gloo imports torch in every rank) gets a row that says so.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
probe='' ranks='' per_node='' only=dtrain,mpi,gloo timeout=900
while (($#)); do
  case $1 in
    --probe) probe=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --per-node) per_node=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    *) echo "scale_table.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x $probe && -n $ranks && -n $per_node ]] || { echo "scale_table.sh: --probe, --ranks and --per-node are required" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=/usr/bin/python3  # Debian's torch belongs to it

# One row from every rank's scale_probe line in DIR/rank-*.out (awk: no Python needed).
summarize() {
  local name=$1 dir=$2 rc=$3
  cat "$dir"/rank-*.out 2>/dev/null | awk -v name="$name" -v n="$ranks" -v rc="$rc" '
    function median(a, k,   i, j, t) {  # insertion sort of a[1..k]
      for (i = 2; i <= k; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return a[int((k + 1) / 2)]
    }
    /^scale_probe rank=/ && /size=/ {
      for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      k++
      if (v["init_s"] > init) init = v["init_s"]
      if (v["barrier_s"] > bar) bar = v["barrier_s"]
      if (v["ar4k_s"] > a4) a4 = v["ar4k_s"]
      if (v["ar1m_s"] > a1) a1 = v["ar1m_s"]
      fds[k] = v["fds"]; rss[k] = v["rss_kib"] / 1024
      if (v["fds"] > maxfds) maxfds = v["fds"]
      if (v["rss_kib"] / 1024 > maxrss) maxrss = v["rss_kib"] / 1024
      exact += v["exact"]
    }
    END {
      if (k < n) { printf "| %-6s | %5d | did not complete: %d of %d ranks reported (exit %s) |\n", name, n, k, n, rc; exit }
      printf "| %-6s | %5d | %7.2f | %7.3f | %8.4f | %8.4f | %4d / %4d | %5.1f / %5.1f | %s |\n",
        name, n, init, bar, a4, a1, median(fds, k), maxfds, median(rss, k), maxrss,
        exact == n ? "yes" : "NO: " (n - exact) " wrong"
    }'
}

# Whether N ranks of about MIB each fit in the memory available now (80 %, leaving room for the
# rest); else a row that says why it was skipped. Measured per-rank peaks: Open MPI 16 MiB at 64
# ranks, `import torch` alone 224 MiB.
fits() {
  local name=$1 mib=$2 avail
  avail=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
  ((ranks * mib <= avail * 8 / 10)) && return 0
  printf "| %-6s | %5d | skipped: needs about %d MiB (%d ranks x %d MiB), %d MiB available |\n" \
    "$name" "$ranks" $((ranks * mib)) "$ranks" "$mib" "$avail"
  return 1
}

echo "| lib    | ranks | init s  | barrier s | 4 KiB s | 1 MiB s | fds med / max | RSS MiB med / max | exact |"
echo "|---|---|---|---|---|---|---|---|---|"
start=$SECONDS
if [[ ,$only, == *,dtrain,* ]]; then
  rc=0
  bash "$here/emulate_nodes.sh" --ranks "$ranks" --per-node "$per_node" --out "$work/dtrain" \
    --timeout "$timeout" -- "$probe" >"$work/dtrain.log" 2>&1 || rc=$?
  summarize dtrain "$work/dtrain" "$rc"
fi
if [[ ,$only, == *,mpi,* ]] && fits mpi 20; then
  rc=0
  mkdir -p "$work/mpi"
  # One host: Open MPI's shared memory between all ranks (it has no notion of emulated nodes).
  timeout "$timeout" mpirun --allow-run-as-root --oversubscribe --bind-to none -n "$ranks" \
    --output-filename "$work/mpi/out" "$probe" --mpi >"$work/mpi.log" 2>&1 || rc=$?
  # mpirun writes DIR/out/1/rank.R/stdout: all of them in one file for summarize().
  find "$work/mpi/out" -name stdout -exec cat {} + >"$work/mpi/rank-all.out" 2>/dev/null || true
  summarize mpi "$work/mpi" "$rc"
fi
if [[ ,$only, == *,gloo,* ]] && fits gloo 250; then
  rc=0
  bash "$here/emulate_nodes.sh" --ranks "$ranks" --per-node "$per_node" --out "$work/gloo" \
    --timeout "$timeout" -- "$python" "$here/gloo_probe.py" >"$work/gloo.log" 2>&1 || rc=$?
  summarize gloo "$work/gloo" "$rc"
fi
echo "(${ranks} ranks in nodes of ${per_node}; $((SECONDS - start)) s for the whole table; times: the slowest rank)"
