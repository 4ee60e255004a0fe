# The compiler cache of the build trees scripts/test and packaging/deb/build-deb.sh configure: the
# launcher scripts/ccache-shared where ccache is installed (scripts/install-deps installs it).
# A tree configured before without the launcher keeps its configuration: adding a launcher to a
# configured tree changes every compile rule, which would rebuild all of it once for nothing.
#   compiler_cache_args BUILD_DIR   sets the array COMPILER_CACHE_ARGS (empty: no cache)
compiler_cache_args() {
  local build=$1 launcher
  launcher="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/ccache-shared"
  COMPILER_CACHE_ARGS=()
  command -v ccache >/dev/null || return 0
  # ccache fails every compile whose cache directory it cannot create or write: no cache then.
  local dir
  dir=$(ccache -k cache_dir 2>/dev/null) || return 0
  mkdir -p "$dir" 2>/dev/null && [[ -w $dir ]] || return 0
  if [[ -f $build/CMakeCache.txt ]] && ! grep -q '^CMAKE_CXX_COMPILER_LAUNCHER:.*ccache' "$build/CMakeCache.txt"; then
    return 0
  fi
  COMPILER_CACHE_ARGS=(-DCMAKE_C_COMPILER_LAUNCHER="$launcher" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher")
}
