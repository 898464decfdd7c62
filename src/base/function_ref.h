// A non-owning reference to a callable: what std::function would be without the allocation.
// The wait loop takes its predicates this way because it runs once per piece of every transfer.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace hoop {

template <typename Signature>
class FunctionRef;

template <typename Result, typename... Args>
class FunctionRef<Result(Args...)> {
 public:
  // The callable must outlive this reference (pass lambdas straight into the call).
  template <typename Callable,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<Callable>, FunctionRef>>>
  FunctionRef(Callable&& callable)  // NOLINT: implicit, like std::function
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(callable)))),
        invoke_([](void* object, Args... args) -> Result {
          return (*static_cast<std::remove_reference_t<Callable>*>(object))(
              std::forward<Args>(args)...);
        }) {}

  Result operator()(Args... args) const { return invoke_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  Result (*invoke_)(void*, Args...);
};

}  // namespace hoop
