# consumers PREFIX LABEL: external C and C++ programs built against an installed dtrain, through
# find_package(dtrain) and through pkg-config, then run. Sourced by install_test.sh and
# deb_test.sh, after lib.sh, with $src and $work set.
consumers() {  # PREFIX LABEL: build and run the external programs against an installed tree
  local prefix=$1 label=$2 out
  rm -rf "$work/cb"
  cmake -S "$src/tests/integration/install/consumer" -B "$work/cb" -DCMAKE_PREFIX_PATH="$prefix" \
    >"$work/cb.log" 2>&1 || fail "$label: find_package(dtrain) configure failed: $(cat "$work/cb.log")"
  cmake --build "$work/cb" >>"$work/cb.log" 2>&1 || fail "$label: consumer build failed: $(cat "$work/cb.log")"
  out=$("$work/cb/consumer_cxx") || fail "$label: consumer_cxx failed: $out"
  expect_eq "consumer_cxx ok: rank 0 of 1 (single)" "$out" "$label: C++ consumer via find_package"
  out=$("$work/cb/consumer_c") || fail "$label: consumer_c failed: $out"
  expect_eq "consumer_c ok: 1 rank(s)" "$out" "$label: C consumer via find_package"
  local pc_dir
  pc_dir=$(dirname "$(find "$prefix" -name dtrain.pc | head -1)")
  [[ -f $pc_dir/dtrain.pc ]] || fail "$label: no dtrain.pc under $prefix"
  local flags
  flags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs dtrain)
  local libdir
  libdir=$(PKG_CONFIG_PATH=$pc_dir pkg-config --variable=libdir dtrain)
  # shellcheck disable=SC2086
  cc -std=c11 -Wall -Werror "$src/tests/integration/install/consumer/consumer.c" $flags \
    -Wl,-rpath,"$libdir" -o "$work/pc_c" || fail "$label: cc with pkg-config flags [$flags] failed"
  out=$("$work/pc_c") || fail "$label: pkg-config C consumer failed: $out"
  expect_eq "consumer_c ok: 1 rank(s)" "$out" "$label: C consumer via pkg-config"
  # shellcheck disable=SC2086
  c++ -std=c++20 -Wall -Werror "$src/tests/integration/install/consumer/consumer.cpp" $flags \
    -Wl,-rpath,"$libdir" -o "$work/pc_cxx" || fail "$label: c++ with pkg-config flags failed"
  out=$("$work/pc_cxx") || fail "$label: pkg-config C++ consumer failed: $out"
  expect_contains "$out" "consumer_cxx ok" "$label: C++ consumer via pkg-config"
}
