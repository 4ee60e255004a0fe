#!/usr/bin/env bash
# Builds the spec parser with clang's libFuzzer, AddressSanitizer and UBSan and fuzzes it for a
# short, fixed time, seeded with every spec in the repository.
#   run_spec_fuzzer.sh SOURCE_DIR BUILD_DIR [SECONDS]
set -euo pipefail
src=$1 build=$2 seconds=${3:-20}
mkdir -p "$build/fuzz"
bin="$build/fuzz/spec_fuzzer"
clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I "$src/cli" -I "$src/runtime" -I "$src/runtime/include" "$src/tests/fuzz/spec_fuzzer.cpp" \
  "$src/cli/plan/job_spec.cpp" "$src/cli/plan/spec_fields.cpp" "$src/cli/plan/yaml_fields.cpp" \
  "$src/cli/plan/render.cpp" "$src/cli/plan/errors.cpp" "$src/runtime/affinity/policy.cpp" \
  "$src/runtime/launch/framework_env.cpp" "$src/runtime/launch/launcher_env.cpp" \
  "$src/runtime/common/number_text.cpp" \
  -lyaml-cpp -o "$bin"
corpus="$build/fuzz/corpus"
rm -rf "$corpus"
mkdir -p "$corpus"
find "$src/tests/fixtures" "$src/examples" -name '*.yaml' -exec cp -t "$corpus" {} + 2>/dev/null || true
# -timeout: one input taking over 5 s is a hang; -rss_limit_mb: memory stays bounded.
"$bin" "$corpus" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -artifact_prefix="$build/fuzz/" -max_len=65536 \
  -print_final_stats=1 2>&1 | tail -25
