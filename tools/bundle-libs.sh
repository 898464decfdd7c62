#!/usr/bin/env bash
# Copies the shared libraries PROGRAM... need beyond the C and C++ runtimes (libhoop, hwloc,
# Gloo, ...) into DIR, stripped of debug information, so the programs can run on a machine that
# lacks the build's packages (LD_LIBRARY_PATH=DIR). The runtimes stay behind: the other
# machine's own must be at least as new as this one's.
#
#   tools/bundle-libs.sh DIR PROGRAM...       (used by bench/compare/pack.sh, tools/gpu-check.sh)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 DIR PROGRAM..." >&2; exit 2; }
dir=$1
shift
mkdir -p "$dir"
for program in "$@"; do
  ldd "$program" | awk '$3 ~ /^\// {print $3}' |
    { grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' || true; } |
    while read -r lib; do
      cp -L "$lib" "$dir/"
      chmod u+w "$dir/$(basename "$lib")"
      strip --strip-debug "$dir/$(basename "$lib")"
    done
done
