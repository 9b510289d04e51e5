//===- RawAttributes.h - Typed reads of verbatim attributes -----*- C++ -*-===//
//
// Private to lib/Hlo. Ops whose attributes the parser keeps verbatim
// (gather's dimension numbers, while's condition and body, sort's
// comparator, ...) are read here when they are evaluated, so that they still
// print back exactly as written:
//
//   offset_dims={1,2}       -> intListAttribute(inst, "offset_dims") = {1, 2}
//   index_vector_dim=1      -> intAttribute(inst, "index_vector_dim") = 1
//   body=%region_0.2        -> calleesAttribute(inst, "body") = {%region_0.2}
//
// Errors name the attribute and what was expected; the evaluator prefixes
// the instruction's position.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_HLO_RAWATTRIBUTES_H
#define TESSEL_LIB_HLO_RAWATTRIBUTES_H

#include "tessel/Hlo/HloModule.h"
#include "tessel/Support/Expected.h"

#include <optional>

namespace tessel::eval {

/// `key={a,b,...}`. An absent attribute is an empty list, or an error when
/// `required`.
Expected<std::vector<int64_t>> intListAttribute(const HloInstruction &inst,
                                                std::string_view key,
                                                bool required = false);
/// `key=N`. An absent attribute is `fallback`, or an error without one.
Expected<int64_t> intAttribute(const HloInstruction &inst, std::string_view key,
                               std::optional<int64_t> fallback = std::nullopt);
/// `key=true` / `key=false`; absent is false.
Expected<bool> boolAttribute(const HloInstruction &inst, std::string_view key);
/// `window={...}` with one dim per `rank`; absent is a window of `rank`
/// dims of size 1.
Expected<std::vector<WindowDim>> windowAttribute(const HloInstruction &inst,
                                                 int64_t rank);
/// The computations `key=%c` or `key={%a, %b}` names, looked up in the
/// module of the instruction. Absent is an empty list.
Expected<std::vector<const HloComputation *>>
calleesAttribute(const HloInstruction &inst, std::string_view key);
/// Checks that `dims` are distinct and in [0, rank); `what` names them.
Status checkDimList(const std::vector<int64_t> &dims, int64_t rank,
                    std::string_view what);

} // namespace tessel::eval

#endif // TESSEL_LIB_HLO_RAWATTRIBUTES_H
