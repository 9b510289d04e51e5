//===- CpuExecutable.cpp - Kernels JIT-compiled and run on the CPU --------===//
//
// The llvm dialect of the pipeline goes through MLIR's ExecutionEngine
// (LLVM ORC) at -O3 for the host CPU (its name and features, so AVX2 or
// AVX-512 where the CPU has them). Each kernel is called through its packed
// wrapper `_mlir_<name>(void **args)`: the buffer pointers, then the range
// of blocks [begin, end). Blocks are spread over a oneTBB arena.
// Elementwise kernels of a narrow input may run as a table lookup instead
// (TableLookup.h); the kernel fills the table when the executable is made.
// Kernels that only transpose or copy an input run as relayout plans
// (RelayoutKernel.h).
//
//===----------------------------------------------------------------------===//
#include "ComplexRuntime.h"
#include "HalfConversionLoops.h"
#include "InputPrefetch.h"
#include "InterleavedLoops.h"
#include "ModulePlan.h"
#include "NvptxBackend.h"
#include "Pipeline.h"
#include "RelayoutKernel.h"
#include "StreamingStores.h"
#include "TableLookup.h"
#include "tessel/Codegen/Compiler.h"
#include "tessel/Codegen/ComputationPartitioner.h"
#include "tessel/Codegen/FusionEmitter.h"
#include "tessel/Hlo/ScatterDimensions.h"
#include "tessel/Hlo/SortDimensions.h"
#include "tessel/Layout/TiledLayout.h"
#include "tessel/Relayout/Relayout.h"
#include "tessel/Support/Host.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

namespace tessel {

int64_t bufferBytes(const Shape &shape) {
  Expected<TiledLayout> layout = TiledLayout::get(shape);
  return layout ? layout->physicalBytes() : 0;
}

std::vector<int64_t> PlannedExecutable::inputBytes() const {
  std::vector<int64_t> bytes;
  for (int b : plan.inputs)
    bytes.push_back(bufferBytes(plan.buffers[b]));
  return bytes;
}

std::vector<int64_t> PlannedExecutable::outputBytes() const {
  std::vector<int64_t> bytes;
  for (int b : plan.outputs)
    bytes.push_back(bufferBytes(plan.buffers[b]));
  return bytes;
}

std::vector<Shape> PlannedExecutable::outputShapes() const {
  std::vector<Shape> shapes;
  for (int b : plan.outputs)
    shapes.push_back(plan.buffers[b]);
  return shapes;
}

Expected<Literal> PlannedExecutable::run(const std::vector<Literal> &arguments,
                                         const RunOptions &options) {
  Executable &exe = *this;
  if (arguments.size() != plan.inputs.size())
    return Error("the module takes " + std::to_string(plan.inputs.size()) +
                 " arguments, given " + std::to_string(arguments.size()));
  std::vector<std::string> inputs;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Shape &shape = plan.buffers[plan.inputs[i]];
    if (arguments[i].elementType() != shape.elementType ||
        arguments[i].dims() != shape.dims)
      return Error("argument " + std::to_string(i) + " is " +
                   arguments[i].shape().toStringWithoutLayout() +
                   ", the parameter is " + shape.toStringWithoutLayout());
    Expected<std::string> physical = toPhysical(arguments[i], shape);
    if (!physical)
      return physical.error();
    inputs.push_back(std::move(*physical));
  }
  // An output that aliases an input takes over the input's physical copy
  // (the caller's arguments are not touched): it is updated in place.
  std::vector<std::string> outputs(plan.outputs.size());
  for (size_t i = 0; i < plan.outputs.size(); ++i)
    if (i >= plan.outputAliases.size() || plan.outputAliases[i] < 0)
      outputs[i].assign(bufferBytes(plan.buffers[plan.outputs[i]]), '\0');
  std::vector<const void *> in;
  for (const std::string &s : inputs)
    in.push_back(s.data());
  std::vector<void *> out;
  for (size_t i = 0; i < outputs.size(); ++i)
    out.push_back(i < plan.outputAliases.size() && plan.outputAliases[i] >= 0
                      ? inputs[plan.outputAliases[i]].data()
                      : outputs[i].data());
  Status ran = exe.runPhysical(in, out, options);
  if (!ran)
    return ran.error();
  std::vector<Literal> results;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string &bytes =
        i < plan.outputAliases.size() && plan.outputAliases[i] >= 0
            ? inputs[plan.outputAliases[i]]
            : outputs[i];
    Expected<Literal> literal =
        fromPhysical(bytes, plan.buffers[plan.outputs[i]]);
    if (!literal)
      return literal.error();
    results.push_back(std::move(*literal));
  }
  if (plan.tupleResult)
    return Literal::makeTuple(std::move(results));
  return std::move(results.front());
}

namespace {

std::string llvmErrorMessage(llvm::Error error) {
  std::string message;
  llvm::handleAllErrors(std::move(error), [&](const llvm::ErrorInfoBase &e) {
    message += e.message();
  });
  return message;
}

/// A target machine for this CPU, or with `cpu` (CompileOptions::cpu) for
/// the CPU LLVM knows by that name, on this machine's architecture, with
/// the features the name implies.
Expected<std::unique_ptr<llvm::TargetMachine>>
hostTargetMachine(const std::string &cpu = "") {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return Error("cannot detect the host CPU: " +
                 llvmErrorMessage(builder.takeError()));
  if (!cpu.empty()) {
    // Asked before the machine is made, which would print LLVM's own
    // warning for an unknown name.
    const llvm::Triple &triple = builder->getTargetTriple();
    std::string lookupError;
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(triple.str(), lookupError);
    std::unique_ptr<llvm::MCSubtargetInfo> info(
        target ? target->createMCSubtargetInfo(triple.str(), "", "") : nullptr);
    if (!info || !info->isCPUStringValid(cpu))
      return Error("--cpu: LLVM knows no CPU '" + cpu + "' for " +
                   triple.str() +
                   " (names as clang's -march takes them: x86-64-v3, znver3, "
                   "znver4, skylake-avx512, sapphirerapids, ...)");
    builder->setCPU(cpu);
    builder->getFeatures() = llvm::SubtargetFeatures();
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder->createTargetMachine();
  if (!machine)
    return Error("cannot create a target machine for the host: " +
                 llvmErrorMessage(machine.takeError()));
  return std::move(*machine);
}

/// A TESSEL_* switch that tests and comparisons set: true for "1...",
/// false for any other non-empty value, nothing when unset or empty (the
/// executable decides).
std::optional<bool> switchFromEnv(const char *name) {
  const char *mode = std::getenv(name);
  if (!mode || !*mode)
    return std::nullopt;
  return mode[0] == '1';
}

/// LLVM IR for the host: its triple and data layout, and the CPU's name
/// and features on every function, so that the vectorizer and the code
/// generator use every instruction the CPU has (AVX2, AVX-512); loops that
/// convert through f16 asked for the registers' full width, latency-bound
/// loops to be interleaved (but not in `tables`, kernels run as a lookup).
std::unique_ptr<llvm::Module> translateForHost(mlir::Operation *module,
                                               llvm::LLVMContext &context,
                                               llvm::TargetMachine &machine,
                                               const llvm::StringSet<> &tables,
                                               unsigned vectorWidth) {
  // The loop vectorizer always reports why it did not vectorize a loop
  // that carries a hint (above); those remarks are for LLVM's developers,
  // not tessel's users. Errors are still printed.
  context.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo *info, void *) {
        if (info->getSeverity() != llvm::DS_Error)
          return;
        llvm::DiagnosticPrinterRawOStream printer(llvm::errs());
        llvm::errs() << "LLVM: ";
        info->print(printer);
        llvm::errs() << "\n";
      });
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return nullptr;
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple().getTriple());
  for (llvm::Function &function : *llvmModule) {
    if (function.isDeclaration())
      continue;
    function.addFnAttr("target-cpu", machine.getTargetCPU());
    function.addFnAttr("target-features", machine.getTargetFeatureString());
    preferVectorWidth(function, machine, vectorWidth);
  }
  hintHalfConversionLoops(*llvmModule,
                          halfConversionVectorBits(machine, vectorWidth));
  // TESSEL_INTERLEAVE=0 turns the hint off (comparisons, tests).
  if (switchFromEnv("TESSEL_INTERLEAVE").value_or(true))
    hintInterleavedLoops(*llvmModule, vectorUnitOf(machine, vectorWidth).bits,
                         tables);
  return llvmModule;
}

