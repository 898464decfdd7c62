// hoop::Exception becomes hoop.HoopError. The message is hoop's own (it names the operation, the
// rank and the peer); `code` is the hoopResult_t as an int and `code_name` its hoopGetErrorString.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "hoop/hoop.hpp"

namespace py = pybind11;

namespace hoop::python {

void bindErrors(py::module_& module) {
  // Lives as long as the interpreter: the translator below refers to it.
  static py::exception<hoop::Exception> error_type(module, "HoopError");
  py::register_exception_translator([](std::exception_ptr pending) {
    try {
      if (pending) std::rethrow_exception(pending);
    } catch (const hoop::Exception& e) {
      py::object error = py::handle(error_type.ptr())(e.what());
      error.attr("code") = static_cast<int>(e.code());
      error.attr("code_name") = hoopGetErrorString(e.code());
      PyErr_SetObject(error_type.ptr(), error.ptr());
    }
  });
}

}  // namespace hoop::python
