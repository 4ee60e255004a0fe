#!/usr/bin/env bash
# `pip install .` as a user with a virtualenv runs it (pyproject.toml: the project's own build
# backend, python/build_backend): a fresh venv of PYTHON that sees the system's packages (torch),
# the package built offline by its own CMake tree (BUILD_DIR is kept, so a later run rebuilds only
# what changed), then imported by separate processes from that venv, with neither the source nor
# the build tree on any path: dtrain.__version__ and pip's metadata are VERSION (CMakeLists.txt's),
# libdtrain is the package's own copy, one rank and two torchrun-style ranks run collectives, and
# dtrain.torch is there when TORCH is 1 (CMake found torch), with the type stubs; pip uninstall
# removes it all. Then a venv that sees no system package (no `wheel`, no torch: what setuptools
# could not build a wheel in offline) installs with pip's build isolation on, gets no dtrain.torch,
# and `pip install -e` is refused with the backend's message.
#   pip_install_test.sh SOURCE_DIR PYTHON VERSION BUILD_DIR TORCH TCP_LAUNCH CMAKE_ARGS
set -euo pipefail
src=$1 python=$2 version=$3 build=$4 torch=$5 launch=$6 cmake_args=$7
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
venv=$tmp/venv
"$python" -m venv --system-site-packages "$venv"
DTRAIN_PIP_BUILD_DIR=$build CMAKE_ARGS=$cmake_args \
  "$venv/bin/python" -m pip install --no-index --no-deps --no-build-isolation "$src" \
  >"$tmp/pip.log" 2>&1 || {
  tail -n 60 "$tmp/pip.log" >&2
  echo "FAIL: pip install $src into $venv (the end of its output is above)" >&2
  exit 1
}
cd "$tmp"  # not the source tree: `import dtrain` must find the venv's package
unset PYTHONPATH LD_LIBRARY_PATH
"$venv/bin/python" - "$venv" "$version" "$torch" <<'PY'
import importlib.metadata, os, sys
venv, version, torch = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
import dtrain
package = os.path.dirname(dtrain.__file__)
assert package.startswith(venv + "/lib/"), f"dtrain imported from {package}, not from {venv}"
assert dtrain.__version__ == version, f"dtrain.__version__ {dtrain.__version__!r}; expected {version!r}"
assert importlib.metadata.version("dtrain") == version, importlib.metadata.version("dtrain")
# libdtrain is the package's copy, found through the module's RPATH ($ORIGIN).
maps = open("/proc/self/maps").read()
libs = sorted({line.split()[-1] for line in maps.splitlines() if "/libdtrain.so" in line})
assert libs == [os.path.realpath(f"{package}/libdtrain.so.{version.split('.')[0]}")], libs
ctx = dtrain.init()
buf = bytearray(b"\x01\x02\x03")
ctx.allreduce(buf, "sum", dtype="uint8")
assert bytes(buf) == b"\x01\x02\x03", bytes(buf)
names = sorted(n for n in os.listdir(package) if not n.startswith("__pycache__"))
typed = ["__init__.pyi", "py.typed"] + (["torch.pyi"] if torch else [])
assert set(typed) <= set(names), f"type stubs missing from {package}: {names}"
print(f"venv: dtrain {dtrain.__version__} from {package}: {' '.join(names)}")
if torch:
    import torch as t
    import torch.distributed as dist
    import dtrain.torch
    dtrain.torch.init_process_group()
    x = t.arange(4, dtype=t.float32)
    dist.all_reduce(x)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0], x
    print(f"venv: dtrain.torch from {dtrain.torch.__file__}, backend {dist.get_backend()}")
else:
    try:
        import dtrain.torch  # noqa: F401
    except ImportError:
        print("venv: no dtrain.torch (built without torch)")
    else:
        raise AssertionError("dtrain.torch imported, but CMake did not build it")
PY
# Two ranks from the venv, torchrun-style: libdtrain's sockets and shared memory from the package.
program='
import sys
if sys.argv[1] == "1":  # torch.distributed over env://, dtrain.torch as backend
    import torch, torch.distributed as dist, dtrain.torch
    dist.init_process_group(backend="dtrain")
    x = torch.full((3,), float(dist.get_rank() + 1))
    dist.all_reduce(x)
    assert x.tolist() == [3.0, 3.0, 3.0], x
else:  # dtrain alone, its env:// bootstrap
    import dtrain
    ctx = dtrain.init()
    buf = bytearray([ctx.rank + 1])
    ctx.allreduce(buf, "sum", dtype="uint8")
    assert buf[0] == 3, buf[0]
'
bash "$launch" 2 "$venv/bin/python" -c "$program" "$torch"
echo "venv: 2 ranks summed through the installed package"
"$venv/bin/python" -m pip uninstall -y dtrain >/dev/null
left=$(find "$venv" -path '*dtrain*' ! -path '*/__pycache__*' | head -5)
[[ -z $left ]] || { echo "FAIL: pip uninstall dtrain left: $left" >&2; exit 1; }
echo "venv: pip uninstall removed every file"

# A bare venv: no system packages, so no wheel and no torch; pip's build isolation on, no index.
bare=$tmp/bare
"$python" -m venv "$bare"
! "$bare/bin/python" -c "import wheel" 2>/dev/null || echo "note: this venv has wheel"
DTRAIN_PIP_BUILD_DIR=$build-bare CMAKE_ARGS=$cmake_args \
  "$bare/bin/python" -m pip install --no-index --no-deps "$src" >"$tmp/bare.log" 2>&1 || {
  tail -n 60 "$tmp/bare.log" >&2
  echo "FAIL: pip install $src into $bare, a venv without system packages (its output is above)" >&2
  exit 1
}
"$bare/bin/python" - "$bare" "$version" <<'PY'
import importlib.metadata, os, sys, sysconfig
venv, version = sys.argv[1], sys.argv[2]
import dtrain
assert os.path.dirname(dtrain.__file__).startswith(venv + "/lib/"), dtrain.__file__
assert dtrain.__version__ == version, dtrain.__version__
tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
wheel = importlib.metadata.distribution("dtrain").read_text("WHEEL")
want = f"Tag: {tag}-{tag}-{sysconfig.get_platform().replace('-', '_').replace('.', '_')}"
assert want in wheel.splitlines(), f"WHEEL: {wheel!r}; expected the line {want!r}"
ctx = dtrain.init()
buf = bytearray(b"\x05")
ctx.allreduce(buf, "sum", dtype="uint8")
assert bytes(buf) == b"\x05", bytes(buf)
try:
    import dtrain.torch  # noqa: F401
except ImportError:
    pass
else:
    raise AssertionError("dtrain.torch imported in a venv whose interpreter cannot import torch")
print(f"bare venv: dtrain {version} imported, {want}, no dtrain.torch")
PY
if "$bare/bin/python" -m pip install --no-index --no-deps -e "$src" >"$tmp/editable.log" 2>&1; then
  echo "FAIL: pip install -e succeeded" >&2
  exit 1
fi
want='dtrain: pip install: editable installs (pip install -e) are not supported; expected `pip install .`, or PYTHONPATH=<cmake build dir>/python'
grep -qF "$want" "$tmp/editable.log" || {
  cat "$tmp/editable.log" >&2
  echo "FAIL: pip install -e: no line '$want' in its output (above)" >&2
  exit 1
}
echo "bare venv: pip install -e refused: $want"
echo "pip_install_test: PASS"
