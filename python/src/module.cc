// The compiled half of the hoop Python package. Python code (hoop/, hoop/torch/) builds the
// user-facing API on top of these thin, GIL-releasing calls.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "hoop/hoop.h"

PYBIND11_MODULE(_hoop, module) {
  module.doc() = "hoop collective communication runtime: low-level bindings";
  module.attr("VERSION_CODE") = HOOP_VERSION_CODE;
  hoop::python::bindErrors(module);
  hoop::python::bindCommunicator(module);
  hoop::python::bindEngine(module);
}
