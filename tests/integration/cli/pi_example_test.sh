#!/usr/bin/env bash
# The README's main job, shortened: the pi example through `dtrain submit` on the local site,
# then `dtrain stats` over its run directory.
set -euo pipefail
DTRAIN=$1 PI=$2 SPEC=$3
source "$(dirname "$0")/lib.sh"
enter_workdir pi-test
# The shipped spec, pointed at this build's binary and fewer samples.
sed -e "s#build/bin/dtrain-pi#$PI#" -e 's/"200000000"/"4000000"/' "$SPEC" > job.yaml
grep -q "$PI" job.yaml || fail "could not point the example spec at $PI"

out=$("$DTRAIN" submit job.yaml) || fail "submit exited $?: $out"
echo "$out"
pi=$(sed -n 's/^pi ~= \([0-9.]*\) .*/\1/p' <<< "$out")
[[ -n "$pi" ]] || fail "expected a 'pi ~= ...' line, got: $out"
python3 -c "import math,sys; sys.exit(0 if abs($pi - math.pi) < 0.01 else 1)" ||
  fail "pi estimate $pi is not within 0.01 of pi"
expect_contains "$out" "on 2 ranks" "submit output"
expect_contains "$out" "# throughput" "submit output"
run_dir=$(ls -d "$work"/runs/pi-*)
for f in rank-00000.log rank-00001.log rank-00000.jsonl rank-00001.jsonl; do
  [[ -s "$run_dir/$f" ]] || fail "expected a non-empty $run_dir/$f"
done
# One step record per step; schema v2 adds collective heartbeats ("type":"coll") and resource
# samples ("type":"resource") beside them.
expect_eq 20 "$(grep -c '"type":"step"' "$run_dir/rank-00001.jsonl")" "step records of rank 1 (one per step)"
# Every rank's file has resource samples with the default interval, however short the run: the
# Meter takes one when it closes. Without NVIDIA's library, none has a GPU field.
for r in 0 1; do
  f="$run_dir/rank-0000$r.jsonl"
  grep -qE '^\{"v":2,"type":"resource","time":[0-9.]+,"rank":'$r',"interval":[0-9.e-]+,"cpu_percent":[0-9.e-]+,"rss_bytes":[1-9][0-9]*[,}]' "$f" ||
    fail "expected resource records in $f, got: $(grep resource "$f" || true)"
  if ! /sbin/ldconfig -p | grep -q 'libnvidia-ml\.so\.1'; then
    ! grep '"type":"resource"' "$f" | grep -q '"gpu' || fail "GPU fields without NVML in $f"
  fi
done
expect_contains "$("$DTRAIN" stats "$run_dir")" "resources (averages of each rank's resource records):" "stats"

stats=$("$DTRAIN" stats --json "$run_dir")
python3 - "$stats" <<'PY'
import json, sys
s = json.loads(sys.argv[1])
assert [r["rank"] for r in s["ranks"]] == [0, 1], s
assert sum(r["samples"] for r in s["ranks"]) == 4000000, s
assert s["total"]["samples"] == 4000000, s
assert all(r["samples_per_second"] > 0 for r in s["ranks"]), s
assert [r["rank"] for r in s["resources"]] == [0, 1], s
assert all(r["records"] >= 1 and r["rss_bytes"] > 0 and r["cpu_percent"] >= 0
           for r in s["resources"]), s
PY
echo "PASS"
