#!/usr/bin/env bash
# The emulated-scale test (issue 29): N ranks in nodes of K (emulate_nodes.sh) on libdtrain's TCP
# bootstrap, each doing start-up, a barrier, a 4 KiB and a 1 MiB allreduce (scale_probe). Checks
# what a user of a large job relies on: every rank exits 0 with exact results, every rank's node
# layout is right, and no rank holds more than MAX_FDS descriptors (rank 0 also holds the store's
# one connection per rank) nor more than MAX_RSS_MIB of memory. With --kill-rank R, rank R
# SIGKILLs itself after the first allreduces and every survivor must name it and its host.
#
#   scale_test.sh PROBE N K [--max-fds F] [--max-rss-mib M] [--kill-rank R] [--timeout S]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
probe=$1 ranks=$2 per_node=$3
shift 3
max_fds=64 max_rss=24 kill_rank='' timeout=600
while (($#)); do
  case $1 in
    --max-fds) max_fds=$2; shift 2 ;;
    --max-rss-mib) max_rss=$2; shift 2 ;;
    --kill-rank) kill_rank=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    *) echo "scale_test.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

start=$SECONDS
rc=0
if [[ -n $kill_rank ]]; then
  DTRAIN_TIMEOUT=${DTRAIN_TIMEOUT:-120} bash "$here/emulate_nodes.sh" --ranks "$ranks" \
    --per-node "$per_node" --out "$out" --timeout "$timeout" -- \
    "$probe" --kill-rank "$kill_rank" --loops 1000000 || rc=$?
  ((rc != 124)) || fail "the ranks were still running after ${timeout} s"
  host="em[0-9]*n$((kill_rank / per_node))"
  named=0
  for ((r = 0; r < ranks; r++)); do
    ((r == kill_rank)) && continue
    grep -Eq "lost: .*rank $kill_rank \(on $host\)" "$out/rank-$r.out" ||
      fail "rank $r did not name rank $kill_rank and its host: $(head -c 600 "$out/rank-$r.out")"
    [[ $(cat "$out/rank-$r.rc") == 3 ]] || fail "rank $r exited $(cat "$out/rank-$r.rc"), expected 3"
    named=$((named + 1))
  done
  echo "every one of the $named survivors named rank $kill_rank and its host within $((SECONDS - start)) s"
  grep -h "lost:" "$out/rank-0.out" "$out/rank-$((ranks - 1)).out" | head -2
  exit 0
fi

bash "$here/emulate_nodes.sh" --ranks "$ranks" --per-node "$per_node" --out "$out" \
  --timeout "$timeout" -- "$probe" || rc=$?
((rc == 0)) || fail "emulate_nodes.sh exited $rc; first failing rank: $(grep -L '^0$' "$out"/rank-*.rc | head -1 | xargs -r -I{} sh -c 'cat "${1%.rc}.out"' _ {} | head -c 800)"
worst_fds=0 worst_rss=0
for ((r = 0; r < ranks; r++)); do
  line=$(grep '^scale_probe rank=' "$out/rank-$r.out") || fail "rank $r printed no result"
  [[ $line == *" exact=1 "* ]] || fail "rank $r: results not exact: $line"
  [[ $line == *" size=$ranks "* ]] || fail "rank $r: wrong size: $line"
  fds=$(sed -E 's/.* fds=([0-9]+).*/\1/' <<<"$line")
  rss=$(sed -E 's/.* rss_kib=([0-9]+).*/\1/' <<<"$line")
  limit=$max_fds
  ((r == 0)) && limit=$((max_fds + ranks))  # the store's server: one connection per rank
  ((fds <= limit)) || fail "rank $r holds $fds descriptors, expected at most $limit: $line"
  ((rss <= max_rss * 1024)) || fail "rank $r peaked at $((rss / 1024)) MiB, expected at most $max_rss: $line"
  ((r == 0)) || ((fds <= worst_fds)) || worst_fds=$fds
  ((rss <= worst_rss)) || worst_rss=$rss
done
echo "$ranks ranks on $((ranks / per_node)) nodes: every result exact; at most $worst_fds descriptors per rank (rank 0: $(sed -E 's/.* fds=([0-9]+).*/\1/' <<<"$(grep '^scale_probe' "$out/rank-0.out")") with the store), peak RSS at most $((worst_rss / 1024)) MiB; $((SECONDS - start)) s"
