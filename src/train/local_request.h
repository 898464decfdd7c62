// One request as the rank that submitted it holds it: the agreed-on shape plus this rank's buffers
// and its handle.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "hoop/train.hpp"
#include "train/request_shape.h"

namespace hoop::train {

struct LocalRequest {
  std::string name;
  RequestShape shape;
  const void* send = nullptr;
  void* recv = nullptr;
  Engine::Allocator allocate;      // allgather and uneven alltoall
  std::vector<size_t> sendCounts;  // uneven alltoall: elements for each destination rank
  Engine::Handle handle = 0;
  std::chrono::steady_clock::time_point submittedAt;
  // When the engine's thread took it in, and when the ranks agreed to run it (the timeline's
  // queueing and negotiation).
  std::chrono::steady_clock::time_point adoptedAt;
  std::chrono::steady_clock::time_point agreedAt;
  bool announcedByName = false;  // sent to the other ranks by name (so the cache no longer applies)
};

}  // namespace hoop::train
