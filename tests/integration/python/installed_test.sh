#!/usr/bin/env bash
# `import dtrain` from an install prefix: installs the build's runtime and python components into
# a temporary prefix and imports the package from PREFIX/PYDIR, as Debian's python3 would find it
# under /usr (lib/python3/dist-packages), without the build tree on any path.
#   installed_test.sh BUILD_DIR PYTHON PYDIR
set -euo pipefail
build=$1 python=$2 pydir=$3
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
for component in runtime python; do
  cmake --install "$build" --prefix "$prefix" --component "$component" >/dev/null
done
[[ -f $prefix/$pydir/dtrain/__init__.py ]] || { echo "FAIL: no $prefix/$pydir/dtrain/__init__.py" >&2; exit 1; }
cd "$prefix"
PYTHONPATH=$prefix/$pydir "$python" -c '
import dtrain, numpy, sys
assert dtrain.__file__.startswith(sys.argv[1]), dtrain.__file__
ctx = dtrain.init()
a = numpy.ones(4, dtype=numpy.float32)
ctx.allreduce(a, "sum")
print("installed dtrain:", dtrain.__file__, ctx)
' "$prefix"
echo "installed_test: PASS"
