//===- HloEvaluator.h - Exact reference evaluator for HLO -------*- C++ -*-===//
//
// Runs a module on concrete arrays with XLA's semantics, one instruction at
// a time, as the reference that generated kernels are checked against:
//
//   auto module = parseHloModule(text);             // ENTRY: negate(f32[2])
//   Literal x(Shape(PrimitiveType::F32, {2}));
//   x.setDouble(0, 1.5);
//   Expected<Literal> y = evaluateHloModule(**module, {x});  // {-1.5, -0}
//
// Semantics (docs/hlo.md lists them with examples):
//   - bf16, f16 and f8 ops compute in f32 and round the result to the type
//     (nearest, ties to even) after every op, as XLA:CPU does; f32 ops in
//     f32, f64 in f64. Transcendental functions use the C library's, which
//     agree with XLA's own approximations to a few ulps, not bit for bit.
//   - integers wrap around; x / 0 = -1, x % 0 = x, INT_MIN / -1 = INT_MIN,
//     INT_MIN % -1 = 0; shifts by >= the bit width give 0 (or the sign for
//     shift-right-arithmetic); integer power with a negative exponent is 1
//     for a base of 1 and 0 otherwise.
//   - maximum/minimum propagate NaN and order -0 below +0.
//   - float -> integer convert saturates and sends NaN to 0.
//   - dot accumulates products in f64 (f32 and narrower) and rounds once;
//     reduce and reduce-window apply to_apply in row-major order of the
//     reduced elements.
//   - bitcast reinterprets the physical buffer, so layouts (tiled ones too)
//     of its operand and result matter; every other op is layout-agnostic.
//
// Arrays are logical (row-major Literals). `toPhysical`/`fromPhysical`
// (Literal.h) move them to and from the buffers of a layout.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_HLOEVALUATOR_H
#define TESSEL_HLO_HLOEVALUATOR_H

#include "tessel/Hlo/HloModule.h"
#include "tessel/Support/Expected.h"

#include <complex>
#include <optional>
#include <vector>

