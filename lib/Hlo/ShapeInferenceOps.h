//===- ShapeInferenceOps.h - Shapes of the ops with verbatim attributes ---===//
//
// Private to lib/Hlo. The verifier's shape inference for the ops whose
// attributes the parser keeps verbatim (while, conditional, gather, scatter,
// sort, topk and the TopK custom-call, convolution, rng-bit-generator,
// reduce-precision, complex, real, imag), with XLA's rules: dimension
// numbers in range and distinct, the called computations' signatures
// against the operands, attribute values in range. A message names what was
// found and what was expected; the verifier prefixes the instruction and its
// position:
//
//   %w = (s32[], f32[4]) while((s32[], f32[4]) %t), condition=%c, body=%b
//   with %b returning (s32[], f32[5])
//     -> "the body %b returns (s32[], f32[5]), expected (s32[], f32[4]) (the
//        operand's shape)"
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_HLO_SHAPEINFERENCEOPS_H
#define TESSEL_LIB_HLO_SHAPEINFERENCEOPS_H

#include "tessel/Hlo/HloModule.h"
#include "tessel/Support/Expected.h"

namespace tessel::infer {

/// Whether `inst` is one of the ops inferVerbatimShape knows.
bool hasVerbatimRules(const HloInstruction &inst);

/// The shape `inst` gives, or why its operands and attributes are not
/// valid. @pre hasVerbatimRules(inst)
Expected<Shape> inferVerbatimShape(const HloInstruction &inst);

} // namespace tessel::infer

#endif // TESSEL_LIB_HLO_SHAPEINFERENCEOPS_H
