//===- ModulePlan.h - An HLO module as a sequence of kernels ----*- C++ -*-===//
//
// Private to lib/Codegen. Which kernels a module runs, in order, and which
// buffers each reads and writes:
//
//   ENTRY { p0 = parameter(0)               buffer 0 (input 0)
//           f = fusion(p0), calls=gelu      kernel_0: reads 0, writes 1
//           ROOT n = negate(f) }            kernel_1: reads 1, writes 2
//
// A fusion is a kernel of its called computation; any other instruction
// that computes something becomes a kernel of a one-instruction computation
// made for it. An ENTRY without fusions is compiled as one computation,
// unless it has a tuple other than its ROOT or control flow: then every
// instruction is a kernel. A computation is split at its *materialized* values:
// a reduce, reduce-window or dot that is read at other indices than its own
// (through a broadcast: softmax, layer norm) gets a kernel of its own, with
// what it reads, and the rest reads its buffer, so that it is computed once
// rather than once per element that reads it:
//
//   fusion %f: rowmax = reduce(x); e = exp(x - broadcast(rowmax));
//              rowsum = reduce(e); ROOT e / broadcast(rowsum)
//     kernel_0: %rowmax once          reads x, writes rowmax
//     kernel_1: %rowsum once          reads x, rowmax (e computed again)
//     kernel_2: the ROOT              reads x, rowmax, rowsum
//
// An epilogue read at the value's own index (mean = sum / n) stays in its
// kernel. opt-barrier and the Sharding custom-call name their operand's
// buffers. A computation whose outputs have different dims becomes one
// kernel per dims. A sort (or TopK) is a kernel of its own, with two
// scratch buffers of positions (PlannedKernel::scratch); jax wraps sorts in
// calls, which are planned in place like any call (below). Each
// get-tuple-element of an rng-bit-generator gets a generator of its own
// (RngBits.h computes either result element by element).
// get-tuple-element, tuple and bitcast (same byte size) only name
// buffers.
// An in-place dynamic-update-slice kernel (HeroAnalysis.h) writes only the
// update: its output buffer is its operand's when no later kernel reads that
// buffer and it is neither an ENTRY parameter nor an output; otherwise the
// operand is copied into the output buffer before the kernel runs.
//
//   ENTRY { p0 = parameter(0)               buffer 0
//           f = fusion(p0), calls=negate    kernel_0: writes 1
//           ROOT d = fusion(f, u, i), calls=dus  kernel_1: updates 1
//
// An ENTRY parameter belongs to the caller, unless input_output_alias
// names it for the output the in-place kernel writes and no later kernel
// reads it: the output buffer is then the parameter's (the caller donates
// it), and nothing is copied:
//
//   HloModule m, input_output_alias={ {}: (0, {}) }
//   ENTRY { p0 = parameter(0)               buffer 0 (input 0, output)
//           ROOT d = fusion(p0, u, i), calls=dus  kernel_0: updates 0
//
// Control flow makes the plan a program of steps (PlanStep) over the same
// kernels and buffers: a `call` is planned in place (its parameters name
// the caller's operand buffers, its ROOT's buffers are the call's), and
// the computations of `while` and `conditional` are planned each into a
// step list of its own, one kernel per instruction (a fusion is one
// kernel, as in the ENTRY). A tuple-shaped value is one buffer per
// element (nested tuples are refused).
//
//   ENTRY { s = tuple(i0, x)                names buffers 0, 1
//           w = while(s), condition=c, body=b
//           ROOT r = get-tuple-element(w), index=1 }
//     copy: 0 -> 2, 1 -> 3                  the loop's state: 2, 3
//     while %w:
//       condition: kernel_0 (reads 2, 3, writes pred 4); 4 read on the host
//       body:      kernel_1, kernel_2 (read 2, 3, write 5, 6)
//                  copy: 5 -> 2, 6 -> 3
//     output: buffer 3
//
// A while has state buffers of its own, one per element, which its
// operand's buffers are copied into before the loop (so an ENTRY parameter
// or a constant passed in is never written), and which its result names.
// The body reads them and writes its ROOT's elements to buffers of its
// own; only after its last kernel are those copied back into the state, so
// the body reads old elements however its kernels are ordered. An element
// the body passes through unchanged is not copied; one that is another
// state element (tuple(b, a)) whose buffer is itself overwritten goes
// through a temporary buffer first. An element whose kernel reads the old
// element at most at the index it writes (a loop kernel: x * 0.5, i + 1)
// or as the operand it updates in place, which nothing after that kernel
// reads and which is no other element's value, is written into the state
// by its kernel: no copy (a dynamic-update-slice of the state updates it
// in place). The condition's pred[] is read on the host after its
// kernels.
//
// A conditional reads its pred (true runs branch 0) or s32 index (out of
// [0, N) runs the last branch, as XLA and the evaluator do) on the host,
// runs that branch's steps over its operand's buffers, and copies the
// branch's ROOT elements into the conditional's own result buffers, or has
// the one kernel that computes an element write it there.
//
// Kernels inside a loop never update their operand's buffer in place, nor
// use input_output_alias: the next iteration may read it again.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_MODULEPLAN_H
#define TESSEL_LIB_CODEGEN_MODULEPLAN_H

