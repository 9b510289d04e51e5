//===- Compiler.h - HLO modules compiled and run on the CPU -----*- C++ -*-===//
//
// The code generator end to end: an HLO module becomes kernels (one per
// fusion of the ENTRY computation, or one for a whole ENTRY without
// fusions), lowered by the pass pipeline of Passes.h to LLVM, compiled for
// the host CPU by LLVM's JIT (MLIR's ExecutionEngine, ORC underneath) and
// run on a thread pool, blocks spread over the workers:
//
//   auto module = parseHloModule(text);
//   auto exe = Executable::compile(**module, CompileOptions{});
//   Expected<Literal> out = (*exe)->run({x});   // the evaluator's answer,
//                                               // up to transcendentals
//
// Buffers in between kernels are physical (their layouts, tiles included);
// run() takes and returns logical arrays as the evaluator does.
//
// Compiled executables are cached in the process by the module's text and
// the options (compile() returns the cached one).
//
// For an NVIDIA GPU (Backend::Nvptx, docs/codegen.md "On the GPU") the same
// kernels are emitted with the GPU's launch, lowered to NVVM and written as
// PTX by LLVM's NVPTX backend; run() loads the PTX through the CUDA driver,
// which is opened when the executable is compiled (Nvptx.h).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CODEGEN_COMPILER_H
#define TESSEL_CODEGEN_COMPILER_H

#include "tessel/Codegen/FusionEmitter.h"
#include "tessel/Hlo/HloModule.h"
#include "tessel/Hlo/LiteralComparison.h"
#include "tessel/Support/Expected.h"

#include <memory>
#include <string>
#include <vector>

namespace tessel {

/// What the kernels are compiled to.
enum class Backend {
  Cpu,   ///< the host CPU, through LLVM's JIT
  Nvptx, ///< PTX for an NVIDIA GPU; kernels get the GPU's launch
};

struct CompileOptions {
  /// The launch configuration (Backend::Nvptx always uses Target::Gpu).
  Target target = Target::Cpu;
  Backend backend = Backend::Cpu;
  /// Backend::Nvptx: the compute capability the PTX is for (90: sm_90).
  int smVersion = 90;
  /// Backend::Cpu, emitHloModule only: the CPU to compile for, an LLVM
  /// name such as `znver4` or `sapphirerapids` (its features are the
  /// name's); empty: this CPU. The LLVM IR and assembly are then that
  /// CPU's, and so are the decisions that depend on its vector registers
  /// (table lookups, loop hints); the cache sizes stay this machine's.
  /// Executable::compile refuses another CPU: its code runs here.
  std::string cpu;
  /// Backend::Cpu: the widest vectors LLVM's vectorizers use, in bits
  /// (128, 256 or 512, as clang's -mprefer-vector-width; never wider than
  /// the CPU's registers). 0: 512 on CPUs with AVX-512 from Ice Lake's
  /// generation on (AVX512-VBMI2: Ice Lake, Sapphire/Emerald Rapids, Zen 4),
  /// elsewhere LLVM's preference for the CPU (256 on Skylake-SP and Cascade
  /// Lake, whose clock drops with zmm registers; the registers' width on
  /// the others).
  unsigned vectorWidth = 0;
  /// XLA's default numerics (xla_allow_excess_precision): bf16/f16 values
  /// stay f32 between the ops of a fusion and round where they are stored.
  /// Off: every op rounds, bit-exact to the evaluator.
  bool excessPrecision = false;
  /// CPU: an elementwise kernel of one 8- or 16-bit input whose arrays are
  /// much larger than 2^bits runs as a lookup in a table of its results
  /// for every input bit pattern, computed at compile time by the kernel
  /// itself (bit for bit the kernel's results; docs/codegen.md, "Table
  /// lookups"). Off: every kernel computes.
  bool tables = true;
  /// With tables: a kernel is tabulated only where computing it is
  /// estimated to cost more than the lookup on this CPU (its vector width,
  /// F16C). Off: wherever a table is possible (tests).
  bool tablesByCost = true;
  /// CPU: a kernel that is only a transpose or a layout-changing copy of
  /// an input runs as a plan of tessel's relayout library (vector
  /// transposes picked for the CPU, streaming stores; docs/codegen.md,
  /// "Relayout kernels"). Off: the transpose emitter's code.
  bool relayouts = true;
  /// When not empty: after every pass whose flag matches this regex, the IR
  /// is written to `dumpDir/NN.<flag>.mlir` (the emitted IR is
  /// `00.emitted.mlir`).
  std::string dumpAfter;
  std::string dumpDir;
};

/// The text `tessel compile --emit=...` prints.
enum class EmitKind {
  Partition, ///< the subgraphs of every kernel and why each cut was made
  Mlir,      ///< the emitted MLIR (tessel, func, tensor, arith, math, ...)
  Lowered,   ///< the llvm dialect after the whole pipeline
  Llvm,      ///< LLVM IR after optimization (-O3 for the host CPU or the
             ///< GPU, libdevice linked in)
  Asm,       ///< host assembly (PTX for Backend::Nvptx)
  Ptx,       ///< PTX (Backend::Nvptx only)
  Explain,   ///< per kernel: where it comes from, its emitter, its launch
             ///< and thread -> element map, its outputs; then the partition
};

Expected<std::string> emitHloModule(const HloModule &module, EmitKind kind,
                                    const CompileOptions &options);

struct RunOptions {
  /// Worker threads; 0 means one per core.
  int threads = 0;
  /// The kernels of a computation split at its reductions (softmax, layer
  /// norm) run a chunk of rows at a time, each chunk's kernels one after
  /// the other on one worker while its rows are in cache. Off: each kernel
  /// runs over all its blocks before the next.
  bool rowChunks = true;
};

/// Times measured on a device with memory of its own (Backend::Nvptx).
struct DeviceTiming {
  /// Per run, the kernels alone (CUDA events around the launches).
  std::vector<double> kernelSeconds;
  /// Per run, a copy inside the device that reads and writes as many bytes
  /// as the kernels do: the memory's speed, for the ratio.
  std::vector<double> copySeconds;
  /// The bytes the kernels read and write (inputs and outputs).
  int64_t bytes = 0;
  /// The device memory's peak, from its clock and bus width (bytes per
  /// second; 0 when the driver does not say).
  double peakBytesPerSecond = 0;
};

class Executable {
public:
  virtual ~Executable() = default;
  static Expected<std::shared_ptr<Executable>>
  compile(const HloModule &module, const CompileOptions &options);

