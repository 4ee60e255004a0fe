#!/usr/bin/env bash
# The live hang watch across nodes (issue 46 item 1; cli/live_watch.hpp), each rank under
# `dtrain run-rank` as the generated Slurm scripts start it, the run directory on the shared file
# system: on 2 nodes x 2 ranks, rank 3 (node2) stopped with SIGSTOP is named by its own logger
# with its node and state, and the job ends; on 3 nodes x 2 ranks, node2's link cut mid-run: every
# rank waits, each node's first logger probes the others (cli/link_watch.hpp); node2's loggers
# name node2 as the node cut off and end its ranks, then the lowest rank of the other side names it
# too (not node1 or node3, whose ranks miss node2's too) and ends its own rank, said not to be at
# fault, so that its side stops waiting. The stop with DTRAIN_HANG_AFTER=8, for the test's time;
# the cut with the defaults (hang_after 30 s): the probes name node2 long before that (about 16 s
# after the cut; report/hang_decision.hpp), and before Slurm, which marks node2 down and cancels the
# step about 28 s after the cut (SlurmdTimeout=10), so within 45 s of the cut, and the job ends
# within 60 s.
#   hang_watch_test.sh CLUSTER_DIR DTRAIN PROBE
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
DTRAIN=$2 PROBE=$3
work=$(scratch_dir)
trap 'link_back 2 || true; rm -rf "$work"' EXIT

# RUN_DIR: srun of 2 x 2 probe ranks on node1 and node2, each under run-rank.
ranks=(srun --mpi=pmix -w node1,node2 -N2 --ntasks-per-node=2 "$DTRAIN" run-rank --run-dir)

echo "== rank 3 on node2 stopped (SIGSTOP)"
start=$SECONDS
RUNTIME_PROBE_DIE_RANK=3 RUNTIME_PROBE_SIGNAL=STOP DTRAIN_HANG_AFTER=8 timeout -k 5 90 \
  "${ranks[@]}" "$work/stop" -- "$PROBE" >"$work/stop.out" 2>&1 && fail "the job succeeded: $(cat "$work/stop.out")"
took=$((SECONDS - start))
want="^dtrain: hang: rank 3 \\(on node2\\) is stopped \\(SIGSTOP\\), outside any collective \\(it left barrier #0 [0-9]+ s ago\\); ranks 0-2 wait in allreduce #1 of 4096 bytes for [0-9]+ s; DTRAIN_ON_HANG=abort: ending rank 3$"
grep -qE "$want" "$work/stop.out" || fail "no line matching /$want/ in: $(cat "$work/stop.out")"
grep -qE "${want#^}" "$work/stop/hang.log" || fail "hang.log: $(cat "$work/stop/hang.log")"
((took < 40)) || fail "the job took $took s to end: $(cat "$work/stop.out")"
echo "ok: named from node2 and ended after $took s"

echo "== node2's link cut while the ranks of 3 nodes run"
# runtime_probe's training loop (an allreduce and 20 ms of "compute" a step) on 6 ranks, none of
# which dies; cut once rank 0 has logged step 100 (every rank trains).
ranks3=(srun --mpi=pmix -w node1,node2,node3 -N3 --ntasks-per-node=2 "$DTRAIN" run-rank --run-dir)
(RUNTIME_PROBE_STEPS=100000 RUNTIME_PROBE_STEP_MS=20 timeout -k 5 120 "${ranks3[@]}" "$work/cut" -- "$PROBE" >"$work/cut.out" 2>&1;
  echo "exit $?" >>"$work/cut.out") &
job=$!
for _ in $(seq 300); do
  grep -q " runtime_probe: step 100$" "$work/cut/rank-00000.log" 2>/dev/null && break
  sleep 0.2
done
grep -q " runtime_probe: step 100$" "$work/cut/rank-00000.log" || fail "the 6 ranks did not reach step 100: $(cat "$work/cut.out")"
ip link set "${VETH_PREFIX:-dtrv}2" down
start=$SECONDS
# Until the other side's lowest rank has spoken (after node2's own loggers).
other_side="\\(their loggers there\\) and rank 0 on node1, not at fault: the ranks on this side of the cut would not learn of node2's end$"
for _ in $(seq 60); do
  grep -qE "$other_side" "$work/cut/hang.log" 2>/dev/null && break
  sleep 1
done
named=$((SECONDS - start))
# The link back, so that node2's slurmd can report its ranks' end to srun.
ip link set "${VETH_PREFIX:-dtrv}2" up
wait "$job" || true
ended=$((SECONDS - start))
# What node2's own record says, when the verdict's logger read it: its probe found none of the
# others; the other side may decide before node2's record is in (the probes' records are read as
# they come, and those of node1 and node3 suffice to name node2).
own="it reaches none of them: its link is cut|it wrote no answer of its own: its link is cut, or it is down"
want="dtrain: hang: node node2 \\(ranks 2-3\\) stopped answering: nodes node1, node3 cannot reach it and reach each other \\(($own)\\); ranks 0-5 wait in allreduce #[0-9]+( \\(some already in #[0-9]+\\))?( of [0-9]+ bytes)? for [0-9]+ s; DTRAIN_ON_HANG=abort: ending ranks 2-3 on node2"
# The other side's rank 0 names node2 and is said not to be at fault; node2's own loggers end its
# ranks and say so when they read the records before the other side's ranks end (in some runs
# they do not: then srun ends them once the link is back). Every verdict names node2.
grep -qE "$want $other_side" "$work/cut/hang.log" 2>/dev/null || fail "no line matching /$want $other_side/ after $named s in hang.log ($(cat "$work/cut/hang.log" 2>&1)); output: $(cat "$work/cut.out")"
expect_eq 0 "$(grep "dtrain: hang: " "$work/cut/hang.log" | grep -cvE "$want(, the node cut off| $other_side)$")" "verdicts not naming node2 in hang.log ($(cat "$work/cut/hang.log"))"
grep -q "node node[13]" "$work/cut/hang.log" && fail "a node not cut named: $(cat "$work/cut/hang.log")"
grep -qE "$want $other_side" "$work/cut.out" || fail "the job's output lacks the other side's verdict: $(cat "$work/cut.out")"
grep -q "^exit 0$" "$work/cut.out" && fail "the job succeeded: $(cat "$work/cut.out")"
((named <= 45)) || fail "node2 named $named s after the cut: $(cat "$work/cut/hang.log")"
((ended <= 60)) || fail "the job ended $ended s after the cut (named after $named s): $(cat "$work/cut.out")"
echo "ok: node2 named after $named s of the cut, the job ended after $ended s"
link_back 2 || fail "node2 did not come back after the cut"
echo PASS
