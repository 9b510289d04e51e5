//===- RelayoutKernel.h - Kernels that only move data, as relayouts ------===//
//
// Private to lib/Codegen. A kernel whose ROOT is a transpose or a
// layout-changing copy of a parameter, with nothing else computed, moves
// each element from one physical place to another: exactly what
// tessel's relayout library does, with kernels chosen per CPU (vector
// register transposes, cache blocking, streaming stores; docs/relayout.md).
// On the CPU such a kernel runs as a relayout plan instead of its
// transpose emitter's code:
//
//   ROOT %t = f32[4096,4096]{1,0} transpose(f32[4096,4096]{1,0} %p),
//             dimensions={1,0}
//     -> relayout of f32[4096,4096] from {1,0} to {0,1}: the output buffer
//        holds %p's elements with dim 0 minor
//
// The result is the same bytes, padding included (a relayout writes every
// padding slot as zero, as the compiled kernels do).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_RELAYOUTKERNEL_H
#define TESSEL_LIB_CODEGEN_RELAYOUTKERNEL_H

#include "ModulePlan.h"

#include <optional>

namespace tessel {

/// A kernel of a plan that runs as a relayout: the parameter's buffer,
/// of `source` (shape and layout), becomes the output's buffer, which is
/// the same logical array in layout `destination`.
struct RelayoutKernel {
  int64_t parameter = 0;
  Shape source;
  Layout destination;
};

/// Whether kernel `k` of `plan` runs as a relayout: its one output is a
/// transpose or a copy of a computation parameter, of the same element
/// type, and a relayout plan exists for the two layouts.
std::optional<RelayoutKernel> findRelayoutKernel(const ModulePlan &plan,
                                                 size_t k);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_RELAYOUTKERNEL_H