struct CompiledKernel {
  std::string name;
  int64_t numThreads = 1;
  int64_t numBlocks = 1;
  void (*function)(void **) = nullptr;
  /// The copy with streaming stores into its outputs (StreamingStores.h),
  /// run when they are all 64-byte aligned; null when there is none.
  void (*streamFunction)(void **) = nullptr;
  /// Its outputs: the last pointers of a call.
  size_t numOutputs = 0;
};

class CpuExecutable : public PlannedExecutable {
public:
  Status runPhysical(const std::vector<const void *> &inputs,
                     const std::vector<void *> &outputs,
                     const RunOptions &options) override;

  std::unique_ptr<mlir::MLIRContext> context;
  /// The engine keeps function_refs to these and may call them as long as
  /// it lives (it compiles lazily), so they are declared before it.
  std::function<llvm::Error(llvm::Module *)> optimize;
  std::function<std::unique_ptr<llvm::Module>(mlir::Operation *,
                                              llvm::LLVMContext &)>
      build;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::vector<CompiledKernel> kernels;
  Target target = Target::Cpu;
  /// Per kernel: set when it runs as a table lookup, with its table
  /// (entries of the output's width, 8-byte aligned).
  std::vector<std::optional<TableLookup>> lookups;
  std::vector<std::vector<uint64_t>> tables;

  /// Per kernel: set when it runs as a relayout, with its plans by thread
  /// count (made on first use: a plan's threads are fixed when made).
  std::vector<std::optional<RelayoutKernel>> moves;
  std::mutex movePlansMutex;
  std::map<std::pair<size_t, int>, std::unique_ptr<RelayoutPlan>> movePlans;

  /// Runs kernel k's relayout with `threads` workers.
  Status runMove(size_t k, const std::vector<void *> &pointers, int threads);

  std::vector<std::string> relayoutKernels() const override {
    std::vector<std::string> names;
    for (size_t k = 0; k < moves.size(); ++k)
      if (moves[k])
        names.push_back(kernels[k].name);
    return names;
  }

  std::vector<std::string> tabulatedKernels() const override {
    std::vector<std::string> names;
    for (size_t k = 0; k < lookups.size(); ++k)
      if (lookups[k])
        names.push_back(kernels[k].name);
    return names;
  }

  /// Runs the kernels of `group` a chunk of rows at a time (RowGroup), the
  /// chunks spread over the workers; false (nothing run) when their blocks
  /// do not line up with rows or there are too few chunks.
  bool runRowGroup(const RowGroup &group,
                   const std::vector<std::vector<void *>> &pointers,
                   int threads);
  /// The rows per chunk runRowGroup gives `group` with `threads` workers,
  /// 0 when it runs the kernels one at a time instead.
  int64_t rowChunk(const RowGroup &group, int threads) const;
};

/// One arena per thread count, made once: creating an arena per kernel call
/// would cost more than a small kernel runs.
tbb::task_arena &arenaFor(int threads) {
  static std::mutex mutex;
  static auto &arenas = *new std::map<int, std::unique_ptr<tbb::task_arena>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<tbb::task_arena> &arena = arenas[threads];
  if (!arena)
    arena = std::make_unique<tbb::task_arena>(threads);
  return *arena;
}

/// Runs blocks [begin, end) of `kernel` on the calling thread.
void callKernel(const CompiledKernel &kernel, std::vector<void *> pointers,
                int64_t begin, int64_t end) {
  std::vector<void *> args;
  for (void *&p : pointers)
    args.push_back(&p);
  args.push_back(&begin);
  args.push_back(&end);
  bool aligned = kernel.streamFunction != nullptr;
  for (size_t i = pointers.size() - kernel.numOutputs; i < pointers.size(); ++i)
    aligned &= reinterpret_cast<uintptr_t>(pointers[i]) % 64 == 0;
  (aligned ? kernel.streamFunction : kernel.function)(args.data());
}

void runKernel(const CompiledKernel &kernel, std::vector<void *> pointers,
               int threads) {
  auto call = [&](int64_t begin, int64_t end) {
    callKernel(kernel, pointers, begin, end);
  };
  int64_t blocks = kernel.numBlocks;
  if (threads <= 1 || blocks == 1)
    return call(0, blocks);
  // About eight tasks per worker, so that a slow worker does not hold up
  // the others.
  int64_t grain = std::max<int64_t>(1, blocks / (int64_t(threads) * 8));
  arenaFor(threads).execute([&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, blocks, grain),
                      [&](const tbb::blocked_range<int64_t> &range) {
                        call(range.begin(), range.end());
                      });
  });
}

/// The lookup of kernel `k` over all its elements, in chunks spread over
/// the workers.
void runLookup(const TableLookup &lookup, const std::vector<uint64_t> &table,
               const std::vector<void *> &pointers, int threads) {
  const void *in = pointers[lookup.parameter];
  void *out = pointers.back();
  constexpr int64_t kChunk = 1 << 16;
  int64_t n = lookup.elements;
  // Streaming stores for outputs past half the last-level cache, as the
  // relayouts do; TESSEL_TABLE_STREAM=0 or 1 decides instead (tests).
  bool streaming = switchFromEnv("TESSEL_TABLE_STREAM")
                       .value_or(n * lookup.outputBytes >=
                                 relayoutDefaultStreamingThreshold());
  if (threads <= 1 || n <= kChunk)
    return runTableLookup(lookup, table.data(), in, out, 0, n, streaming);
  arenaFor(threads).execute([&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, kChunk),
                      [&](const tbb::blocked_range<int64_t> &range) {
                        runTableLookup(lookup, table.data(), in, out,
                                       range.begin(), range.end(), streaming);
                      });
  });
}

/// The table of a kernel that findTableLookup accepted: the kernel's blocks
/// [0, k) compute its first k T elements (T threads of one element each on
/// the CPU launch), here of an input whose element i is the bit pattern
/// i mod entries. Empty when the kernel's blocks are not laid out so.
std::vector<uint64_t> buildTable(const CompiledKernel &kernel,
                                 const PlannedKernel &planned,
                                 const TableLookup &lookup) {
  int64_t t = kernel.numThreads;
  int64_t blocks = (lookup.entries + t - 1) / t;
  int64_t n = blocks * t;
  if (blocks > kernel.numBlocks || n > lookup.elements)
    return {};
  std::vector<uint8_t> in(n * lookup.inputBytes);
  for (int64_t i = 0; i < n; ++i) {
    uint16_t pattern = static_cast<uint16_t>(i % lookup.entries);
    std::memcpy(in.data() + i * lookup.inputBytes, &pattern, lookup.inputBytes);
  }
  std::vector<uint64_t> out((n * lookup.outputBytes + 7) / 8);
  // Parameters other than lookup.parameter are not read.
  std::vector<void *> pointers(planned.inputs.size(), in.data());
  pointers.push_back(out.data());
  callKernel(kernel, pointers, 0, blocks);
  out.resize((lookup.tableBytes() + 7) / 8);
  return out;
}

