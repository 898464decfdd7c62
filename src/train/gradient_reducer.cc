// GradientReducer: a fixed set of named gradient buffers reduced in place once per step.
#include <map>
#include <optional>
#include <vector>

#include "hoop/train.hpp"

namespace hoop::train {

struct GradientReducer::Impl {
  struct Buffer {
    void* data;
    size_t count;
    hoopDataType_t type;
    std::optional<Engine::Handle> inFlight;  // set between ready() and synchronize()
  };
  Engine& engine;
  hoopRedOp_t op;
  double prescale;
  double postscale;
  std::map<std::string, Buffer> buffers;  // sorted: synchronize() submits leftovers in one order

  void start(const std::string& name, Buffer& buffer) {
    buffer.inFlight = engine.allReduce(name, buffer.data, buffer.data, buffer.count, buffer.type,
                                       op, prescale, postscale);
  }
};

GradientReducer::GradientReducer(Engine& engine, hoopRedOp_t op, double prescale, double postscale)
    : impl_(std::make_unique<Impl>(Impl{engine, op, prescale, postscale, {}})) {}

GradientReducer::~GradientReducer() {
  // Buffers may be freed right after this: do not leave the engine writing into them.
  for (auto& [name, buffer] : impl_->buffers) {
    if (!buffer.inFlight) continue;
    try {
      impl_->engine.wait(*buffer.inFlight);
    } catch (const Exception&) {
      // Already reported to whoever called synchronize(); a destructor must not throw.
    }
  }
}

void GradientReducer::registerBuffer(std::string name, void* data, size_t count,
                                     hoopDataType_t type) {
  if (impl_->buffers.count(name) != 0) {
    throw Exception(hoopInvalidUsage, "GradientReducer: '" + name + "' is already registered");
  }
  impl_->buffers.emplace(std::move(name), Impl::Buffer{data, count, type, std::nullopt});
}

void GradientReducer::ready(const std::string& name) {
  auto found = impl_->buffers.find(name);
  if (found == impl_->buffers.end()) {
    throw Exception(hoopInvalidUsage, "GradientReducer: ready('" + name +
                                          "') for a name never "
                                          "registered");
  }
  if (found->second.inFlight) {
    throw Exception(hoopInvalidUsage, "GradientReducer: '" + name +
                                          "' is already being reduced in this step; call "
                                          "synchronize() before marking it ready again");
  }
  impl_->start(name, found->second);
}

void GradientReducer::synchronize() {
  for (auto& [name, buffer] : impl_->buffers) {
    if (!buffer.inFlight) impl_->start(name, buffer);
  }
  std::optional<Exception> firstFailure;
  for (auto& [name, buffer] : impl_->buffers) {
    const Engine::Handle handle = *buffer.inFlight;
    buffer.inFlight.reset();
    try {
      impl_->engine.wait(handle);
    } catch (const Exception& e) {
      if (!firstFailure) firstFailure = e;
    }
  }
  if (firstFailure) throw *firstFailure;
}

}  // namespace hoop::train
