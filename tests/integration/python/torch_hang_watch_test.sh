#!/usr/bin/env bash
# The live hang watch on an unmodified DDP program (issue 46 item 1): examples/pytorch-ddp with
# --backend dtrain (whose process group runs on dtrain.init()'s Context: one Context, one slot of
# the live page) through `dtrain submit` on the local site, 2 ranks; rank 1's Python process stopped with
# SIGSTOP once it has trained a while (outside or inside a collective: DDP's bucket allreduces
# run while the backward pass goes on; a stopped rank is never taken for a waiter). With the
# defaults (DTRAIN_HANG_AFTER 30 s, on_hang abort) its logger names it within 45 s of the stop and
# the job ends within 60 s.
#   torch_hang_watch_test.sh DTRAIN SRC BUILD
set -euo pipefail
DTRAIN=$1 SRC=$2 BUILD=$3
source "$SRC/tests/integration/cli/lib.sh"
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
enter_workdir torch-hang-watch
example_job_yaml "$SRC" "$BUILD" pytorch-ddp
command=$(yaml_command "/usr/bin/python3, $SRC/examples/pytorch-ddp/train.py" --epochs 3 \
  --log-every 10 --no-checkpoint --backend dtrain)
"$DTRAIN" submit job.yaml --set "command=$command" >out.txt 2>&1 &
submit_pid=$!
log=""
for _ in $(seq 600); do # rank 1's log, once it has logged step 50 on rank 0
  log=$(ls runs/pytorch-ddp-*/rank-00001.log 2>/dev/null | head -1 || true)
  [[ -n $log ]] && grep -q "step 50 loss" runs/pytorch-ddp-*/rank-00000.log 2>/dev/null && break
  sleep 0.2
done
[[ -n $log ]] || fail "rank 1 never started: $(cat out.txt)"
pid=$(sed -n '1s/.*(local rank 1 of 2, pid \([0-9]*\)).*/\1/p' "$log")
[[ -n $pid ]] || fail "no pid in $log's first line: $(head -1 "$log")"
kill -STOP "$pid"
stopped=$SECONDS
named=""
while kill -0 "$submit_pid" 2>/dev/null; do
  [[ -z $named ]] && grep -q "^dtrain: hang: rank 1 " out.txt && named=$((SECONDS - stopped))
  ((SECONDS - stopped < 120)) || { kill -CONT "$pid"; fail "the job still ran 120 s after the stop: $(cat out.txt)"; }
  sleep 0.5
done
wait "$submit_pid" && fail "the job succeeded with rank 1 stopped: $(cat out.txt)"
ended=$((SECONDS - stopped))
submit_pid=
grep -qE "^dtrain: hang: rank 1 \\(on $(hostname)\\) is stopped \\(SIGSTOP\\), (outside any collective \\(it left allreduce #[0-9]+ [0-9]+ s ago\\)|inside allreduce #[0-9]+ for [0-9]+ s); rank 0 waits in allreduce #[0-9]+ of [0-9]+ bytes for [0-9]+ s; DTRAIN_ON_HANG=abort: ending rank 1$" out.txt ||
  fail "no verdict on rank 1 in: $(cat out.txt)"
named=${named:-$ended}
((named <= 45)) || fail "rank 1 named $named s after the stop (expected at most 45 s)"
((ended <= 60)) || fail "the job ended $ended s after the stop (expected at most 60 s)"
echo "ok: rank 1 named $named s and the job ended $ended s after the stop"
echo PASS
