#!/usr/bin/env bash
# Builds the spec parser with clang's libFuzzer, AddressSanitizer and UBSan and fuzzes it for a
# short, fixed time, seeded with every spec in the repository.
#   DTRAIN_FUZZ_SOURCES=a.cpp:b.cpp run_spec_fuzzer.sh SOURCE_DIR BUILD_DIR [SECONDS]
set -euo pipefail
src=$1 build=$2 seconds=${3:-20}
mkdir -p "$build/fuzz/objects"
bin="$build/fuzz/spec_fuzzer"
flags=(-std=c++20 -g -O1 -fno-sanitize-recover=undefined
  -I "$src/cli" -I "$src/runtime" -I "$src/runtime/include")
# The sources come from CMake: DTRAIN_FUZZ_SOURCES (the dtrain::plan library's own list,
# instrumented) and DTRAIN_FUZZ_PLAIN_SOURCES (the runtime libraries it links, built plainly), so
# a file added to the library is fuzzed without anyone editing this script. They go into an
# archive: the linker takes only what the parser reaches, as it does for the CLI.
[[ -n ${DTRAIN_FUZZ_SOURCES:-} ]] || { echo "run_spec_fuzzer.sh: DTRAIN_FUZZ_SOURCES is empty" >&2; exit 2; }
rm -f "$build/fuzz/objects/"*.o "$build/fuzz/libspec.a"
parallel=$(nproc)
compile() { # OBJECT SOURCE FLAGS...: in the background, at most $parallel at once
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n; done
  clang++ "${@:3}" -c "$2" -o "$build/fuzz/objects/$1.o" &
}
IFS=':' read -r -a fuzzed <<<"$DTRAIN_FUZZ_SOURCES"
IFS=':' read -r -a plain <<<"${DTRAIN_FUZZ_PLAIN_SOURCES:-}"
for i in "${!fuzzed[@]}"; do
  compile "f$i" "${fuzzed[i]}" -fsanitize=fuzzer-no-link,address,undefined "${flags[@]}"
done
# The runtime libraries' own dependencies' headers outside /usr/include (libxml2's, for
# affinity/xml_fault.cpp), found as CMake finds them.
read -r -a deps_cflags <<<"$(pkg-config --cflags libxml-2.0)"
for i in "${!plain[@]}"; do
  compile "p$i" "${plain[i]}" -std=c++20 -O0 -g0 -I "$src/runtime" -I "$src/runtime/include" \
    "${deps_cflags[@]}"
done
while (($(jobs -rp | wc -l) > 0)); do wait -n; done
ar rcs "$build/fuzz/libspec.a" "$build/fuzz/objects/"*.o
clang++ "${flags[@]}" -fsanitize=fuzzer,address,undefined "$src/tests/fuzz/spec_fuzzer.cpp" \
  "$build/fuzz/libspec.a" -lyaml-cpp -o "$bin"
corpus="$build/fuzz/corpus"
rm -rf "$corpus"
mkdir -p "$corpus"
find "$src/tests/fixtures" "$src/examples" -name '*.yaml' -exec cp -t "$corpus" {} + 2>/dev/null || true
# -timeout: one input taking over 5 s is a hang; -rss_limit_mb: memory stays bounded.
"$bin" "$corpus" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -artifact_prefix="$build/fuzz/" -max_len=65536 \
  -print_final_stats=1 2>&1 | tail -25
