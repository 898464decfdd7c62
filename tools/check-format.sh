#!/usr/bin/env bash
# Fails when a C/C++ source differs from what clang-format (config: .clang-format) would write.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(find include src tests tools bench examples fuzz python -type f \
  \( -name '*.h' -o -name '*.hpp' -o -name '*.cc' -o -name '*.cpp' -o -name '*.c' \) | sort)
clang-format --dry-run --Werror "${files[@]}"
echo "clang-format: ${#files[@]} files clean"