Status CpuExecutable::runMove(size_t k, const std::vector<void *> &pointers,
                              int threads) {
  const RelayoutKernel &move = *moves[k];
  RelayoutPlan *plan = nullptr;
  {
    std::lock_guard<std::mutex> lock(movePlansMutex);
    std::unique_ptr<RelayoutPlan> &slot = movePlans[{k, threads}];
    if (!slot) {
      RelayoutOptions options;
      options.threads = threads;
      Expected<RelayoutPlan> made =
          RelayoutPlan::create(move.source, move.source.layoutOrDefault(),
                               move.destination, options);
      if (!made)
        return made.error();
      slot = std::make_unique<RelayoutPlan>(std::move(*made));
    }
    plan = slot.get();
  }
  if (Status error =
          plan->execute(pointers[move.parameter], plan->sourceBytes(),
                        pointers.back(), plan->destinationBytes());
      !error)
    return error.takeError();
  return {};
}

int64_t CpuExecutable::rowChunk(const RowGroup &group, int threads) const {
  // On the CPU a loop kernel's block b writes elements [b T, (b + 1) T) of
  // its outputs in row-major order (T threads, one element each): rows
  // [r0, r1) are blocks [r0 E / T, r1 E / T) for E elements per row, whole
  // blocks when r0 E and r1 E are multiples of T.
  if (target != Target::Cpu || (threads <= 1 && group.localBuffers.empty()))
    return 0;
  int64_t rows = 1;
  for (int64_t d : group.rowDims)
    rows *= d;
  int64_t unit = 1, widest = 1;
  for (size_t k = group.first; k <= group.last; ++k) {
    const Shape &shape = plan.buffers[plan.kernels[k].outputs.front()];
    int64_t elements = 1;
    for (int64_t d : shape.dims)
      elements *= d;
    int64_t e = elements / rows, t = kernels[k].numThreads;
    widest = std::max(widest,
                      e * std::max<int64_t>(1, byteWidth(shape.elementType)));
    unit = std::lcm(unit, t / std::gcd(t, e));
    if (unit > rows)
      return 0;
  }
  // About 256 KiB of the widest output per chunk, so that the kernels after
  // the first find the chunk's rows in cache; at least two chunks per
  // worker.
  int64_t chunk = unit * std::max<int64_t>(1, (256 << 10) / (unit * widest));
  while (chunk > unit && (rows + chunk - 1) / chunk < 2 * threads)
    chunk -= unit;
  if ((rows + chunk - 1) / chunk < 2 * threads)
    return 0;
  return chunk;
}

bool CpuExecutable::runRowGroup(
    const RowGroup &group, const std::vector<std::vector<void *>> &pointers,
    int threads) {
  int64_t chunk = rowChunk(group, threads);
  if (chunk == 0)
    return false;
  int64_t rows = 1;
  for (int64_t d : group.rowDims)
    rows *= d;
  std::vector<int64_t> perRow;
  for (size_t k = group.first; k <= group.last; ++k) {
    int64_t elements = 1;
    for (int64_t d : plan.buffers[plan.kernels[k].outputs.front()].dims)
      elements *= d;
    perRow.push_back(elements / rows);
  }
  // A local buffer's rows of the chunk live in the worker's scratch: each
  // kernel gets its address less r0 rows, so row r is at scratch row
  // r - r0 (the kernels touch rows [r0, r1) only).
  std::vector<int64_t> rowBytes, scratchOffset;
  int64_t scratchBytes = 0;
  for (int b : group.localBuffers) {
    rowBytes.push_back(bufferBytes(plan.buffers[b]) / rows);
    scratchOffset.push_back(scratchBytes);
    scratchBytes += (chunk * rowBytes.back() + 63) / 64 * 64;
  }
  tbb::enumerable_thread_specific<std::vector<uint8_t>> scratch;
  int64_t chunks = (rows + chunk - 1) / chunk;
  auto runChunk = [&](int64_t c) {
    int64_t r0 = c * chunk, r1 = std::min(rows, r0 + chunk);
    std::vector<uint8_t> *local = nullptr;
    if (scratchBytes > 0) {
      local = &scratch.local();
      if (static_cast<int64_t>(local->size()) < scratchBytes + 64)
        local->resize(scratchBytes + 64);
    }
    for (size_t k = group.first; k <= group.last; ++k) {
      const CompiledKernel &kernel = kernels[k];
      int64_t e = perRow[k - group.first], t = kernel.numThreads;
      int64_t begin = r0 * e / t;
      int64_t end = std::min(kernel.numBlocks, (r1 * e + t - 1) / t);
      if (begin >= end)
        continue;
      if (!local) {
        callKernel(kernel, pointers[k], begin, end);
        continue;
      }
      std::vector<void *> at = pointers[k];
      const PlannedKernel &planned = plan.kernels[k];
      std::vector<int> slots = planned.inputs;
      slots.insert(slots.end(), planned.outputs.begin(), planned.outputs.end());
      uintptr_t base =
          (reinterpret_cast<uintptr_t>(local->data()) + 63) / 64 * 64;
      for (size_t i = 0; i < slots.size(); ++i)
        for (size_t l = 0; l < group.localBuffers.size(); ++l)
          if (slots[i] == group.localBuffers[l])
            at[i] = reinterpret_cast<void *>(base + scratchOffset[l] -
                                             r0 * rowBytes[l]);
      callKernel(kernel, at, begin, end);
    }
  };
  if (threads <= 1) {
    for (int64_t c = 0; c < chunks; ++c)
      runChunk(c);
    return true;
  }
  arenaFor(threads).execute([&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, chunks, 1),
                      [&](const tbb::blocked_range<int64_t> &range) {
                        for (int64_t c = range.begin(); c < range.end(); ++c)
                          runChunk(c);
                      });
  });
  return true;
}

