// Pieces of the hoop._hoop extension module, each defined in its own file and called from
// PYBIND11_MODULE in module.cc.
#pragma once

#include <pybind11/pybind11.h>

namespace hoop::python {

// hoop.HoopError, raised for every hoop::Exception with the message and a `code` attribute.
void bindErrors(pybind11::module_& module);
// hoop._hoop.Communicator over the C API, plus the data type and operation constants.
void bindCommunicator(pybind11::module_& module);
// hoop._hoop.Engine, the training engine of include/hoop/train.hpp (hoop.torch's collectives).
void bindEngine(pybind11::module_& module);

}  // namespace hoop::python
