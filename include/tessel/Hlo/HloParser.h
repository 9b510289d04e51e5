//===- HloParser.h - Read HLO text as XLA and JAX print it ------*- C++ -*-===//
//
// Reads a module in XLA's text format:
//
//   HloModule jit_f, entry_computation_layout={(f32[4]{0})->f32[4]{0}}
//
//   ENTRY main.3 {
//     x.1 = f32[4]{0} parameter(0)
//     ROOT neg.2 = f32[4]{0} negate(x.1)
//   }
//
// Accepted: the `HloModule` line with any attributes (entry_computation_layout
// is typed, the others are kept verbatim), XLA's stack-frame index sections
// (FileNames, FunctionNames, FileLocations, StackFrames), computations with
// or without their program shape `(x: f32[4]) -> f32[4]`, `ENTRY`, `ROOT`,
// names with or without `%`, operands with or without their shapes, shapes
// with (tiled) layouts, tuples, constants of every element type (arrays
// nested in braces, `{...}` for elided contents, inf/nan, complex pairs),
// `/* */` and `//` comments, and attributes tessel does not interpret
// (metadata, backend_config, sharding, frontend_attributes, ...) kept
// verbatim. Operands and called computations must be defined before use
// in their computation; computations may be called before they are defined.
//
// Errors give the 1-based line and column and what was expected:
//
//   3:22: expected ')' or ',' after an operand but found 'x'
//   5:3: use of undefined instruction %y
//
// The parser checks syntax and names; shapes are checked by the verifier.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_HLOPARSER_H
#define TESSEL_HLO_HLOPARSER_H

#include "tessel/Hlo/HloModule.h"
#include "tessel/Support/Expected.h"

#include <memory>
#include <string_view>

namespace tessel {

/// Parses a whole module. An error is located in `text` (line, column, the
/// offending line); name the file with `Error::inSource`.
Expected<std::unique_ptr<HloModule>> parseHloModule(std::string_view text);

/// Parses a literal for a shape: `1.5`, `{1, 2}`, `{ { 1 }, { 2 } }`,
/// `(1, {2})` for tuples. An error is located in `text`.
Expected<Literal> parseLiteral(std::string_view text, const Shape &shape);

/// Parses the value of a `window=` attribute, `{size=3x2 stride=2x1
/// pad=1_2x0_1 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1}` (convolution
/// keeps it verbatim). An error is located in `text`.
Expected<std::vector<WindowDim>> parseWindow(std::string_view text);

} // namespace tessel

#endif // TESSEL_HLO_HLOPARSER_H