Status CpuExecutable::runPhysical(const std::vector<const void *> &inputs,
                                  const std::vector<void *> &outputs,
                                  const RunOptions &options) {
  if (inputs.size() != plan.inputs.size() ||
      outputs.size() != plan.outputs.size())
    return Error("expected " + std::to_string(plan.inputs.size()) +
                 " inputs and " + std::to_string(plan.outputs.size()) +
                 " outputs");
  int threads = options.threads > 0
                    ? options.threads
                    : static_cast<int>(std::thread::hardware_concurrency());
  // Buffers: inputs and outputs are the caller's; the rest are temporary.
  std::vector<void *> buffers(plan.buffers.size(), nullptr);
  std::vector<HostBuffer> temporaries;
  for (size_t i = 0; i < inputs.size(); ++i)
    buffers[plan.inputs[i]] = const_cast<void *>(inputs[i]);
  // An output that aliases an input is that input's buffer: the caller's
  // own pointer (donated), or else its output, which gets a copy of the
  // input first.
  for (size_t i = 0; i < plan.outputAliases.size(); ++i) {
    int64_t p = plan.outputAliases[i];
    if (p < 0)
      continue;
    if (outputs[i] != inputs[p])
      std::memcpy(outputs[i], inputs[p],
                  bufferBytes(plan.buffers[plan.inputs[p]]));
    buffers[plan.inputs[p]] = outputs[i];
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!buffers[plan.outputs[i]])
      buffers[plan.outputs[i]] = outputs[i];
  // A row group's local buffers live in its workers' scratch when it runs
  // a chunk of rows at a time: no full buffer.
  std::vector<bool> inScratch(buffers.size(), false);
  if (options.rowChunks)
    for (const RowGroup &group : plan.rowGroups)
      if (rowChunk(group, threads) > 0)
        for (int b : group.localBuffers)
          inScratch[b] = true;
  for (size_t b = 0; b < buffers.size(); ++b)
    if (!buffers[b] && !inScratch[b]) {
      int64_t bytes = std::max<int64_t>(bufferBytes(plan.buffers[b]), 1);
      temporaries.emplace_back(bytes);
      if (!temporaries.back().data())
        return Error("cannot allocate " + describeBytes(double(bytes)) +
                     " for the temporary " +
                     plan.buffers[b].toStringWithoutLayout());
      buffers[b] = temporaries.back().data();
    }
  std::vector<std::vector<void *>> pointers(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (int b : plan.kernels[k].inputs)
      pointers[k].push_back(buffers[b]);
    for (int b : plan.kernels[k].outputs)
      pointers[k].push_back(buffers[b]);
    for (int b : plan.kernels[k].scratch)
      pointers[k].push_back(buffers[b]);
  }
  auto runKernels = [&](size_t first, size_t last) -> Status {
    for (size_t k = first; k < last; ++k) {
      const RowGroup *group = nullptr;
      for (const RowGroup &g : plan.rowGroups)
        if (g.first == k)
          group = &g;
      if (group && options.rowChunks &&
          runRowGroup(*group, pointers, threads)) {
        k = group->last;
        continue;
      }
      // An in-place dynamic-update-slice or scatter updates a copy of its
      // operand.
      const PlannedKernel &planned = plan.kernels[k];
      for (size_t slot = 0; slot < planned.inPlace.size(); ++slot)
        if (int from = planned.inPlace[slot].copyBefore; from >= 0)
          std::memcpy(buffers[planned.outputs[slot]], buffers[from],
                      bufferBytes(plan.buffers[from]));
      if (lookups[k]) {
        runLookup(*lookups[k], tables[k], pointers[k], threads);
      } else if (moves[k]) {
        Status moved = runMove(k, pointers[k], threads);
        if (!moved)
          return moved.error();
      } else
        runKernel(kernels[k], pointers[k], threads);
    }
    return {};
  };
  // The steps (ModulePlan.h): kernels, copies, and the selectors of
  // whiles and conditionals read here, on the host.
  StepActions actions;
  actions.kernels = runKernels;
  actions.copy = [&](int from, int to) -> Status {
    std::memcpy(buffers[to], buffers[from], bufferBytes(plan.buffers[to]));
    return {};
  };
  actions.readSelector = [&](const PlanStep &step) -> Expected<int64_t> {
    if (plan.buffers[step.selector].elementType == PrimitiveType::Pred)
      return *static_cast<const uint8_t *>(buffers[step.selector]);
    int32_t index;
    std::memcpy(&index, buffers[step.selector], sizeof(index));
    return index;
  };
  if (Status ran = runSteps(plan, plan.steps, actions); !ran)
    return ran;
  // An output that is an input (or another output) is copied.
  for (size_t i = 0; i < outputs.size(); ++i)
    if (buffers[plan.outputs[i]] != outputs[i])
      std::memcpy(outputs[i], buffers[plan.outputs[i]],
                  bufferBytes(plan.buffers[plan.outputs[i]]));
  return {};
}

std::string cacheKey(const HloModule &module, const CompileOptions &options) {
  return module.toString() +
         "\n#target=" + std::to_string(static_cast<int>(options.target)) +
         (options.excessPrecision ? "\n#excess-precision" : "") +
         (options.tables ? "\n#tables" : "") +
         (options.tablesByCost ? "\n#tables-by-cost" : "") +
         (options.relayouts ? "\n#relayouts" : "") +
         "\n#vector-width=" + std::to_string(options.vectorWidth);
}

/// CompileOptions::vectorWidth is 0, 128, 256 or 512.
Status checkVectorWidth(const CompileOptions &options) {
  unsigned bits = options.vectorWidth;
  if (bits == 0 || bits == 128 || bits == 256 || bits == 512)
    return success();
  return Error("--prefer-vector-width: " + std::to_string(bits) +
               " is not a vector width LLVM's vectorizers take (128, 256 or "
               "512 bits)");
}

/// "  launch: B blocks of T" (the line of --explain each emitter goes on).
std::string describeLaunch(const LaunchConfig &config) {
  return "  launch: " + std::to_string(config.numBlocks) + " blocks of " +
         std::to_string(config.numThreads);
}

/// --explain's lines for an emitter that writes its outputs in place
/// (dynamic-update-slice, scatter): one, or one per element of a variadic
/// scatter.
std::string describeInPlace(const PlannedKernel &kernel) {
  std::string text;
  for (size_t slot = 0; slot < kernel.inPlace.size(); ++slot) {
    const InPlaceOutput &inPlace = kernel.inPlace[slot];
    text += kernel.inPlace.size() > 1
                ? "  in place, output " + std::to_string(slot) + ": "
                : std::string("  in place: ");
    if (inPlace.aliasedParameter >= 0)
      text += "the output buffer is parameter " +
              std::to_string(inPlace.aliasedParameter) +
              "'s (input_output_alias; no later kernel reads it); nothing is "
              "copied when the caller donates it\n";
    else if (inPlace.reusesOperand)
      text += "the output buffer is the operand's (no later kernel reads "
              "it); nothing is copied\n";
    else
      text += "the operand's buffer is copied into the output buffer once "
              "before the kernel (it is an input, an output or read later)\n";
    if (!inPlace.aliasRejection.empty())
      text += "    (" + inPlace.aliasRejection + ")\n";
  }
  return text;
}

/// Whether kernel `k` of `plan` may run without its emitter's code (as a
/// relayout or a table lookup) when `enabled`: only on the CPU's own
/// launch, not inside a row group, whose kernels run a chunk of rows at a
/// time, and not over its own input.
bool mayTakeShortcut(const ModulePlan &plan, size_t k, bool enabled,
                     const CompileOptions &options) {
  if (!enabled || options.backend != Backend::Cpu ||
      options.target != Target::Cpu)
    return false;
  for (const RowGroup &group : plan.rowGroups)
    if (group.first <= k && k <= group.last)
      return false;
  return !plan.kernels[k].overwritesInput;
}

/// Whether kernel `k` runs as a relayout with `options`.
std::optional<RelayoutKernel> explainedMove(const ModulePlan &plan, size_t k,
                                            const CompileOptions &options) {
  if (!mayTakeShortcut(plan, k, options.relayouts, options))
    return {};
  return findRelayoutKernel(plan, k);
}

/// What --explain says of a lookup's estimated cost.
std::string costText(const TableLookup &lookup) {
  return llvm::formatv("computing takes an estimated {0:f2} vector "
                       "instructions per element, a lookup about {1:f2}",
                       lookup.computeCost, kLookupCostPerElement)
      .str();
}

/// The vector registers of the CPU `options` compile for: this one's (the
/// same for every compile) or CompileOptions::cpu's, as wide as
/// CompileOptions::vectorWidth lets the vectorizers use them.
VectorUnit vectorUnitFor(const CompileOptions &options) {
  static const VectorUnit host = [] {
    auto machine = hostTargetMachine();
    return machine ? vectorUnitOf(**machine) : VectorUnit();
  }();
  if (options.cpu.empty() && options.vectorWidth == 0)
    return host;
  auto machine = hostTargetMachine(options.cpu);
  return machine ? vectorUnitOf(**machine, options.vectorWidth) : VectorUnit();
}

