//===- RngBits.h - rng-bit-generator, one element at a time -----*- C++ -*-===//
//
// Private to lib/Codegen. `(state', bits) = rng-bit-generator(state)` as
// two elementwise functions of the state, so that the element emitter
// computes `get-tuple-element(rng, k)` at any index like any other value:
//
//   state'[i]: the state, with the counter advanced by the blocks the bits
//     take (element 1; Philox's 128-bit counter carries into element 2);
//   bits[idx]: the Threefry-2x32 or Philox-4x32 block of the element's
//     counter (the state's counter plus the element's block number, from
//     its row-major index), the word the element takes of it.
//
// The rules (which block and word, rng_default = Philox, narrow results)
// are the evaluator's (lib/Hlo/EvaluatorRng.cpp), bit for bit. A block
// gives 2 or 4 elements, each computes it again: correct, not fast.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_RNGBITS_H
#define TESSEL_LIB_CODEGEN_RNGBITS_H

#include "tessel/Hlo/HloModule.h"

#include "mlir/IR/Builders.h"

#include <functional>
#include <string>

namespace tessel {

/// Element `indices` of result `element` (0: the new state, 1: the bits)
/// of `rng`, with `readState(i)` the state's element at index i (an index
/// value) as an i64. Null with `error` set when the instruction's shapes
/// or algorithm are not ones the evaluator runs.
mlir::Value emitRngBitGeneratorElement(
    mlir::OpBuilder &b, mlir::Location loc, const HloInstruction &rng,
    int64_t element, mlir::ValueRange indices,
    const std::function<mlir::Value(mlir::Value)> &readState,
    std::string &error);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_RNGBITS_H
