#include "train/handle_table.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "hoop/hoop.hpp"

namespace hoop::train {

HandleTable::Handle HandleTable::open(const std::string& name, const char* operation, int rank) {
  std::lock_guard lock(mutex_);
  if (!namesInFlight_.insert(name).second) {
    throw Exception(hoopInvalidUsage, "rank " + std::to_string(rank) + ": " + operation +
                                          " of tensor '" + name +
                                          "': a request with this name is still in flight on this "
                                          "rank; wait for it before submitting the name again");
  }
  const Handle handle = next_++;
  states_.emplace(handle, State{name, false, hoopSuccess, "", false, nullptr});
  return handle;
}

void HandleTable::complete(Handle handle, hoopResult_t code, std::string message) {
  std::vector<Completion> one;
  one.push_back({handle, code, std::move(message)});
  completeAll(one);
}

void HandleTable::completeAll(std::vector<Completion>& completions) {
  if (completions.empty()) return;
  // Callbacks run after the lock is released: they may submit new requests, which open handles.
  std::vector<std::pair<Callback, Completion*>> callbacks;
  {
    std::lock_guard lock(mutex_);
    for (Completion& completion : completions) {
      auto state = states_.find(completion.handle);
      if (state == states_.end() || state->second.done) continue;
      namesInFlight_.erase(state->second.name);
      if (state->second.callback) {
        callbacks.emplace_back(std::move(state->second.callback), &completion);
        states_.erase(state);
        continue;
      }
      state->second.done = true;
      state->second.code = completion.code;
      state->second.message = std::move(completion.message);
    }
  }
  finished_.notify_all();
  for (auto& [callback, completion] : callbacks) callback(completion->code, completion->message);
}

void HandleTable::whenDone(Handle handle, Callback callback) {
  std::unique_lock lock(mutex_);
  State* state = find(handle, "whenDone");
  if (state == nullptr || state->callback) {
    throw Exception(hoopInvalidUsage, "whenDone: handle " + std::to_string(handle) +
                                          " was already waited for or given a callback");
  }
  if (!state->done) {
    state->callback = std::move(callback);
    return;
  }
  const hoopResult_t code = state->code;
  const std::string message = std::move(state->message);
  states_.erase(handle);
  lock.unlock();
  callback(code, message);
}

void HandleTable::discard(Handle handle) {
  std::lock_guard lock(mutex_);
  auto state = states_.find(handle);
  if (state == states_.end()) return;
  if (!state->second.done) namesInFlight_.erase(state->second.name);
  states_.erase(state);
}

HandleTable::State* HandleTable::find(Handle handle, const char* call) {
  auto state = states_.find(handle);
  if (state != states_.end()) return &state->second;
  if (handle == 0 || handle >= next_) {
    throw Exception(hoopInvalidArgument, std::string(call) + ": unknown handle " +
                                             std::to_string(handle) + " (never given out)");
  }
  return nullptr;
}

bool HandleTable::poll(Handle handle) {
  std::lock_guard lock(mutex_);
  const State* state = find(handle, "poll");
  return state == nullptr || state->done;
}

void HandleTable::wait(Handle handle) {
  std::unique_lock lock(mutex_);
  State* state = find(handle, "wait");
  if (state == nullptr) return;
  finished_.wait(lock, [&] { return state->done; });
  const hoopResult_t code = state->code;
  std::string message = std::move(state->message);
  states_.erase(handle);
  if (code != hoopSuccess) throw Exception(code, message);
}

void HandleTable::waitUpTo(Handle last) {
  std::unique_lock lock(mutex_);
  std::optional<Exception> firstFailure;
  for (;;) {
    std::vector<Handle> finished;
    bool unfinished = false;
    for (auto& [handle, state] : states_) {
      if (handle > last) continue;
      if (state.done) {
        finished.push_back(handle);
      } else {
        unfinished = true;
      }
    }
    std::sort(finished.begin(), finished.end());
    for (Handle handle : finished) {
      State& state = states_.at(handle);
      if (state.code == hoopSuccess) {
        states_.erase(handle);
      } else if (!state.failureThrown && !firstFailure) {
        state.failureThrown = true;
        firstFailure.emplace(state.code, state.message);
      }
    }
    if (!unfinished) break;
    finished_.wait(lock);
  }
  if (firstFailure) throw *firstFailure;
}

HandleTable::Handle HandleTable::newest() const {
  std::lock_guard lock(mutex_);
  return next_ - 1;
}

}  // namespace hoop::train