/// The widest rows of the transpose emitter's squares (transposeSquareLanes):
/// 512 bits where the vectorizers fill zmm registers and the CPU runs them
/// whole, else 256.
unsigned squareBitsFor(const CompileOptions &options) {
  VectorUnit unit = vectorUnitFor(options);
  return unit.bits >= 512 && !unit.halvesWideVectors ? 512 : 256;
}

/// A kernel that gets a copy with streaming stores: its name and the
/// argument numbers of its outputs.
struct StreamedKernel {
  std::string name;
  std::vector<unsigned> outputs;
};

/// The kernels of `plan` that the transpose emitter compiles (those that
/// run as a relayout plan are not), with their analyses.
std::vector<std::pair<size_t, FusionAnalysis>>
emittedTransposes(const ModulePlan &plan, const CompileOptions &options) {
  std::vector<std::pair<size_t, FusionAnalysis>> transposes;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const PlannedKernel &kernel = plan.kernels[k];
    FusionAnalysis analysis =
        analyzeFusion(*kernel.computation, kernel.outputIndices);
    if (analysis.kind == EmitterKind::Transpose && analysis.hero &&
        !explainedMove(plan, k, options))
      transposes.push_back({k, std::move(analysis)});
  }
  return transposes;
}

std::optional<TableLookup> explainedLookup(const ModulePlan &plan, size_t k,
                                           const CompileOptions &options);

/// Whether kernel `k` of `plan` is a loop kernel that writes only outputs
/// of the module, once, outside loops, and runs as its own code (not as a
/// relayout plan or a table lookup): what it writes is read again only
/// after the module returns, so it need not stay in cache.
bool writesModuleOutputsOnce(const ModulePlan &plan, size_t k,
                             const CompileOptions &options) {
  const PlannedKernel &kernel = plan.kernels[k];
  if (kernel.inLoop || kernel.overwritesInput || !kernel.inPlace.empty() ||
      !kernel.scratch.empty())
    return false;
  for (int b : kernel.outputs)
    if (!llvm::is_contained(plan.outputs, b) ||
        llvm::is_contained(plan.inputs, b))
      return false;
  FusionAnalysis analysis =
      analyzeFusion(*kernel.computation, kernel.outputIndices);
  return analysis.kind == EmitterKind::Loop &&
         !explainedMove(plan, k, options) && !explainedLookup(plan, k, options);
}

/// The kernels of `plan` that get a streaming copy (StreamingStores.h),
/// where their outputs take at least the relayouts' streaming threshold
/// (half the last-level cache): the transpose emitter's, and the loop
/// emitter's that write the module's outputs (writesModuleOutputsOnce; a
/// softmax's last kernel, which writes the output a chunk of rows at a
/// time, too). TESSEL_STREAM=0 or 1 decides instead of the size (tests).
std::vector<StreamedKernel> streamedKernels(const ModulePlan &plan,
                                            const CompileOptions &options) {
  std::vector<StreamedKernel> streamed;
  std::optional<bool> forced = switchFromEnv("TESSEL_STREAM");
  if (forced == false)
    return streamed;
  std::vector<size_t> candidates;
  for (const auto &[k, analysis] : emittedTransposes(plan, options))
    candidates.push_back(k);
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    if (writesModuleOutputsOnce(plan, k, options))
      candidates.push_back(k);
  for (size_t k : candidates) {
    const PlannedKernel &kernel = plan.kernels[k];
    int64_t bytes = 0;
    for (int b : kernel.outputs)
      bytes += bufferBytes(plan.buffers[b]);
    if (!forced && bytes < relayoutDefaultStreamingThreshold())
      continue;
    StreamedKernel s{kernel.name, {}};
    for (size_t i = 0; i < kernel.outputs.size(); ++i)
      s.outputs.push_back(static_cast<unsigned>(kernel.inputs.size() + i));
    streamed.push_back(std::move(s));
  }
  return streamed;
}

/// A kernel whose loads from some inputs prefetch the next tile
/// (InputPrefetch.h): its name and (argument number, bytes ahead).
struct PrefetchedKernel {
  std::string name;
  std::vector<std::pair<unsigned, int64_t>> inputs;
};

/// The kernels of `plan` whose input loads prefetch (InputPrefetch.h): the
/// transpose emitter's on the CPU's own launch, where their inputs take at
/// least the relayouts' streaming threshold; each input with as many
/// elements as the transpose's operand (read tile by tile as it is)
/// prefetches one tile width ahead, the tile's columns times its element
/// size. TESSEL_PREFETCH=0 or 1 decides instead of the size (tests,
/// comparisons).
std::vector<PrefetchedKernel> prefetchedKernels(const ModulePlan &plan,
                                                const CompileOptions &options) {
  std::vector<PrefetchedKernel> prefetched;
  std::optional<bool> forced = switchFromEnv("TESSEL_PREFETCH");
  if (forced == false || options.target != Target::Cpu)
    return prefetched;
  for (const auto &[k, analysis] : emittedTransposes(plan, options)) {
    const PlannedKernel &kernel = plan.kernels[k];
    const NormalizedTranspose &n = analysis.transpose;
    int64_t cols = getTransposeLaunch(*analysis.hero, n, Target::Cpu)
                       .tileShape[n.minor()] -
                   1;
    int64_t elements = 1, bytes = 0;
    for (int64_t d : n.dims)
      elements *= d;
    PrefetchedKernel p{kernel.name, {}};
    for (size_t i = 0; i < kernel.inputs.size(); ++i) {
      const Shape &shape = plan.buffers[kernel.inputs[i]];
      int64_t count = 1;
      for (int64_t d : shape.dims)
        count *= d;
      int64_t width = byteWidth(shape.elementType);
      if (count != elements || width < 1)
        continue;
      bytes += bufferBytes(shape);
      p.inputs.push_back({static_cast<unsigned>(i), cols * width});
    }
    if (p.inputs.empty() ||
        (!forced && bytes < relayoutDefaultStreamingThreshold()))
      continue;
    prefetched.push_back(std::move(p));
  }
  return prefetched;
}

/// translateForHost, with the marks of `prefetched`, plus the streaming
/// copies of `streamed` (which keep the marks).
std::unique_ptr<llvm::Module>
translateWithCopies(mlir::Operation *module, llvm::LLVMContext &context,
                    llvm::TargetMachine &machine,
                    const std::vector<StreamedKernel> &streamed,
                    const std::vector<PrefetchedKernel> &prefetched,
                    const llvm::StringSet<> &tables, unsigned vectorWidth) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateForHost(module, context, machine, tables, vectorWidth);
  if (!llvmModule)
    return llvmModule;
  for (const PrefetchedKernel &kernel : prefetched)
    markInputPrefetches(*llvmModule, kernel.name, kernel.inputs);
  for (const StreamedKernel &kernel : streamed)
    addStreamingCopy(*llvmModule, kernel.name, kStreamSuffix, kernel.outputs);
  return llvmModule;
}

/// -O3 for `machine`, then the marked kernels' prefetches added and the
/// streaming copies' stores marked.
std::function<llvm::Error(llvm::Module *)>
optimizer(llvm::TargetMachine *machine) {
  auto optimize = mlir::makeOptimizingTransformer(3, 0, machine);
  return [optimize](llvm::Module *module) -> llvm::Error {
    if (llvm::Error error = optimize(module))
      return error;
    addInputPrefetches(*module);
    markStreamingStores(*module);
    return llvm::Error::success();
  };
}

/// Whether kernel `k` could run as a table lookup with `options`, whether
/// it pays or not.
std::optional<TableLookup> possibleLookup(const ModulePlan &plan, size_t k,
                                          const CompileOptions &options) {
  if (!mayTakeShortcut(plan, k, options.tables, options))
    return {};
  return findTableLookup(plan, k, vectorUnitFor(options));
}

