// The handles users hold: which requests are finished and how, which names are in flight, and
// waiting on them from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hoop/hoop.h"

namespace hoop::train {

class HandleTable {
 public:
  using Handle = uint64_t;

  // A new handle for `name`; throws hoop::Exception (hoopInvalidUsage) if this rank already has
  // a request of that name in flight: ranks match requests by name, so two would be ambiguous.
  Handle open(const std::string& name, const char* operation, int rank);
  // Marks the request finished (message empty on success) and frees its name for reuse.
  void complete(Handle handle, hoopResult_t code, std::string message);
  struct Completion {
    Handle handle;
    hoopResult_t code;
    std::string message;
  };
  // The same for a cycle's worth at once: one lock and one wake-up for all of them, instead of
  // waking the waiting threads once per request.
  void completeAll(std::vector<Completion>& completions);
  // Forgets a handle that was never handed to the user (a rejected group) and frees its name.
  void discard(Handle handle);

  // Hands the request's outcome to `callback` once it finished (at once, on this thread, when it
  // already has) and releases the handle then. Throws for a handle already released or already
  // given a callback.
  using Callback = std::function<void(hoopResult_t, const std::string&)>;
  void whenDone(Handle handle, Callback callback);

  // A handle given out and since released counts as finished (released handles succeeded, or
  // their failure was already thrown by wait()).
  bool poll(Handle handle);
  // Blocks until finished, releases the handle, throws hoop::Exception when it failed.
  void wait(Handle handle);
  // Waits until every handle up to `last` finished; releases the successful ones and throws the
  // first failure that no earlier waitUpTo threw (the failed handles stay for wait()).
  void waitUpTo(Handle last);
  // The most recent handle given out (0 before the first).
  Handle newest() const;

 private:
  struct State {
    std::string name;
    bool done = false;
    hoopResult_t code = hoopSuccess;
    std::string message;
    bool failureThrown = false;  // by waitUpTo
    Callback callback;           // whenDone's: called and released at completion
  };
  // The handle's state, or nullptr for a handle given out and already released.
  State* find(Handle handle, const char* call);

  mutable std::mutex mutex_;
  std::condition_variable finished_;
  std::unordered_map<Handle, State> states_;
  std::unordered_set<std::string> namesInFlight_;
  Handle next_ = 1;
};

}  // namespace hoop::train
