#!/usr/bin/env bash
# Builds of libdtrain side by side (issue 49): shm_bench linked against each, run in turn for
# ROUNDS rounds (the order rotating each round, so that neither always runs first), then one
# table of medians over rounds: per size the time, the ratio to memcpy measured in the same run,
# and each variant's time over the first variant's. The machine's load is printed before each run.
#
#   shm_compare.sh [--rounds N] [--ranks P] [--out DIR] LABEL=SHM_BENCH ... [-- SHM_BENCH_ARGS]
#
# LABEL=SHM_BENCH: a shm_bench binary linked against the libdtrain to measure (built against
# that tree's headers, e.g. an older commit's in a worktree). More ranks than cores run
# oversubscribed and unbound; otherwise each rank is bound to a core. Reports only. On a machine
# other work shares, run it under chrt -f 1, as docs/benchmarks.md's tables were (issue 49).
set -euo pipefail
rounds=3 ranks=2 out=''
variants=()
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; break ;;
    *=*) variants+=("$1"); shift ;;
    *) echo "shm_compare.sh: expected LABEL=SHM_BENCH, --rounds N, --ranks P or --out DIR, got '$1'" >&2; exit 2 ;;
  esac
done
((${#variants[@]} > 0)) || { echo "shm_compare.sh: no LABEL=SHM_BENCH given" >&2; exit 2; }
if [[ -z $out ]]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
bind=(--bind-to core)
((ranks <= $(nproc))) || bind=(--oversubscribe --bind-to none)
n=${#variants[@]}
for ((round = 1; round <= rounds; round++)); do
  for ((k = 0; k < n; k++)); do
    v=${variants[$(((k + round - 1) % n))]}
    label=${v%%=*} bench=${v#*=}
    echo "# round $round, $label: load $(cut -d' ' -f1-3 /proc/loadavg)"
    mpirun --allow-run-as-root -n "$ranks" "${bind[@]}" "$bench" --json "$out/$label.$round.json" \
      "$@" | grep -v '^#' || { echo "shm_compare.sh: $label failed in round $round" >&2; exit 1; }
  done
done
labels=()
for v in "${variants[@]}"; do labels+=("${v%%=*}"); done
python3 - "$out" "$rounds" "${labels[@]}" <<'EOF'
import json, statistics, sys
out, rounds, labels = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
runs = {l: [json.load(open(f"{out}/{l}.{r}.json")) for r in range(1, rounds + 1)] for l in labels}
entries = runs[labels[0]][0]["entries"]
keys = sorted(entries, key=lambda k: (k == "resnet50_fused", entries[k]["bytes"]))
med = lambda xs: statistics.median(xs)
print(f"\n{len(labels)} variants x {rounds} rounds, {runs[labels[0]][0]['ranks']} ranks; "
      "cells: median over rounds of each run's median [min-max]")
for l in labels:
    r = runs[l][0]
    loads = ", ".join(x["load_start"].split()[0] for x in runs[l])
    probes = ", ".join(f"{x['state_probe_mpi_1mib_us_start']:.0f}" for x in runs[l])
    print(f"  {l}: {r['library']}; load at start {loads}; MPI 1 MiB us {probes}")
head = "| size | " + " | ".join(f"{l} ms" for l in labels) + " | " + \
       " | ".join(f"{l} / memcpy" for l in labels) + " | " + \
       " | ".join(f"{l} / {labels[0]}" for l in labels[1:]) + " |"
print("\n" + head + "\n|" + "---|" * (head.count("|") - 1))
for k in keys:
    t = {l: [x["entries"][k]["time_us"] / 1e3 for x in runs[l]] for l in labels}
    q = {l: [x["entries"][k]["ratio"] for x in runs[l]] for l in labels}
    cells = [f"{med(t[l]):.3f} [{min(t[l]):.3f}-{max(t[l]):.3f}]" for l in labels]
    cells += [f"{med(q[l]):.3f} [{min(q[l]):.3f}-{max(q[l]):.3f}]" for l in labels]
    # Per round (variants of one round ran minutes apart at most), then the median.
    cells += [f"{med([a / b for a, b in zip(t[l], t[labels[0]])]):.2f}" for l in labels[1:]]
    name = runs[labels[0]][0]["entries"][k]["name"]
    extra = ""
    for field, what in (("over_mpi_per_tensor", "fused / per-tensor MPI"),
                        ("over_exchange", "allreduce / exchange")):
        if all(field in x["entries"][k] for l in labels for x in runs[l]):
            extra = f" ({what}: " + ", ".join(
                f"{l} {med([x['entries'][k][field] for x in runs[l]]):.2f}" for l in labels) + ")"
    print(f"| {name}{extra} | " + " | ".join(cells) + " |")
EOF
