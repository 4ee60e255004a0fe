#!/usr/bin/env bash
# Every C/C++ source of the project is clang-format clean (.clang-format at the root).
set -euo pipefail
root=$1
cd "$root"
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h' '*.c' 2>/dev/null ||
  find cli runtime spank-plugin examples tests bench -name '*.[ch]pp' -o -name '*.[ch]')
if ((${#files[@]} == 0)); then
  echo "no sources found under $root" >&2
  exit 1
fi
clang-format --dry-run --Werror "${files[@]}"
echo "${#files[@]} files are clang-format clean"