  /// Runs on logical arrays (one per ENTRY parameter); the result is an
  /// array, or a tuple for a tuple-shaped ROOT.
  virtual Expected<Literal> run(const std::vector<Literal> &arguments,
                                const RunOptions &options = {}) = 0;
  /// Runs on physical buffers, no conversion: the timed path of `tessel run
  /// --repeat`. `outputs` must hold one buffer of the right size per output.
  /// An output that aliases an input (outputAliases) may be given the
  /// input's own pointer: the input is then donated, updated in place into
  /// the output. Given another buffer, the input is copied into it first and
  /// stays as it was.
  virtual Status runPhysical(const std::vector<const void *> &inputs,
                             const std::vector<void *> &outputs,
                             const RunOptions &options = {}) = 0;
  /// Backend::Nvptx: copies the inputs (physical buffers) to the device
  /// once, runs the kernels `repeat` times and times each run alone, and a
  /// device copy of the same bytes as often. Other backends: an error.
  virtual Expected<DeviceTiming>
  timeOnDevice(const std::vector<const void *> &inputs, int repeat) {
    (void)inputs;
    (void)repeat;
    return Error("timing on a device needs a GPU executable");
  }
  /// Physical sizes in bytes of the ENTRY parameters and of the outputs.
  virtual std::vector<int64_t> inputBytes() const = 0;
  virtual std::vector<int64_t> outputBytes() const = 0;
  /// The shapes of the outputs (one, or one per ROOT tuple element).
  virtual std::vector<Shape> outputShapes() const = 0;
  /// Per output, the ENTRY parameter whose buffer the kernels update in
  /// place into it (the module's input_output_alias, where the compiler
  /// uses it: docs/codegen.md), -1 for none; empty when no output aliases.
  virtual std::vector<int64_t> outputAliases() const { return {}; }
  /// Milliseconds spent from HLO to a callable kernel.
  virtual double compileMilliseconds() const = 0;
  /// The kernels that run as a table lookup (CompileOptions::tables).
  virtual std::vector<std::string> tabulatedKernels() const { return {}; }
  /// The kernels that run as a relayout (CompileOptions::relayouts).
  virtual std::vector<std::string> relayoutKernels() const { return {}; }
};

/// Whether the module uses an op whose compiled result may differ from the
/// evaluator's: a transcendental function, which kernels compute with
/// MLIR's polynomial approximations rather than the C library.
bool usesApproximatedFunctions(const HloModule &module);

/// How far a compiled kernel's output of `type` may be from the evaluator's
/// (docs/codegen.md, "Numerics"): exact, unless `approximate` (the module
/// uses approximated functions, or excess precision): then 1 ulp for 16-bit
/// floats and 8 for wider ones, or an absolute difference of 2^-7 (bf16),
/// 2^-10 (f16), 1e-6 (f32), 1e-14 (f64) times the largest magnitude.
ComparisonBound kernelComparisonBound(PrimitiveType type, bool approximate);

} // namespace tessel

#endif // TESSEL_CODEGEN_COMPILER_H