/// Whether kernel `k` runs as a table lookup with `options` (as
/// Executable::compile decides; a table is only not built when the
/// kernel's launch differs from the CPU's, which findTableLookup checks):
/// where it could and, with tablesByCost, where computing costs more.
std::optional<TableLookup> explainedLookup(const ModulePlan &plan, size_t k,
                                           const CompileOptions &options) {
  std::optional<TableLookup> lookup = possibleLookup(plan, k, options);
  if (lookup && options.tablesByCost && !lookup->pays())
    return {};
  return lookup;
}

/// The kernels of `plan` that run as a table lookup with `options`.
llvm::StringSet<> tableKernels(const ModulePlan &plan,
                               const CompileOptions &options) {
  llvm::StringSet<> names;
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    if (explainedLookup(plan, k, options))
      names.insert(plan.kernels[k].name);
  return names;
}

} // namespace

Expected<std::shared_ptr<Executable>>
Executable::compile(const HloModule &module, const CompileOptions &options) {
  // Never destroyed: engines are not torn down during exit, after the
  // statics of LLVM they use.
  static std::mutex mutex;
  static auto &cache =
      *new std::map<std::string, std::shared_ptr<Executable>>();
  if (!options.cpu.empty() && options.backend == Backend::Cpu)
    return Error("an executable runs on this CPU: --cpu " + options.cpu +
                 " is for tessel compile's --emit=llvm and --emit=asm");
  if (Status width = checkVectorWidth(options); !width)
    return width.error();
  std::string key = cacheKey(module, options);
  bool dumping = !options.dumpAfter.empty();
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end() && !dumping)
      return it->second;
  }
  if (options.backend == Backend::Nvptx)
    return compileGpuExecutable(module, options);
  auto start = std::chrono::steady_clock::now();
  auto exe = std::make_shared<CpuExecutable>();
  // Only the CPU's own launch runs a chunk of rows at a time.
  Expected<ModulePlan> plan = planModule(module, options.target == Target::Cpu);
  if (!plan)
    return plan.error();
  exe->plan = std::move(*plan);
  exe->target = options.target;
  exe->context = createCodegenContext();
  auto mlirModule = emitKernels(exe->plan, options, exe->context.get(),
                                squareBitsFor(options));
  if (!mlirModule)
    return mlirModule.error();
  std::vector<CompiledKernel> kernels;
  for (const PlannedKernel &planned : exe->plan.kernels) {
    auto func = (*mlirModule)->lookupSymbol<mlir::func::FuncOp>(planned.name);
    CompiledKernel kernel;
    kernel.name = planned.name;
    kernel.numThreads =
        func->getAttrOfType<mlir::IntegerAttr>("tessel.num_threads").getInt();
    kernel.numBlocks =
        func->getAttrOfType<mlir::IntegerAttr>("tessel.num_blocks").getInt();
    kernels.push_back(kernel);
  }
  Status lowered = lowerToLlvmDialect(**mlirModule, options);
  if (!lowered)
    return lowered.error();
  auto machine = hostTargetMachine();
  if (!machine)
    return machine.error();
  // The options hold function_refs: the callables live in the executable.
  llvm::TargetMachine *target = machine->get();
  std::vector<StreamedKernel> streamed = streamedKernels(exe->plan, options);
  std::vector<PrefetchedKernel> prefetched =
      prefetchedKernels(exe->plan, options);
  exe->optimize = optimizer(target);
  llvm::StringSet<> tables = tableKernels(exe->plan, options);
  unsigned vectorWidth = options.vectorWidth;
  exe->build = [target, streamed, prefetched, tables,
                vectorWidth](mlir::Operation *op, llvm::LLVMContext &context) {
    return translateWithCopies(op, context, *target, streamed, prefetched,
                               tables, vectorWidth);
  };
  mlir::ExecutionEngineOptions engineOptions;
  engineOptions.transformer = exe->optimize;
  engineOptions.llvmModuleBuilder = exe->build;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // TESSEL_PERF=1: tell `perf` the kernels' names (/tmp/perf-PID.map).
  engineOptions.enablePerfNotificationListener = std::getenv("TESSEL_PERF");
  engineOptions.enableObjectDump = std::getenv("TESSEL_OBJECT");
  auto engine = mlir::ExecutionEngine::create(**mlirModule, engineOptions,
                                              std::move(*machine));
  if (!engine)
    return Error("JIT compilation failed: " +
                 llvmErrorMessage(engine.takeError()));
  exe->engine = std::move(*engine);
  // The complex functions the kernels call (ComplexRuntime.h).
  exe->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    for (auto [name, address] : complexRuntimeSymbols())
      symbols[interner(name)] = llvm::orc::ExecutorSymbolDef(
          llvm::orc::ExecutorAddr::fromPtr(address),
          llvm::JITSymbolFlags::Exported);
    return symbols;
  });
  if (const char *object = std::getenv("TESSEL_OBJECT"))
    exe->engine->dumpToObjectFile(object);
  for (CompiledKernel &kernel : kernels) {
    auto function = exe->engine->lookupPacked(kernel.name);
    if (!function)
      return Error("JIT: no kernel " + kernel.name + ": " +
                   llvmErrorMessage(function.takeError()));
    kernel.function = *function;
    for (const StreamedKernel &s : streamed) {
      if (s.name != kernel.name)
        continue;
      auto copy = exe->engine->lookupPacked(kernel.name + kStreamSuffix.str());
      if (!copy)
        return Error("JIT: no kernel " + kernel.name + kStreamSuffix.str() +
                     ": " + llvmErrorMessage(copy.takeError()));
      kernel.streamFunction = *copy;
      kernel.numOutputs = s.outputs.size();
    }
  }
  exe->kernels = std::move(kernels);
  exe->moves.resize(exe->kernels.size());
  for (size_t k = 0; k < exe->kernels.size(); ++k)
    exe->moves[k] = explainedMove(exe->plan, k, options);
  exe->lookups.resize(exe->kernels.size());
  exe->tables.resize(exe->kernels.size());
  for (size_t k = 0; k < exe->kernels.size(); ++k) {
    std::optional<TableLookup> lookup = explainedLookup(exe->plan, k, options);
    if (!lookup)
      continue;
    exe->tables[k] = buildTable(exe->kernels[k], exe->plan.kernels[k], *lookup);
    if (!exe->tables[k].empty())
      exe->lookups[k] = lookup;
  }
  exe->compileMs = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  std::lock_guard<std::mutex> lock(mutex);
  cache[key] = exe;
  return std::shared_ptr<Executable>(exe);
}