namespace tessel {

/// Whose floating-point choices the evaluator makes where XLA's semantics
/// leave them open (the order of a reduction, fused multiply-add).
enum class Numerics {
  /// The reference: reduce folds its elements one by one in row-major
  /// order, dot accumulates in f64 and rounds once, every op rounds its
  /// result.
  Exact,
  /// XLA:CPU's (jax 0.10.2 on x86-64), so that outputs compare bit for bit
  /// (docs/hlo.md, "Numerics"):
  /// - reduce (one operand) as XLA's tree reduction rewrite: while a reduced
  ///   dim is longer than kXlaCpuReduceWindow, a reduce-window of that size
  ///   (stride the same, XLA's "same" padding) folds each window in
  ///   row-major order, and the reduce runs on the windows' results;
  /// - dot of f32 or f64: one accumulator of the result type per output,
  ///   fused multiply-adds in row-major order of the contracting dims;
  /// - add or subtract of f32 or f64 whose operand is a multiply with no
  ///   other user: one fused multiply-add (LLVM's contraction), the first
  ///   operand's multiply when both are.
  /// Not reproduced: XLA hands reductions of 4096 elements or more and most
  /// dots to YNNPACK, whose order depends on the host's vector width and
  /// threads, and LLVM vectorizes some reductions over several dims.
  XlaCpu,
};

/// The window of XLA:CPU's tree reduction rewrite.
inline constexpr int64_t kXlaCpuReduceWindow = 32;

struct EvaluatorOptions {
  /// Refuse to create a value with more elements than this.
  int64_t maxElements = int64_t(1) << 31;
  /// Refuse to create a value of more bytes than this; 0 means half of the
  /// machine's physical memory. Checked before allocating, so a module
  /// that asks for too much memory gets an error, never an abort.
  int64_t maxBytes = 0;
  /// The most iterations all `while` loops of one evaluation may run
  /// together; a loop that would run more is stopped with an error that
  /// names it (a runaway loop, or a real one that needs a higher limit).
  int64_t maxSteps = 100'000'000;
  /// Reduce as the compiled kernels do (reducesInPartials): `tessel run
  /// --check` compares them with the evaluator bit for bit this way. Off,
  /// every reduce adds its elements one by one in row-major order.
  bool compilerReductionOrder = false;
  /// Exact by default; XlaCpu reproduces XLA:CPU's order and contraction
  /// (takes precedence over compilerReductionOrder).
  Numerics numerics = Numerics::Exact;
};

/// The partial results of the compiler's reduction order.
inline constexpr int64_t kReductionPartials = 16;

/// Whether the compiled kernels reduce `reduce` in partial results rather
/// than one element after the other: a reduce of one operand by a lone add
/// of f32 or f64, or a max or min of bf16 or f16 (whose result does not
/// depend on the order), whose last reduced dim is the operand's minor dim
/// in memory (untiled) with at least 2 * kReductionPartials elements. For
/// each index of the other reduced dims (in row-major order), the kernel
/// runs that dim as 16 partial results over consecutive elements (partial j
/// starts at element j and takes j + 16, j + 32, ...), folds the partials
/// into the accumulator in order 0..15, then the elements past the last
/// whole run of 16 one by one. A sum of n elements in this order is within
/// (n / 16 + 33) u sum |x| of the exact sum (u = 2^-24 for f32), the
/// one-by-one sum within (n - 1) u sum |x|: the two differ by at most the
/// sum of both (HloEvaluatorTest checks it on random rows).
bool reducesInPartials(const HloInstruction &reduce);

/// Whether the bits of `reduce`'s result do not depend on the order its
/// elements are combined in, NaN payloads aside (a NaN stays a NaN, and
/// kernel checks count any NaN equal to any other): a reduce of one operand
/// by a lone maximum or minimum of f16, bf16, f32 or f64 (the evaluator
/// orders +0 above -0, so max and min are associative and commutative in
/// the bits), or a lone add, multiply, maximum, minimum, and, or or xor of
/// an integer of 8 to 64 bits (wrapping arithmetic), or an and, or or xor
/// of pred. The GPU's row reduction combines such reduces in any order
/// (HeroAnalysis.h); HloEvaluatorTest checks that a reversed operand gives
/// the same bits.
bool reducesInAnyOrder(const HloInstruction &reduce);

/// Rows per segment of the compiler's column-sum order.
inline constexpr int64_t kColumnSumSegmentRows = 256;

/// Whether the columns of `reduce` (one operand) can be reduced in
/// segments of kColumnSumSegmentRows rows: its operand is row-major and
/// untiled, its reduced dims are the leading dims (0 to m - 1, R elements
/// per output, at least 512), and it keeps at least 16 elements. The last
/// segment is shorter where 256 does not divide R. The compiler splits such a
/// reduce in two (ModulePlan.cpp) when it is a sum below or reduces in any
/// order (reducesInAnyOrder: a column maximum gets the same bits either way).
bool hasColumnSegments(const HloInstruction &reduce);

/// Whether the compiled kernels sum the columns of `reduce` in segments of
/// kColumnSumSegmentRows rows rather than one row after the other: a
/// reduce of one operand by a lone add of f32 or f64 with column segments
/// (hasColumnSegments). Each output element is then
/// `init + s_0 + s_1 + ... + s_{K-1}` (K = ceil(R / 256), added in that
/// order), where `s_k = +0 + x_{256 k} + ... + x_{min(256 k + 255, R - 1)}`
/// adds the rows of segment k one by one in row-major order. The compiler
/// splits such a reduce in two (ModulePlan.cpp): the segments' sums of all
/// columns, a block per segment reading its rows contiguously, then their sum.
/// A sum of R rows in this order is within (256 + K) u sum |x| of the exact
/// sum (u = 2^-24 for f32), the one-by-one sum within (R - 1) u sum |x|
/// (HloEvaluatorTest checks it on random columns).
bool sumsColumnsInSegments(const HloInstruction &reduce);

/// How rng-bit-generator's Threefry pairs the elements of a result of
/// `dims` whose values are narrower than 64 bits into blocks of two
/// neighbours along `split` (the first even dim, else the first largest
/// one; -1 for a scalar): `half` is `dims` with the split dim halved,
/// rounded up, and `blocks` the number of blocks. Shared by the evaluator
/// and the compiler (lib/Codegen/RngBits.cpp), which must agree bit for bit.
struct ThreefryPairs {
  int64_t split = -1;
  std::vector<int64_t> half;
  int64_t blocks = 1;
};
ThreefryPairs threefryPairs(const std::vector<int64_t> &dims);

/// Evaluates the ENTRY computation. The arguments must match the entry's
/// parameters in element type and dims. @pre the module verifies
/// (verifyHloModule); an unverified module may give an error, never a crash.
Expected<Literal> evaluateHloModule(const HloModule &module,
                                    const std::vector<Literal> &arguments,
                                    const EvaluatorOptions &options = {});

/// Evaluates one computation on arguments (see evaluateHloModule).
Expected<Literal> evaluateComputation(const HloComputation &computation,
                                      const std::vector<Literal> &arguments,
                                      const EvaluatorOptions &options = {});

/// Evaluates one instruction on the values of its operands (in operand
/// order, of the operands' shapes): what the compiler uses to fold an
/// instruction computed from constants alone. Not for a parameter.
Expected<Literal> evaluateInstruction(const HloInstruction &instruction,
                                      const std::vector<Literal> &operands,
                                      const EvaluatorOptions &options = {});

/// The evaluator's complex transcendental ops on one element, in double
/// (what c64 and c128 compute before rounding each part to the type): the
/// unary ops exp, exponential-minus-one, log, log-plus-one, sqrt, rsqrt,
/// tanh, sine, cosine, tan, logistic and sign, or nullopt for another op.
/// The compiler's CPU kernels call these (ComplexRuntime.h), so that they
/// agree with the evaluator bit for bit.
std::optional<std::complex<double>>
evaluateComplexUnary(HloOpcode op, std::complex<double> z);
/// The evaluator's complex power x^y in double: 0^0 = 1, 0^y = 0, else the
/// C library's cpow.
std::complex<double> evaluateComplexPower(std::complex<double> x,
                                          std::complex<double> y);

} // namespace tessel

#endif // TESSEL_HLO_HLOEVALUATOR_H
