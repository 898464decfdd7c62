#!/usr/bin/env bash
# Compares the NCCL functions hoop's libnccl.so.2 exports with NCCL's own library.
#
#   tools/check-nccl-symbols.sh HOOP_LIBNCCL [NCCL_LIBNCCL]
#
# Fails when hoop's library lacks a function of the public NCCL API that frameworks and
# nccl-tests call (the list below), or its pnccl twin, or exports anything but nccl*/pnccl*
# names. With NCCL's library given, it also lists every nccl* function NCCL exports and, for
# information, those hoop's does not (NCCL's device-side API, ncclDevComm* and the team and
# barrier helpers, which need NCCL's kernels). Exits 77 (skipped) when NCCL_LIBNCCL is given but
# missing.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 HOOP_LIBNCCL [NCCL_LIBNCCL]" >&2; exit 2; }
hoop_lib=$1
reference=${2:-}
nm_tool=${NM:-nm}

required=(
  ncclGetVersion ncclGetUniqueId ncclCommInitRank ncclCommInitRankConfig ncclCommInitAll
  ncclCommInitRankScalable ncclCommSplit ncclCommFinalize ncclCommDestroy ncclCommAbort
  ncclCommGetAsyncError ncclCommCount ncclCommCuDevice ncclCommUserRank ncclGetErrorString
  ncclGetLastError ncclGroupStart ncclGroupEnd ncclGroupSimulateEnd ncclAllReduce ncclBroadcast
  ncclBcast ncclReduce ncclAllGather ncclReduceScatter ncclAlltoAll ncclGather ncclScatter
  ncclSend ncclRecv ncclRedOpCreatePreMulSum ncclRedOpDestroy ncclMemAlloc ncclMemFree
  ncclCommRegister ncclCommDeregister ncclCommWindowRegister ncclCommWindowDeregister
  ncclCommShrink ncclCommRevoke
)

exported() { "$nm_tool" -D --defined-only "$1" | awk '$2 ~ /^[TtWiV]$/ {print $3}' | sort -u; }

[ -f "$hoop_lib" ] || { echo "check-nccl-symbols: $hoop_lib does not exist" >&2; exit 1; }
hoop_symbols="$(exported "$hoop_lib")"
status=0

soname="$(readelf -d "$hoop_lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
if [ "$soname" != libnccl.so.2 ]; then
  echo "check-nccl-symbols: FAIL: soname is '$soname', not libnccl.so.2"
  status=1
fi

missing=0
for name in "${required[@]}"; do
  for symbol in "$name" "p$name"; do
    if ! grep -qx "$symbol" <<<"$hoop_symbols"; then
      echo "check-nccl-symbols: FAIL: hoop's library does not export $symbol"
      missing=$((missing + 1))
    fi
  done
done
[ "$missing" -eq 0 ] || status=1

foreign="$(grep -vE '^p?nccl' <<<"$hoop_symbols" || true)"
if [ -n "$foreign" ]; then
  echo "check-nccl-symbols: FAIL: hoop's library exports names that are not NCCL's:"
  sed 's/^/  /' <<<"$foreign"
  status=1
fi

if [ -n "$reference" ]; then
  if [ ! -f "$reference" ]; then
    echo "check-nccl-symbols: skipped the comparison: NCCL's library $reference is not installed"
    exit 77
  fi
  reference_symbols="$(exported "$reference" | grep -E '^nccl' || true)"
  echo "check-nccl-symbols: NCCL's $reference exports $(wc -l <<<"$reference_symbols") nccl* functions:"
  tr '\n' ' ' <<<"$reference_symbols" | fold -s -w 100 | sed 's/^/  /'
  echo
  absent="$(comm -23 <(echo "$reference_symbols") <(grep -E '^nccl' <<<"$hoop_symbols"))"
  if [ -n "$absent" ]; then
    echo "check-nccl-symbols: in NCCL's library but not in hoop's (information, not a failure):"
    sed 's/^/  /' <<<"$absent"
  fi
  extra="$(comm -13 <(echo "$reference_symbols") <(grep -E '^nccl' <<<"$hoop_symbols"))"
  if [ -n "$extra" ]; then
    echo "check-nccl-symbols: FAIL: hoop's library exports nccl* names NCCL's does not:"
    sed 's/^/  /' <<<"$extra"
    status=1
  fi
fi

if [ "$status" -eq 0 ]; then
  echo "check-nccl-symbols: hoop's $hoop_lib (soname libnccl.so.2) exports all ${#required[@]} functions of the public API, each under both names"
fi
exit "$status"
