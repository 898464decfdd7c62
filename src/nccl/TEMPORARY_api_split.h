// TEMPORARY, to be deleted (with its #include in hoop_api.h) once hoop.h declares these five
// functions: stand-ins with their exact signatures, built on hoop's public API, so the NCCL
// library builds and its tests run before hoopCommSplit, hoopCommFinalize and the premultiplied
// sum are part of libhoop. Host memory and blocking communicators only; the premultiplied sum is
// refused.
#pragma once

#include <cstring>
#include <vector>

#include "hoop/hoop.h"

#ifndef HOOP_SPLIT_NOCOLOR
#define HOOP_SPLIT_NOCOLOR (-1)
typedef enum { hoopScalarDevice = 0, hoopScalarHostImmediate = 1 } hoopScalarResidence_t;

static inline hoopResult_t hoopCommSplit(hoopComm_t comm, int color, int key, hoopComm_t* newcomm,
                                         hoopConfig_t* config) {
  *newcomm = nullptr;
  int size = 0;
  int rank = 0;
  if (hoopResult_t r = hoopCommCount(comm, &size); r != hoopSuccess) return r;
  if (hoopResult_t r = hoopCommUserRank(comm, &rank); r != hoopSuccess) return r;
  struct Entry {
    int color;
    int key;
    hoopUniqueId id;
  };
  std::vector<Entry> all(static_cast<size_t>(size));
  Entry& mine = all[static_cast<size_t>(rank)];
  mine.color = color;
  mine.key = key;
  std::memset(&mine.id, 0, sizeof(mine.id));
  // The first rank of each color (by key, then rank) makes the color's unique id.
  int leader = -1;
  std::vector<Entry> colors(static_cast<size_t>(size));
  colors[static_cast<size_t>(rank)] = mine;
  if (hoopResult_t r = hoopAllGather(&colors[static_cast<size_t>(rank)], colors.data(),
                                     sizeof(Entry), hoopUint8, comm, nullptr);
      r != hoopSuccess) {
    return r;
  }
  int newRank = 0;
  int newSize = 0;
  for (int r = 0; r < size; ++r) {
    const Entry& e = colors[static_cast<size_t>(r)];
    if (color == HOOP_SPLIT_NOCOLOR || e.color != color) continue;
    ++newSize;
    if (e.key < key || (e.key == key && r < rank)) ++newRank;
    const Entry* best = leader < 0 ? nullptr : &colors[static_cast<size_t>(leader)];
    if (best == nullptr || e.key < best->key || (e.key == best->key && r < leader)) leader = r;
  }
  if (leader == rank) {
    if (hoopResult_t r = hoopGetUniqueId(&mine.id); r != hoopSuccess) return r;
  }
  all[static_cast<size_t>(rank)] = mine;
  if (hoopResult_t r = hoopAllGather(&all[static_cast<size_t>(rank)], all.data(), sizeof(Entry),
                                     hoopUint8, comm, nullptr);
      r != hoopSuccess) {
    return r;
  }
  if (color == HOOP_SPLIT_NOCOLOR) return hoopSuccess;
  return hoopCommInitRankConfig(newcomm, newSize, all[static_cast<size_t>(leader)].id, newRank,
                                config);
}

static inline hoopResult_t hoopCommFinalize(hoopComm_t comm) {
  int size = 0;
  return hoopCommCount(comm, &size);
}

static inline hoopResult_t hoopRedOpCreatePreMulSum(hoopRedOp_t* op, void* scalar,
                                                    hoopDataType_t datatype,
                                                    hoopScalarResidence_t residence,
                                                    hoopComm_t comm) {
  (void)op;
  (void)scalar;
  (void)datatype;
  (void)residence;
  (void)comm;
  return hoopInvalidUsage;
}

static inline hoopResult_t hoopRedOpDestroy(hoopRedOp_t op, hoopComm_t comm) {
  (void)op;
  (void)comm;
  return hoopInvalidUsage;
}
#endif