#include "tessel/Codegen/Compiler.h"
#include "tessel/Hlo/HloModule.h"
#include "tessel/Support/Expected.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tessel {

/// An output of an in-place kernel, which updates its operand without
/// reading it: the output buffer must hold the operand's bytes before the
/// kernel runs.
struct InPlaceOutput {
  /// The buffer copied into the output buffer before the kernel, -1 for
  /// none (the output buffer is the operand's own).
  int copyBefore = -1;
  /// The kernel reads the operand otherwise too (as the update, the
  /// indices, or as another operand of a variadic scatter): its buffer must
  /// keep its values, so it is copied, never updated.
  bool operandRead = false;
  /// The output buffer is the operand's own (nothing reads it afterwards),
  /// so nothing is copied.
  bool reusesOperand = false;
  /// The output buffer is that of ENTRY parameter N, the operand, by the
  /// module's input_output_alias (nothing reads it afterwards); -1 for none.
  int64_t aliasedParameter = -1;
  /// Why input_output_alias could not give the output the operand's
  /// parameter buffer (for --explain), "" when it names none.
  std::string aliasRejection;
};

struct PlannedKernel {
  std::string name;
  /// Where the kernel comes from, for --explain: "fusion %f", "the ENTRY
  /// computation", "%x (not in a fusion)".
  std::string origin;
  const HloComputation *computation = nullptr;
  std::vector<int> inputs; ///< buffer per computation parameter
  /// Which of the computation's outputs (getFusionOutputs) this kernel
  /// writes: those of one dims (a loop writes one index space).
  std::vector<int64_t> outputIndices;
  std::vector<int> outputs; ///< buffer per written output
  /// One per output of an in-place kernel (dynamic-update-slice, scatter;
  /// several for a variadic scatter), empty for other kernels.
  std::vector<InPlaceOutput> inPlace;
  /// The kernel runs inside a while's condition or body (maybe many times).
  bool inLoop = false;
  /// Its output buffer is one of its inputs, which it reads only at the
  /// element it writes (a loop body's `i + 1` written into the loop's
  /// state): it runs as its emitter's code, never as a relayout or a table
  /// lookup.
  bool overwritesInput = false;
  /// Scratch buffers the kernel takes after its outputs, which it writes
  /// and reads and which nothing else uses: the sort emitter's two buffers
  /// of positions (HeroAnalysis.h).
  std::vector<int> scratch;
};

/// One step of a plan's program (see the header comment).
struct PlanStep {
  enum class Kind {
    Kernels,     ///< plan.kernels [first, last), in order
    Copy,        ///< `copies`, in order
    While,       ///< `condition`, then `body` while `selector` is true
    Conditional, ///< branch `selector` of `branches`
  };
  Kind kind = Kind::Kernels;
  size_t first = 0, last = 0;
  /// Copy: buffer `first` copied into buffer `second`, pair after pair.
  std::vector<std::pair<int, int>> copies;
  /// While and Conditional: "%name (opcode)", for --explain and messages.
  std::string instruction;
  /// While: the condition's pred[] buffer; Conditional: its pred[] or s32[]
  /// branch selector.
  int selector = -1;
  std::vector<PlanStep> condition, body;
  std::vector<std::vector<PlanStep>> branches;
};

