//===- HloOpcode.h - The opcodes of HLO -------------------------*- C++ -*-===//
//
// Every opcode XLA prints, with its spelling in HLO text. The parser and the
// printer know them all, so any XLA dump reads and prints back; the verifier
// and the evaluator support the ones marked `supported` below and report the
// others by name:
//
//   hloOpcodeName(HloOpcode::DynamicSlice)    -> "dynamic-slice"
//   parseHloOpcode("exponential-minus-one")   -> HloOpcode::ExponentialMinusOne
//   isSupportedOpcode(HloOpcode::Convolution) -> true
//   isSupportedOpcode(HloOpcode::Fft)         -> false
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_HLOOPCODE_H
#define TESSEL_HLO_HLOOPCODE_H

#include <optional>
#include <string_view>

namespace tessel {

// X(EnumName, "spelling", supported by the verifier and evaluator)
#define TESSEL_HLO_OPCODES(X)                                                  \
  X(Abs, "abs", true)                                                          \
  X(Add, "add", true)                                                          \
  X(AddDependency, "add-dependency", false)                                    \
  X(AfterAll, "after-all", false)                                              \
  X(AllGather, "all-gather", false)                                            \
  X(AllGatherDone, "all-gather-done", false)                                   \
  X(AllGatherStart, "all-gather-start", false)                                 \
  X(AllReduce, "all-reduce", false)                                            \
  X(AllReduceDone, "all-reduce-done", false)                                   \
  X(AllReduceStart, "all-reduce-start", false)                                 \
  X(AllToAll, "all-to-all", false)                                             \
  X(And, "and", true)                                                          \
  X(AsyncDone, "async-done", false)                                            \
  X(AsyncStart, "async-start", false)                                          \
  X(AsyncUpdate, "async-update", false)                                        \
  X(Atan2, "atan2", true)                                                      \
  X(BatchNormGrad, "batch-norm-grad", false)                                   \
  X(BatchNormInference, "batch-norm-inference", false)                         \
  X(BatchNormTraining, "batch-norm-training", false)                           \
  X(Bitcast, "bitcast", true)                                                  \
  X(BitcastConvert, "bitcast-convert", true)                                   \
  X(Broadcast, "broadcast", true)                                              \
  X(Call, "call", true)                                                        \
  X(Cbrt, "cbrt", true)                                                        \
  X(Ceil, "ceil", true)                                                        \
  X(Cholesky, "cholesky", false)                                               \
  X(Clamp, "clamp", true)                                                      \
  X(CollectiveBroadcast, "collective-broadcast", false)                        \
  X(CollectivePermute, "collective-permute", false)                            \
  X(CollectivePermuteDone, "collective-permute-done", false)                   \
  X(CollectivePermuteStart, "collective-permute-start", false)                 \
  X(Compare, "compare", true)                                                  \
  X(Complex, "complex", true)                                                  \
  X(Concatenate, "concatenate", true)                                          \
  X(Conditional, "conditional", true)                                          \
  X(Constant, "constant", true)                                                \
  X(Convert, "convert", true)                                                  \
  X(Convolution, "convolution", true)                                          \
  X(Copy, "copy", true)                                                        \
  X(CopyDone, "copy-done", false)                                              \
  X(CopyStart, "copy-start", false)                                            \
  X(Cosine, "cosine", true)                                                    \
  X(CountLeadingZeros, "count-leading-zeros", true)                            \
  X(CustomCall, "custom-call", false)                                          \
  X(Divide, "divide", true)                                                    \
  X(Domain, "domain", false)                                                   \
  X(Dot, "dot", true)                                                          \
  X(DynamicReshape, "dynamic-reshape", false)                                  \
  X(DynamicSlice, "dynamic-slice", true)                                       \
  X(DynamicUpdateSlice, "dynamic-update-slice", true)                          \
  X(Erf, "erf", true)                                                          \
  X(Exp, "exponential", true)                                                  \
  X(ExponentialMinusOne, "exponential-minus-one", true)                        \
  X(Fft, "fft", false)                                                         \
  X(Floor, "floor", true)                                                      \
  X(Fusion, "fusion", true)                                                    \
  X(Gather, "gather", true)                                                    \
  X(GetDimensionSize, "get-dimension-size", false)                             \
  X(GetTupleElement, "get-tuple-element", true)                                \
  X(Imag, "imag", true)                                                        \
  X(Infeed, "infeed", false)                                                   \
  X(Iota, "iota", true)                                                        \
  X(IsFinite, "is-finite", true)                                               \
  X(Log, "log", true)                                                          \
  X(LogPlusOne, "log-plus-one", true)                                          \
  X(Logistic, "logistic", true)                                                \
  X(Map, "map", true)                                                          \
  X(Maximum, "maximum", true)                                                  \
  X(Minimum, "minimum", true)                                                  \
  X(Multiply, "multiply", true)                                                \
  X(Negate, "negate", true)                                                    \
  X(Not, "not", true)                                                          \
  X(OptimizationBarrier, "opt-barrier", false)                                 \
  X(Or, "or", true)                                                            \
  X(Outfeed, "outfeed", false)                                                 \
  X(Pad, "pad", true)                                                          \
  X(Parameter, "parameter", true)                                              \
  X(PartitionId, "partition-id", false)                                        \
  X(PopulationCount, "popcnt", true)                                           \
  X(Power, "power", true)                                                      \
  X(Real, "real", true)                                                        \
  X(Recv, "recv", false)                                                       \
  X(RecvDone, "recv-done", false)                                              \
  X(Reduce, "reduce", true)                                                    \
  X(ReducePrecision, "reduce-precision", true)                                 \
  X(ReduceScatter, "reduce-scatter", false)                                    \
  X(ReduceWindow, "reduce-window", true)                                       \
  X(Remainder, "remainder", true)                                              \
  X(ReplicaId, "replica-id", false)                                            \
  X(Reshape, "reshape", true)                                                  \
  X(Reverse, "reverse", true)                                                  \
  X(Rng, "rng", false)                                                         \
  X(RngBitGenerator, "rng-bit-generator", true)                                \
  X(RngGetAndUpdateState, "rng-get-and-update-state", false)                   \
  X(RoundNearestAfz, "round-nearest-afz", true)                                \
  X(RoundNearestEven, "round-nearest-even", true)                              \
  X(Rsqrt, "rsqrt", true)                                                      \
  X(Scatter, "scatter", true)                                                  \
  X(Select, "select", true)                                                    \
  X(SelectAndScatter, "select-and-scatter", false)                             \
  X(Send, "send", false)                                                       \
  X(SendDone, "send-done", false)                                              \
  X(SetDimensionSize, "set-dimension-size", false)                             \
  X(ShiftLeft, "shift-left", true)                                             \
  X(ShiftRightArithmetic, "shift-right-arithmetic", true)                      \
  X(ShiftRightLogical, "shift-right-logical", true)                            \
  X(Sign, "sign", true)                                                        \
  X(Sine, "sine", true)                                                        \
  X(Slice, "slice", true)                                                      \
  X(Sort, "sort", true)                                                        \
  X(Sqrt, "sqrt", true)                                                        \
  X(StochasticConvert, "stochastic-convert", false)                            \
  X(Subtract, "subtract", true)                                                \
  X(Tan, "tan", true)                                                          \
  X(Tanh, "tanh", true)                                                        \
  X(TopK, "topk", true)                                                        \
  X(Transpose, "transpose", true)                                              \
  X(TriangularSolve, "triangular-solve", false)                                \
  X(Tuple, "tuple", true)                                                      \
  X(While, "while", true)                                                      \
  X(Xor, "xor", true)

enum class HloOpcode {
#define TESSEL_HLO_OPCODE_ENUM(name, spelling, supported) name,
  TESSEL_HLO_OPCODES(TESSEL_HLO_OPCODE_ENUM)
#undef TESSEL_HLO_OPCODE_ENUM
};

/// The spelling in HLO text ("get-tuple-element").
std::string_view hloOpcodeName(HloOpcode opcode);
/// The opcode spelled `name`, nullopt when XLA has none by that name.
std::optional<HloOpcode> parseHloOpcode(std::string_view name);
/// Whether the verifier and the evaluator know the op's semantics.
bool isSupportedOpcode(HloOpcode opcode);

/// abs, negate, exponential, ..., count-leading-zeros: one operand, same
/// shape (is-finite gives pred).
bool isElementwiseUnary(HloOpcode opcode);
/// add, ..., shift-right-arithmetic: two operands of one shape.
bool isElementwiseBinary(HloOpcode opcode);
/// Elementwise in the sense of indexing: every operand is read at the output
/// index (unary, binary, select, clamp, compare, convert, reduce-precision,
/// map, bitcast-convert). A bitcast-convert between widths adds or drops a
/// minor dim, so callers that need the output index compare the dims.
bool isElementwise(HloOpcode opcode);

} // namespace tessel

#endif // TESSEL_HLO_HLOOPCODE_H
