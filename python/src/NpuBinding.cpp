//===- NpuBinding.cpp - tessel.npu ----------------------------------------===//
#include "Bindings.h"

namespace tessel::python {

void bindNpu(nb::module_ &) {}

} // namespace tessel::python
