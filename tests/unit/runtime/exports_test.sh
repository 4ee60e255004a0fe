#!/usr/bin/env bash
# libdtrain.so exports its API (DTRAIN_API) and nothing of what it links privately: no internals
# (dtrain::runtime::), no symbols of the static affinity library (dtrain::affinity::) and none of
# hwloc's, which could otherwise clash with the application's own copies.
#   exports_test.sh LIBDTRAIN
set -euo pipefail
lib=$1
exports=$(nm -D --defined-only -C "$lib" | cut -d' ' -f3-)
[[ $exports == *"dtrain::init()"* ]] || {
  echo "FAIL: $lib does not export dtrain::init(); is it libdtrain?" >&2
  exit 1
}
# The symbol's own name, not its argument types (Context's constructor takes a runtime:: type).
leaks=$(sed -E 's/^(typeinfo name for|typeinfo for|vtable for|VTT for|guard variable for) //' \
  <<<"$exports" | grep -E '^(dtrain::(affinity|runtime)::|hwloc_)' || true)
if [[ -n $leaks ]]; then
  echo "FAIL: $lib exports $(wc -l <<<"$leaks") internal symbols, e.g.:" >&2
  head -5 <<<"$leaks" >&2
  exit 1
fi
echo "PASS: $lib exports $(wc -l <<<"$exports") symbols, none internal"
