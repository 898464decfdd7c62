#!/usr/bin/env bash
# Fails when a file under src/ includes a header of a layer above its own. The layers, bottom up,
# are the order the build links them in (src/CMakeLists.txt) and docs/architecture.md draws:
# a lower layer never names a higher one, so each can be built, tested and replaced alone.
# Usage: tools/check-layers.sh [SRC_DIR]   (default: the src/ beside this script)
set -euo pipefail
src="${1:-$(dirname "$0")/../src}"
layers=(base topology device transport algorithms core api train nccl)

rank_of() {
  local i
  for i in "${!layers[@]}"; do
    [ "${layers[$i]}" = "$1" ] && { echo "$i"; return; }
  done
  echo -1
}

status=0
while IFS= read -r -d '' file; do
  relative="${file#"$src"/}"
  own="${relative%%/*}"
  own_rank=$(rank_of "$own")
  if [ "$own_rank" -lt 0 ]; then
    echo "check-layers: $relative: folder '$own' is in no layer (add it to tools/check-layers.sh)"
    status=1
    continue
  fi
  while IFS= read -r line; do
    number="${line%%:*}"
    included="${line#*\"}"
    included="${included%%\"*}"
    target="${included%%/*}"
    [ "$target" = "$included" ] && continue  # a header beside it
    target_rank=$(rank_of "$target")
    [ "$target_rank" -lt 0 ] && continue      # not a hoop layer (hoop/hoop.h, a system header)
    if [ "$target_rank" -gt "$own_rank" ]; then
      echo "check-layers: src/$relative:$number includes \"$included\": layer '$own' may not" \
           "include layer '$target', which is above it"
      status=1
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" || true)
done < <(find "$src" -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \) -print0 | sort -z)

if [ "$status" -eq 0 ]; then
  echo "check-layers: every include in $src points down the layers (${layers[*]})"
fi
exit "$status"
