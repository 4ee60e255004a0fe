#!/usr/bin/env bash
# Numbers in variables as `dtrain doctor` (libdtrain's init()) reads them: one strict parser
# (runtime/common/number_text.hpp) for every DTRAIN_* and launcher variable, so hexadecimal, a
# hexadecimal float and leading white space are refused by name with exit status 2 (strtod and
# strtol took DTRAIN_TIMEOUT=0x10 as 16 s and RANK=" 0" as rank 0). One process, no launcher.
#   env_numbers_test.sh DTRAIN
set -euo pipefail
DTRAIN=$1
source "$(dirname "$0")/lib.sh"
enter_workdir env-numbers

# The variables of a launcher ctest may itself run under would be read before ours.
unset OMPI_COMM_WORLD_RANK PALS_RANKID PMI_RANK SLURM_PROCID PMIX_NAMESPACE PMIX_RANK \
  MASTER_ADDR MASTER_PORT RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE GROUP_RANK DTRAIN_BOOTSTRAP

echo "== DTRAIN_TIMEOUT"
for value in 0x10 0x1p3 " 5" $'\t5' "5 " "+5" inf; do
  expect_status_and_message 2 \
    "dtrain: DTRAIN_TIMEOUT: expected a positive number of seconds (at least 0.001, at most 1e7), got \"$value\"" \
    env DTRAIN_TIMEOUT="$value" "$DTRAIN" doctor
done

echo "== DTRAIN_ATTEMPT"
expect_status_and_message 2 \
  "dtrain: DTRAIN_ATTEMPT: expected the attempt number, 0 to 999999, got \" 1\"" \
  env DTRAIN_ATTEMPT=" 1" "$DTRAIN" doctor

echo "== DTRAIN_RESOURCE_INTERVAL"
for value in 0x5 " 5" "5s" -1 0.001; do
  expect_status_and_message 2 \
    "dtrain: DTRAIN_RESOURCE_INTERVAL: expected seconds between resource samples, 0.01 to 86400, or 0 for none, got \"$value\"" \
    env DTRAIN_RESOURCE_INTERVAL="$value" "$DTRAIN" doctor
done

echo "== torchrun's RANK and WORLD_SIZE"
for value in " 0" $'\t0' "+0" "-0" "0x0"; do
  expect_status_and_message 2 "RANK: expected an integer from 0 to 0, got \"$value\"" \
    env MASTER_ADDR=127.0.0.1 MASTER_PORT=1 RANK="$value" WORLD_SIZE=1 "$DTRAIN" doctor
done
expect_status_and_message 2 "WORLD_SIZE: expected an integer from 1 to 16777216, got \" 1\"" \
  env MASTER_ADDR=127.0.0.1 MASTER_PORT=1 RANK=0 WORLD_SIZE=" 1" "$DTRAIN" doctor
echo PASS
