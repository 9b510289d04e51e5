//===- Module.cpp - The extension module tessel._tessel -------------------===//
#include "Bindings.h"

NB_MODULE(_tessel, m) {
  m.doc() = "tessel's C++ libraries; import the package `tessel` instead.";
  tessel::python::bindLayout(m);
  tessel::python::bindRelayout(m);
  tessel::python::bindHlo(m);
  tessel::python::bindCodegen(m);
  tessel::python::bindNpu(m);
  tessel::python::bindAnalysis(m);
}
