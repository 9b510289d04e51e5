//===- HloVerifier.h - Shape inference and module checks --------*- C++ -*-===//
//
// inferShape computes the shape an instruction must have from its operands,
// attributes and called computations, following XLA's shape inference; the
// verifier compares it with the declared shape (element type and dims; the
// layout is free) and checks the module's structure:
//
//   %r = f32[5] add(f32[4] %a, f32[4] %b)
//   -> "3:3: %r: declared shape f32[5] does not match the inferred f32[4]"
//
// Structure: one ENTRY, parameters numbered 0..n-1 once each, calls that
// form no cycle, called computations whose parameters match the caller's
// operands, entry_computation_layout agreeing with the entry. Opcodes that
// are not supported (HloOpcode.h) are parsed and printed but not checked
// here; the evaluator refuses them by name.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_HLOVERIFIER_H
#define TESSEL_HLO_HLOVERIFIER_H

#include "tessel/Hlo/HloModule.h"
#include "tessel/Support/Expected.h"

#include <optional>

namespace tessel {

/// The shape `inst` must have (no layout), or why its operands and
/// attributes are inconsistent. @pre the opcode is supported.
Expected<Shape> inferShape(const HloInstruction &inst);

/// Same element types, dims and tuple structure; layouts are ignored.
bool compatibleShapes(const Shape &a, const Shape &b);

/// The first problem of the module, or nullopt when it is valid. Messages
/// read "LINE:COLUMN: %name: what is wrong".
Status verifyHloModule(const HloModule &module);

} // namespace tessel

#endif // TESSEL_HLO_HLOVERIFIER_H