/// Kernels of one split computation (softmax: the max, the sum, the
/// output) that may run a chunk of rows at a time, one after the other,
/// while the chunk is in cache: every output of each starts with the same
/// leading dims (`rowDims`, row-major, untiled), each is a loop kernel, and
/// each reads the materialized values at the leading dims of its own
/// output index only (a row's max, not another row's). The executable runs
/// them over chunks of rows instead of each over all of them; the results
/// are the same, since no kernel reads a materialized value of another row.
///
/// A shared value (a softmax's `exp(x - max)`, read by the sum and by the
/// output) is materialized too when the kernels form a group: its buffer is
/// *local* (`localBuffers`), written and read only by the group's kernels,
/// at rows of the chunk they run. Each worker then keeps the rows of its
/// chunk in a scratch buffer of its own (a kernel gets the scratch's
/// address less the chunk's first row, so its row r lands at scratch row
/// r - r0), and the full buffer is made only when the kernels run one at a
/// time.
struct RowGroup {
  size_t first = 0, last = 0; ///< kernels [first, last]
  std::vector<int64_t> rowDims;
  std::vector<int> localBuffers;
};

struct ModulePlan {
  /// Array shapes (with layouts) of every buffer.
  std::vector<Shape> buffers;
  /// Buffer of each ENTRY parameter.
  std::vector<int> inputs;
  /// Buffer of each output (one, or one per ROOT tuple element).
  std::vector<int> outputs;
  /// Per output, the ENTRY parameter whose buffer it is (input_output_alias,
  /// where an in-place kernel updates it), -1 for none: its buffer is in
  /// both `inputs` and `outputs` (Executable::outputAliases).
  std::vector<int64_t> outputAliases;
  bool tupleResult = false;
  std::vector<PlannedKernel> kernels;
  std::vector<RowGroup> rowGroups;
  /// The program: every kernel once, in order, in one of its steps (a
  /// single Kernels step for a module without control flow).
  std::vector<PlanStep> steps;
  /// Computations made for instructions outside fusions.
  std::unique_ptr<HloModule> scratch;
};

/// `rowChunks`: whether the kernels may run a chunk of rows at a time (the
/// CPU): only then are shared values materialized (RowGroup).
Expected<ModulePlan> planModule(const HloModule &module, bool rowChunks = true);

/// The physical size in bytes of a buffer of `shape` (tiles and padding).
int64_t bufferBytes(const Shape &shape);

/// The steps of `plan` as text, one line per step, indented per level
/// (--emit=partition): "" when they are the kernels in order.
std::string describeSteps(const ModulePlan &plan);

/// What a backend does for each kind of step, for runSteps: launch or run
/// kernels [first, last), copy buffer `from` into buffer `to` (as many
/// bytes as `to` has), and read a while's or conditional's selector on the
/// host (its raw value: a pred[] buffer's byte, an s32[] buffer's value).
struct StepActions {
  std::function<Status(size_t first, size_t last)> kernels;
  std::function<Status(int from, int to)> copy;
  std::function<Expected<int64_t>(const PlanStep &step)> readSelector;
};

/// Runs `steps` of `plan` with `actions`: kernels and copies in order, a
/// while's condition then body while its pred is true, a conditional's
/// branch (a pred: true runs branch 0; an index outside [0, N): the last
/// branch, as XLA and the evaluator do). The CPU's and the GPU's
/// executables share it.
Status runSteps(const ModulePlan &plan, const std::vector<PlanStep> &steps,
                const StepActions &actions);

/// What every backend's executable shares: its plan, the sizes and shapes
/// of its buffers from the plan, and run() as the logical arguments to
/// physical buffers, runPhysical, the outputs back to logical arrays.
class PlannedExecutable : public Executable {
public:
  Expected<Literal> run(const std::vector<Literal> &arguments,
                        const RunOptions &options) override;
  std::vector<int64_t> inputBytes() const override;
  std::vector<int64_t> outputBytes() const override;
  std::vector<Shape> outputShapes() const override;
  std::vector<int64_t> outputAliases() const override {
    return plan.outputAliases;
  }
  double compileMilliseconds() const override { return compileMs; }

  ModulePlan plan;
  double compileMs = 0;
};

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_MODULEPLAN_H
