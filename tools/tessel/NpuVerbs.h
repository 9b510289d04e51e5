//===- NpuVerbs.h - The verbs of `tessel npu` -------------------*- C++ -*-===//
#ifndef TESSEL_TOOLS_NPUVERBS_H
#define TESSEL_TOOLS_NPUVERBS_H

namespace tessel::npucli {

/// tessel npu draw (NpuDraw.cpp).
int runDraw(int argc, char **argv);
/// tessel npu fit (NpuFit.cpp).
int runFit(int argc, char **argv);

} // namespace tessel::npucli

#endif // TESSEL_TOOLS_NPUVERBS_H