Expected<std::string> emitHloModule(const HloModule &module, EmitKind kind,
                                    const CompileOptions &options) {
  bool gpu = options.backend == Backend::Nvptx;
  if (kind == EmitKind::Ptx && !gpu)
    return Error("PTX is written for the GPU: add --target=nvptx");
  if (Status width = checkVectorWidth(options); !width)
    return width.error();
  Expected<ModulePlan> plan =
      planModule(module, !gpu && options.target == Target::Cpu);
  if (!plan)
    return plan.error();
  auto context = createCodegenContext();
  if (kind == EmitKind::Explain) {
    std::string text;
    for (const PlannedKernel &kernel : plan->kernels) {
      std::vector<FusionOutput> all = getFusionOutputs(*kernel.computation);
      const Shape &shape = all[kernel.outputIndices.front()].shape();
      FusionAnalysis analysis = analyzeFusion(
          *kernel.computation, kernel.outputIndices, launchTarget(options));
      text += kernel.name + ": " + kernel.origin + ", computation %" +
              kernel.computation->name() + "\n";
      text += "  emitter: " + std::string(emitterKindName(analysis.kind)) +
              ": " + analysis.reason + "\n";
      for (const std::string &rejected : analysis.rejected)
        text += "    (" + rejected + ")\n";
      if (analysis.kind == EmitterKind::Transpose) {
        Target target = launchTarget(options);
        TransposeLaunch launch =
            getTransposeLaunch(*analysis.hero, analysis.transpose, target);
        std::string tile;
        for (int64_t d : launch.tileShape)
          tile += std::to_string(d) + "x";
        int64_t squareLanes = transposeSquareLanes(*analysis.hero, target,
                                                   squareBitsFor(options));
        int64_t across = transposeSquaresAcross(*analysis.hero, target,
                                                squareBitsFor(options));
        int64_t warpLanes = transposeCpuLanes(*analysis.hero, target);
        std::string side = std::to_string(squareLanes);
        std::string strip = std::to_string(across * squareLanes);
        text +=
            describeLaunch(launch.config) + " threads; shared tile " + tile +
            std::string(primitiveTypeName(analysis.hero->shape().elementType)) +
            " (one column of padding)" +
            (transposesInRegisters(*analysis.hero, target)
                 ? "; " + side + "x" + side + " squares" +
                       (across > 1 ? ", " + std::to_string(across) +
                                         " side by side in a vector,"
                                   : std::string()) +
                       " transposed in registers into a second "
                       "tile of " +
                       std::to_string(
                           launch.tileShape[analysis.transpose.minor()] - 1) +
                       "x" +
                       std::to_string(
                           launch.tileShape[analysis.transpose.toMinor()]) +
                       ", strip by strip of " + strip +
                       " columns (the squares, then phase 2 for their output "
                       "rows)"
                 : std::string()) +
            (warpLanes != 32
                 ? "; thread loops in warps of " + std::to_string(warpLanes) +
                       " lanes (" +
                       std::to_string(
                           warpLanes *
                           byteWidth(analysis.hero->shape().elementType)) +
                       " bytes a load or store)"
                 : std::string()) +
            "\n";
        text += "  phase 1, threads -> (operand, tile): " +
                getTransposeReadMap(*analysis.hero, analysis.transpose,
                                    context.get(), target)
                    .toString() +
                "\n";
        text += "  phase 2, threads -> (output, tile): " +
                getTransposeWriteMap(*analysis.hero, analysis.transpose,
                                     context.get(), target)
                    .toString() +
                "\n";
      } else if (analysis.kind == EmitterKind::ColumnReduction) {
        Target target = launchTarget(options);
        LaunchConfig config =
            getColumnReductionLaunch(analysis.reduction, target);
        text += describeLaunch(config) +
                " threads; accumulators in a shared tile of " +
                std::to_string(config.numThreads) + "; " +
                std::to_string(analysis.reduction.rows) + " rows in order, " +
                std::to_string(columnReductionRowsPerStep(analysis.reduction)) +
                " per step of a thread loop\n";
        text += "  rows, threads -> (operand, tile): " +
                getColumnReductionReadMap(*analysis.hero, analysis.reduction,
                                          context.get(), target)
                    .toString() +
                "\n";
        text += "  threads -> (output, tile): " +
                getColumnReductionWriteMap(*analysis.hero, analysis.reduction,
                                           context.get(), target)
                    .toString() +
                "\n";
      } else if (analysis.kind == EmitterKind::RowReduction) {
        const RowReduction &r = analysis.rowReduction;
        RowReductionLaunch launch = getRowReductionLaunch(r);
        int64_t tail = r.minor % kRowReductionLanes;
        text +=
            describeLaunch(launch.config) + " threads, " +
            std::to_string(kRowReductionLanes) + " per row (" +
            std::to_string(launch.rowsPerBlock) +
            " rows per block); partial results in a shared tile " +
            std::to_string(launch.tileShape[0]) + "x" +
            std::to_string(launch.tileShape[1]) + "x" +
            std::to_string(launch.tileShape[2]) + "x" +
            std::string(primitiveTypeName(analysis.hero->shape().elementType)) +
            " (row, run, lane); the 16 threads of a row read 16 "
            "consecutive elements at a time (coalesced), then its first "
            "thread folds the 16 in order" +
            (tail ? " and the " + std::to_string(tail) + " past them" : "") +
            "\n";
        text += "  phase 1, (threads, run, chunk) -> (operand, tile): " +
                getRowReductionReadMap(*analysis.hero, r, context.get())
                    .toString() +
                "\n";
        if (tail)
          text += "  phase 2, tail: (threads, run, t) -> operand: " +
                  getRowReductionTailMap(*analysis.hero, r, context.get())
                      .toString() +
                  "\n";
        text += "  phase 2, threads -> (output, tile row): " +
                getRowReductionWriteMap(*analysis.hero, r, context.get())
                    .toString() +
                "\n";
      } else if (analysis.kind == EmitterKind::Concatenate) {
        const HloInstruction &hero = *analysis.hero;
        LaunchConfig config = getConcatenateLaunch(hero, options.target);
        text += describeLaunch(config) +
                " threads (the largest operand's loop launch, one element "
                "per thread); a loop per operand:\n";
        int64_t offset = 0, dim = hero.dimensions().front();
        for (int64_t k = 0; k < hero.operandCount(); ++k) {
          text += "  operand " + std::to_string(k) + " -> output dim " +
                  std::to_string(dim) + " + " + std::to_string(offset) + ": " +
                  getConcatenateOperandMap(hero, k, config, context.get())
                      .toString() +
                  "\n";
          offset += hero.operand(k)->shape().dims[dim];
        }
      } else if (analysis.kind == EmitterKind::Scatter) {
        const HloInstruction &scatter = *analysis.hero;
        Expected<ScatterDimensions> dims = getScatterDimensions(scatter);
        bool unique = dims && dims->uniqueIndices;
        LaunchConfig config =
            getScatterLaunch(scatter, unique, launchTarget(options));
        text += describeLaunch(config) +
                (unique ? " threads (the loop launch of the updates, one "
                          "element per thread)\n"
                        : " threads: every update in the evaluator's order, "
                          "one after the other\n");
        text += "  threads -> update: " +
                getScatterUpdateMap(scatter, unique, config, context.get())
                    .toString() +
                "\n";
        text += describeInPlace(kernel);
      } else if (analysis.kind == EmitterKind::DynamicUpdateSlice) {
        const HloInstruction &dus = *analysis.hero;
        LaunchConfig config =
            getDynamicUpdateSliceLaunch(dus, launchTarget(options));
        text += describeLaunch(config) +
                " threads (the loop launch of the update, one element per "
                "thread); starts clamped to [0, operand dim - update dim]\n";
        text +=
            "  threads -> update: " +
            getDynamicUpdateSliceMap(dus, config, context.get()).toString() +
            "\n";
        text += describeInPlace(kernel);
      } else if (analysis.kind == EmitterKind::Sort) {
        const HloInstruction &sort = *analysis.hero;
        Target target = launchTarget(options);
        LaunchConfig config = getSortLaunch(sort, target);
        Expected<SortDimensions> dims = getSortDimensions(sort);
        std::string positions =
            dims ? std::string(primitiveTypeName(dims->positionType())) : "s64";
        text += describeLaunch(config) +
                (target == Target::Gpu
                     ? " threads, a thread per line"
                     : " thread: a block per line, the workers take blocks") +
                "; the positions in two scratch buffers of " + positions + "\n";
        text += "  threads -> line: " +
                getSortLineMap(sort, config, context.get()).toString() + "\n";
      } else if (analysis.kind == EmitterKind::InputSlices) {
        const HloInstruction &input = *analysis.hero;
        LaunchConfig config =
            getInputSlicesLaunch(input, launchTarget(options));
        text += describeLaunch(config) + " threads (the loop launch of %" +
                input.name() + ", one element per thread)\n";
        text += "  threads -> %" + input.name() + ": " +
                getInputSlicesMap(input, config, context.get()).toString() +
                "\n";
        for (int64_t i : kernel.outputIndices) {
          std::string bounds;
          for (const SliceDim &s : all[i].instruction->attributes().slice)
            bounds += (bounds.empty() ? "" : ", ") + std::to_string(s.start) +
                      ":" + std::to_string(s.limit) +
                      (s.stride == 1 ? "" : ":" + std::to_string(s.stride));
          text += "  %" + all[i].instruction->name() + " <- [" + bounds +
                  "] of it\n";
        }
      } else {
        Target target = launchTarget(options);
        int64_t work = getLoopWorkPerElement(*kernel.computation);
        LaunchConfig config = getLoopLaunchConfig(shape, target, work);
        IndexingMap map =
            getLoopThreadToOutputMap(shape, config, context.get());
        text += describeLaunch(config) + " threads, " +
                std::to_string(config.vectorSize) +
                (config.vectorSize == 1 ? " element" : " elements") +
                " per thread (" +
                (target == Target::Cpu
                     ? "the CPU's: a thread per element of the minor dims, "
                       "so the thread loop vectorizes"
                 : work > 64 ? "the GPU's for elements that reduce " +
                                   std::to_string(work) +
                                   " each: a thread per element, 32 to 128 per "
                                   "block"
                             : "the GPU's: 128 threads, up to 4 elements") +
                ")\n";
        text += "  threads -> output: " + map.toString() + "\n";
      }
      text += "  writes:";
      for (int64_t i : kernel.outputIndices)
        text +=
            " %" + all[i].instruction->name() +
            (all[i].element >= 0 ? "{" + std::to_string(all[i].element) + "}"
                                 : "") +
            " " + all[i].shape().toString();
      text += "\n";
      size_t k = static_cast<size_t>(&kernel - plan->kernels.data());
      if (std::optional<RelayoutKernel> move =
              explainedMove(*plan, k, options)) {
        Expected<RelayoutPlan> relayout = RelayoutPlan::create(
            move->source, move->source.layoutOrDefault(), move->destination);
        if (relayout)
          text += "  runs as a relayout of " + move->source.toString() +
                  " to " + move->destination.toString() + ": " +
                  relayout->describe() +
                  " (--no-relayout: the emitter's code)\n";
      }
      if (std::optional<TableLookup> lookup =
              explainedLookup(*plan, k, options))
        text +=
            "  runs as a table lookup: " + std::to_string(lookup->entries) +
            " entries of " +
            std::string(primitiveTypeName(lookup->outputType)) + " (" +
            (lookup->tableBytes() < 1024
                 ? std::to_string(lookup->tableBytes()) + " bytes"
                 : std::to_string(lookup->tableBytes() >> 10) + " KiB") +
            "), one per " + std::string(primitiveTypeName(lookup->inputType)) +
            " bit pattern of parameter " + std::to_string(lookup->parameter) +
            ", computed by this kernel when it is compiled (" +
            costText(*lookup) + "; --no-tables: compute every element)\n";
      else if (std::optional<TableLookup> lookup =
                   possibleLookup(*plan, k, options))
        text += "  computes rather than a table lookup: " + costText(*lookup) +
                " (--all-tables: look it up anyway)\n";
    }
    // The GPU and --gpu-launch run one kernel at a time.
    for (const RowGroup &group : plan->rowGroups) {
      if (launchTarget(options) != Target::Cpu)
        break;
      std::string rows;
      for (int64_t d : group.rowDims)
        rows += (rows.empty() ? "" : "x") + std::to_string(d);
      text += "kernel_" + std::to_string(group.first) + " to kernel_" +
              std::to_string(group.last) + " run a chunk of rows at a time (" +
              rows +
              " rows; each reads the values computed once only at its own "
              "row): the chunk stays in cache from one to the next\n";
      for (int b : group.localBuffers)
        for (size_t k = group.first; k <= group.last; ++k)
          if (plan->kernels[k].outputs.front() == b)
            text += "  " + plan->kernels[k].name +
                    "'s output is shared (read by two kernels): each worker "
                    "keeps the chunk's rows of it in a scratch buffer\n";
    }
    if (!gpu) {
      auto machine = hostTargetMachine(options.cpu);
      if (!machine)
        return machine.error();
      const char *why =
          options.vectorWidth != 0 ? "--prefer-vector-width"
          : defaultVectorWidth(**machine) != 0
              ? "AVX-512 of Ice Lake's generation or later; "
                "--prefer-vector-width to change"
              : "LLVM's choice for this CPU; --prefer-vector-width to change";
      text += "vectors: LLVM's vectorizers fill " +
              std::to_string(vectorUnitFor(options).bits) + "-bit registers (" +
              (*machine)->getTargetCPU().str() + ": " + why + ")\n";
    }
    Expected<std::string> partition =
        emitHloModule(module, EmitKind::Partition, options);
    if (!partition)
      return partition.error();
    return text + "\n" + *partition;
  }
  if (kind == EmitKind::Partition) {
    std::string text;
    // Where the module has control flow: its steps, then the kernels.
    if (std::string described = describeSteps(*plan); !described.empty())
      text += described + "\n";
    for (const PlannedKernel &kernel : plan->kernels) {
      Expected<PartitionedComputation> partition =
          partitionComputation(*kernel.computation, context.get(),
                               getPartitionOptions(analyzeFusion(
                                   *kernel.computation, kernel.outputIndices,
                                   launchTarget(options))));
      if (!partition)
        return partition.error();
      text += kernel.name + ": computation " + kernel.computation->name() +
              "\n" + partition->toString();
    }
    return text;
  }
  auto mlirModule =
      emitKernels(*plan, options, context.get(), squareBitsFor(options));
  if (!mlirModule)
    return mlirModule.error();
  std::string text;
  llvm::raw_string_ostream os(text);
  if (kind == EmitKind::Mlir) {
    (*mlirModule)->print(os);
    return text;
  }
  Status lowered = lowerToLlvmDialect(**mlirModule, options);
  if (!lowered)
    return lowered.error();
  if (kind == EmitKind::Lowered) {
    (*mlirModule)->print(os);
    return text;
  }
  if (gpu)
    return translateToNvptx(**mlirModule, options.smVersion,
                            /*ptx=*/kind != EmitKind::Llvm);
  auto machine = hostTargetMachine(options.cpu);
  if (!machine)
    return machine.error();
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateWithCopies(
      **mlirModule, llvmContext, **machine, streamedKernels(*plan, options),
      prefetchedKernels(*plan, options), tableKernels(*plan, options),
      options.vectorWidth);
  if (!llvmModule)
    return Error("translation to LLVM IR failed");
  auto optimize = optimizer(machine->get());
  if (llvm::Error error = optimize(llvmModule.get()))
    return Error("LLVM optimization failed: " +
                 llvmErrorMessage(std::move(error)));
  if (kind == EmitKind::Llvm) {
    llvmModule->print(os, nullptr);
    return text;
  }
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream asmStream(buffer);
  llvm::legacy::PassManager pm;
  if ((*machine)->addPassesToEmitFile(pm, asmStream, nullptr,
                                      llvm::CodeGenFileType::AssemblyFile))
    return Error("the host target cannot emit assembly");
  pm.run(*llvmModule);
  return std::string(buffer.begin(), buffer.end());
}

} // namespace tessel
