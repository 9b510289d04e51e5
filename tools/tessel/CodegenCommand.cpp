//===- CodegenCommand.cpp - `tessel compile` and `tessel run` -------------===//
//
//   tessel compile M.hlo [--emit=partition|mlir|lowered|llvm|asm|ptx]
//                        [--target=cpu|nvptx [--sm NN]]
//                        [--dump-after REGEX --dump-dir DIR] [--explain]
//   tessel run M.hlo [--input x.npy ...] [--output y.npy ...] [--check]
//                    [--threads N] [--repeat N] [--device cpu|gpu [--sm NN]]
//
// run reads and writes logical arrays (the layouts are the compiler's
// business); without --input it makes reproducible random arguments.
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"
#include "Commands.h"
#include "HloInput.h"

#include "tessel/Codegen/Compiler.h"
#include "tessel/Hlo/FloatTypes.h"
#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Support/Host.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <thread>

#include <unistd.h>

namespace cl = llvm::cl;

namespace tessel {
namespace {

//===----------------------------------------------------------------------===//
// tessel compile
//===----------------------------------------------------------------------===//

/// `--no-tables` and `--no-relayout`, which `tessel compile` and `tessel
/// run` share: kernels the CPU runs without the emitters' code, turned off.
struct ShortcutOptions {
  cl::opt<bool> noTables{
      "no-tables",
      cl::desc("compute every element of an elementwise kernel of one 8- "
               "or 16-bit input, which otherwise runs as a lookup in a "
               "table of its results (the same bits, computed once per "
               "input bit pattern when compiled)"),
      cl::cat(cli::category())};
  cl::opt<bool> allTables{
      "all-tables",
      cl::desc("look up every kernel that can be a table, also where "
               "computing its elements is estimated to cost less (for "
               "comparisons; --explain prints both estimates)"),
      cl::cat(cli::category())};
  cl::opt<bool> noRelayout{
      "no-relayout",
      cl::desc("run the emitter's code for a kernel that only transposes "
               "or copies an input, which otherwise runs as a plan of "
               "tessel's relayout library (the same bytes)"),
      cl::cat(cli::category())};
  cl::opt<unsigned> vectorWidth{
      "prefer-vector-width",
      cl::desc("the widest vectors LLVM's vectorizers use on the CPU, in "
               "bits (128, 256, 512; as clang's -mprefer-vector-width). "
               "Default: 512 on AVX-512 CPUs from Ice Lake and Zen 4 on, "
               "LLVM's choice for the CPU elsewhere (256 on Skylake-SP). "
               "Below 512 the transpose emitter also keeps its narrower "
               "register squares (--explain names them)"),
      cl::value_desc("BITS"), cl::cat(cli::category())};

  void apply(CompileOptions &options) const {
    options.tables = !noTables;
    options.tablesByCost = !allTables;
    options.relayouts = !noRelayout;
    options.vectorWidth = vectorWidth;
  }
};

int runCompile(int argc, char **argv) {
  cl::opt<std::string> path(cl::Positional, cl::Required, cl::desc("<M.hlo>"),
                            cl::cat(cli::category()));
  cl::opt<EmitKind> emit(
      "emit", cl::desc("what to print"), cl::init(EmitKind::Mlir),
      cl::values(
          clEnumValN(EmitKind::Partition, "partition",
                     "the functions of each kernel and why each cut was made"),
          clEnumValN(EmitKind::Mlir, "mlir",
                     "the emitted MLIR (tessel, tensor, arith, math)"),
          clEnumValN(EmitKind::Lowered, "lowered",
                     "the llvm dialect after the whole pipeline"),
          clEnumValN(EmitKind::Llvm, "llvm", "LLVM IR after -O3"),
          clEnumValN(EmitKind::Asm, "asm",
                     "host assembly (PTX with --target=nvptx)"),
          clEnumValN(EmitKind::Ptx, "ptx",
                     "PTX for an NVIDIA GPU (with --target=nvptx)")),
      cl::cat(cli::category()));
  cl::opt<Backend> target(
      "target", cl::desc("what the kernels are compiled for"),
      cl::init(Backend::Cpu),
      cl::values(clEnumValN(Backend::Cpu, "cpu", "this CPU (the default)"),
                 clEnumValN(Backend::Nvptx, "nvptx",
                            "NVIDIA GPUs: NVVM, LLVM's NVPTX backend, PTX "
                            "(the GPU's launch)")),
      cl::cat(cli::category()));
  cl::opt<int> sm("sm",
                  cl::desc("with --target=nvptx: the compute capability "
                           "the PTX is for (80: sm_80, 90: sm_90)"),
                  cl::init(90), cl::value_desc("NN"), cl::cat(cli::category()));
  cl::opt<std::string> cpu(
      "cpu",
      cl::desc("compile for another CPU than this one, by LLVM's name "
               "(znver4, sapphirerapids, x86-64-v3, ...): --emit=llvm and "
               "--emit=asm show its code, --explain its choices (the "
               "cache sizes stay this machine's)"),
      cl::value_desc("NAME"), cl::cat(cli::category()));
  cl::opt<std::string> dumpAfter(
      "dump-after",
      cl::desc("write the IR after every pass whose flag matches REGEX "
               "(e.g. '.*' or 'tessel-flatten-tensors') to --dump-dir"),
      cl::value_desc("REGEX"), cl::cat(cli::category()));
  cl::opt<std::string> dumpDir(
      "dump-dir", cl::desc("directory for --dump-after"), cl::value_desc("DIR"),
      cl::init("tessel-dump"), cl::cat(cli::category()));
  cl::opt<bool> gpu("gpu-launch",
                    cl::desc("emit with the GPU's launch configuration (128 "
                             "threads of up to 4 elements); on the CPU its "
                             "threads run as a loop"),
                    cl::cat(cli::category()));
  cl::opt<bool> excess(
      "excess-precision",
      cl::desc("XLA's default numerics: bf16/f16 values stay f32 between "
               "the ops of a fusion (default: round after every op, "
               "bit-exact to the evaluator)"),
      cl::cat(cli::category()));
  ShortcutOptions shortcuts;
  cl::opt<bool> explain(
      "explain",
      cl::desc(
          "say which kernels the module becomes, which emitter each "
          "uses (loop, transpose, column reduction, concatenate, input "
          "slices, dynamic-update-slice in place, scatter, sort) and why, how "
          "it is launched, then the partition"),
      cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "compile an HLO module's fusions to kernels and print an IR\n\n"
          "  tessel compile examples/gelu.hlo --emit=partition\n"
          "  tessel compile examples/gelu.hlo --emit=mlir\n"
          "  tessel compile examples/gelu.hlo --emit=llvm\n"
          "  tessel compile examples/gelu.hlo --cpu=znver4 --emit=asm\n"
          "  tessel compile examples/gelu.hlo --target=nvptx --sm 80 "
          "--emit=ptx\n"
          "  tessel compile examples/gelu.hlo --dump-after '.*' --dump-dir "
          "d\n"))
    return 2;
  if (sm.getNumOccurrences() && target != Backend::Nvptx)
    return cli::usageError("--sm is for --target=nvptx");
  if (!cpu.empty() && target != Backend::Cpu)
    return cli::usageError("--cpu is for --target=cpu");
  if (emit == EmitKind::Ptx && target != Backend::Nvptx)
    return cli::usageError("--emit=ptx needs --target=nvptx");
  std::unique_ptr<HloModule> module = cli::loadHloModule(path);
  if (!module || !cli::checkInlinedSize(*module, path))
    return 1;
  CompileOptions options;
  options.target = gpu ? Target::Gpu : Target::Cpu;
  options.backend = target;
  options.smVersion = sm;
  options.cpu = cpu;
  options.dumpAfter = dumpAfter;
  options.dumpDir = dumpDir;
  options.excessPrecision = excess;
  shortcuts.apply(options);
  Expected<std::string> text =
      emitHloModule(*module, explain ? EmitKind::Explain : emit, options);
  if (!text)
    return cli::fail(cli::atFile(path, text.takeError()));
  llvm::outs() << *text;
  return 0;
}

//===----------------------------------------------------------------------===//
// tessel run
//===----------------------------------------------------------------------===//

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// The CPU time of this process, every thread (a worker that waits for
/// work spins a little, which counts too).
double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// Copies `bytes` from `src` to `dst` in chunks over `threads` workers: the
/// physical limit the kernels are measured against.
void parallelCopy(void *dst, const void *src, int64_t bytes, int threads) {
  constexpr int64_t kChunk = 1 << 20;
  int64_t chunks = (bytes + kChunk - 1) / kChunk;
  auto copy = [&](int64_t c) {
    int64_t begin = c * kChunk, size = std::min(kChunk, bytes - begin);
    std::memcpy(static_cast<char *>(dst) + begin,
                static_cast<const char *>(src) + begin, size);
  };
  if (threads <= 1) {
    for (int64_t c = 0; c < chunks; ++c)
      copy(c);
    return;
  }
  // One arena for every copy of the run, as the kernels keep theirs: an
  // arena made per call would charge its start-up to the copy.
  static tbb::task_arena arena(threads);
  arena.execute([&] { tbb::parallel_for(int64_t(0), chunks, copy); });
}

int runRun(int argc, char **argv) {
  cl::opt<std::string> path(cl::Positional, cl::Required, cl::desc("<M.hlo>"),
                            cl::cat(cli::category()));
  cl::list<std::string> inputs(
      "input", cl::desc("an argument, in parameter order (.npy, logical)"),
      cl::value_desc("FILE"), cl::cat(cli::category()));
  cl::list<std::string> outputs(
      "output", cl::desc("where to write a result (.npy); one per output"),
      cl::value_desc("FILE"), cl::cat(cli::category()));
  cl::opt<bool> check(
      "check",
      cl::desc("also run the reference evaluator and compare: exact "
               "unless the module uses approximated functions"),
      cl::cat(cli::category()));
  cl::opt<int> repeat(
      "repeat",
      cl::desc("run N times and print the median time, GB/s and the ratio "
               "to a copy of the same bytes (with --device gpu: the kernels "
               "alone, against a copy inside the device)"),
      cl::init(0), cl::cat(cli::category()));
  cl::opt<bool> excess(
      "excess-precision",
      cl::desc("XLA's default numerics: bf16/f16 values stay f32 between "
               "the ops of a fusion; --check then allows the rounding "
               "differences"),
      cl::cat(cli::category()));
  cl::opt<bool> gpu("gpu-launch",
                    cl::desc("run the kernels a GPU launch would get (128 "
                             "threads of up to 4 elements, vector loads) on "
                             "the CPU"),
                    cl::cat(cli::category()));
  cl::opt<std::string> device(
      "device",
      cl::desc("where the kernels run: cpu (the default) or gpu (PTX "
               "through the CUDA driver, opened at run time)"),
      cl::init("cpu"), cl::value_desc("cpu|gpu"), cl::cat(cli::category()));
  cl::opt<int> sm("sm",
                  cl::desc("with --device gpu: the compute capability the "
                           "PTX is for (default: the device's)"),
                  cl::init(0), cl::value_desc("NN"), cl::cat(cli::category()));
  ShortcutOptions shortcuts;
  cl::opt<bool> kernelAtATime(
      "kernel-at-a-time",
      cl::desc("run each kernel over all its blocks before the next, also "
               "the kernels of a split softmax or layer norm that otherwise "
               "run a chunk of rows at a time (for comparisons)"),
      cl::cat(cli::category()));
  cl::opt<uint64_t> seed("seed", cl::desc("seed of the random arguments"),
                         cl::init(1), cl::cat(cli::category()));
  cl::opt<bool> specials(
      "special-values",
      cl::desc("random float arguments include NaN, infinities, signed "
               "zeros, subnormals and the largest values (about 1 in 16)"),
      cl::cat(cli::category()));
  std::string programName = "tessel run";
  std::vector<char *> args(argv, argv + argc);
  args[0] = programName.data();
  int64_t threads = 0;
  if (int status = cli::takeThreadsOption(args, threads))
    return status;
  if (!cli::parseOptions(
          static_cast<int>(args.size()), args.data(),
          "compile an HLO module for this CPU (or a GPU) and run it\n\n"
          "  tessel run examples/gelu.hlo --check --repeat 20\n"
          "  tessel run examples/gelu.hlo --device gpu --check\n"
          "  tessel run m.hlo --input x.npy --output y.npy\n\n"
          "Without --input the arguments are random (reproducible, "
          "--seed).\nArrays are logical (row-major), whatever the layouts in "
          "the module.\n--threads N: worker threads (0, the default: one per "
          "core).\n"))
    return 2;
  if (repeat < 0)
    return cli::usageError("--repeat must be 0 or more");
  if (device != "cpu" && device != "gpu")
    return cli::usageError("--device must be cpu or gpu, not '" + device + "'");
  bool onGpu = device == "gpu";
  if (sm.getNumOccurrences() && !onGpu)
    return cli::usageError("--sm is for --device gpu");
  if (onGpu && threads > 0)
    return cli::usageError("--threads is for the CPU");
  if (onGpu && kernelAtATime)
    return cli::usageError("--kernel-at-a-time is for the CPU (on the GPU "
                           "kernels always run one after the other)");
  std::unique_ptr<HloModule> module = cli::loadHloModule(path);
  if (!module || !cli::checkInlinedSize(*module, path))
    return 1;
  ProgramShape program = module->entryProgramShape();
  // Refuse what cannot fit before allocating anything: the arguments, the
  // results, and (with --check) the evaluator's copy of them.
  double bytes = 0;
  std::vector<Shape> arrays = program.parameters;
  if (program.result.isTuple())
    arrays.insert(arrays.end(), program.result.tupleShapes.begin(),
                  program.result.tupleShapes.end());
  else
    arrays.push_back(program.result);
  for (const Shape &shape : arrays) {
    double n =
        byteWidth(shape.elementType) > 0 ? byteWidth(shape.elementType) : 1;
    for (int64_t d : shape.dims)
      n *= static_cast<double>(d);
    bytes += n;
  }
  double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
                  static_cast<double>(sysconf(_SC_PAGESIZE));
  double needed = bytes * (check ? 4 : 2);
  if (memory > 0 && needed > memory)
    return cli::fail(llvm::formatv("{0}: the arguments and results take "
                                   "{1:F1} GiB ({2:F1} GiB with the copies "
                                   "run needs), more than this machine's "
                                   "{3:F1} GiB of memory",
                                   path, bytes / (1 << 30), needed / (1 << 30),
                                   memory / (1 << 30))
                         .str());
  if (!inputs.empty() && inputs.size() != program.parameters.size())
    return cli::usageError(
        "the entry takes " + std::to_string(program.parameters.size()) +
        " parameters, given " + std::to_string(inputs.size()) + " --input");
  std::vector<Literal> arguments;
  for (size_t i = 0; i < program.parameters.size(); ++i) {
    if (inputs.empty()) {
      if (!program.parameters[i].isArray())
        return cli::fail("parameter " + std::to_string(i) + " is not an array");
      arguments.push_back(
          randomLiteral(program.parameters[i], seed + i, specials));
      continue;
    }
    Expected<Literal> argument =
        cli::readArgument(inputs[i], program.parameters[i], /*logical=*/true);
    if (!argument)
      return cli::fail(argument.error());
    arguments.push_back(std::move(*argument));
  }

  CompileOptions compileOptions;
  compileOptions.excessPrecision = excess;
  shortcuts.apply(compileOptions);
  compileOptions.target = gpu ? Target::Gpu : Target::Cpu;
  if (onGpu) {
    compileOptions.backend = Backend::Nvptx;
    compileOptions.smVersion = sm;
  }
  Expected<std::shared_ptr<Executable>> compiled =
      Executable::compile(*module, compileOptions);
  if (!compiled)
    return cli::fail(cli::atFile(path, compiled.takeError()));
  Executable &exe = **compiled;
  RunOptions runOptions;
  runOptions.threads = static_cast<int>(threads);
  runOptions.rowChunks = !kernelAtATime;
  Expected<Literal> result = exe.run(arguments, runOptions);
  if (!result)
    return cli::fail(cli::atFile(path, result.takeError()));
  std::vector<const Literal *> values;
  if (result->isTuple())
    for (const Literal &element : result->tupleElements())
      values.push_back(&element);
  else
    values.push_back(&*result);

  bool checkFailed = false;
  if (check) {
    // The evaluator reduces in the kernels' order, so that sums compare bit
    // for bit (reducesInPartials).
    EvaluatorOptions evaluatorOptions;
    evaluatorOptions.compilerReductionOrder = true;
    bool partialSums = false;
    for (const auto &computation : module->computations())
      for (const auto &instruction : computation->instructions())
        partialSums |=
            reducesInPartials(*instruction) &&
            (instruction->shape().elementType == PrimitiveType::F32 ||
             instruction->shape().elementType == PrimitiveType::F64);
    bool segments = false;
    for (const auto &computation : module->computations())
      for (const auto &instruction : computation->instructions())
        segments |= sumsColumnsInSegments(*instruction);
    if (partialSums)
      llvm::outs() << "check: the evaluator sums in the kernels' order (16 "
                      "partial sums along the minor dim, docs/codegen.md)\n";
    if (segments)
      llvm::outs() << "check: the evaluator sums columns in the kernels' "
                      "order (segments of 256 rows, docs/codegen.md)\n";
    Expected<Literal> reference =
        evaluateHloModule(*module, arguments, evaluatorOptions);
    if (!reference)
      return cli::fail(path +
                       ": the evaluator failed: " + reference.error().message);
    std::vector<const Literal *> want;
    if (reference->isTuple())
      for (const Literal &element : reference->tupleElements())
        want.push_back(&element);
    else
      want.push_back(&*reference);
    bool approximate = usesApproximatedFunctions(*module) || excess;
    for (size_t i = 0; i < values.size(); ++i) {
      LiteralComparison c = compareLiterals(
          *values[i], *want[i],
          kernelComparisonBound(want[i]->elementType(), approximate));
      llvm::outs() << "check output " << i << " "
                   << want[i]->shape().toStringWithoutLayout() << ": "
                   << describeComparison(c, *values[i], *want[i]);
      if (c.failing) {
        llvm::outs() << ": FAILED (" << c.failing << " outside the bound)\n";
        checkFailed = true;
      } else if (!c.exact()) {
        llvm::outs() << ": within the bound for approximated functions\n";
      } else {
        llvm::outs() << "\n";
      }
    }
  }

  if (repeat > 0 && onGpu) {
    std::vector<std::string> in;
    std::vector<const void *> inPtrs;
    for (size_t i = 0; i < arguments.size(); ++i) {
      Expected<std::string> physical =
          toPhysical(arguments[i], program.parameters[i]);
      if (!physical)
        return cli::fail(physical.error());
      in.push_back(std::move(*physical));
    }
    for (const std::string &s : in)
      inPtrs.push_back(s.data());
    Expected<DeviceTiming> timing = exe.timeOnDevice(inPtrs, repeat);
    if (!timing)
      return cli::fail(timing.error());
    double kernel = median(timing->kernelSeconds);
    double copy = median(timing->copySeconds);
    double bytes = static_cast<double>(timing->bytes);
    llvm::outs() << llvm::format(
        "time: %.3f ms median of %d runs (the kernels alone, CUDA events), "
        "%.2f GB/s (%lld bytes read and written)\n",
        kernel * 1e3, repeat.getValue(), bytes / kernel / 1e9,
        static_cast<long long>(timing->bytes));
    llvm::outs() << llvm::format(
        "device copy of the same bytes: %.3f ms, %.2f GB/s; the kernels run "
        "at %.0f%% of copy speed\n",
        copy * 1e3, bytes / copy / 1e9, 100.0 * copy / kernel);
    if (timing->peakBytesPerSecond > 0)
      llvm::outs() << llvm::format(
          "device memory peak: %.0f GB/s (memory clock and bus width); the "
          "kernels reach %.0f%% of it, the copy %.0f%%\n",
          timing->peakBytesPerSecond / 1e9,
          100.0 * bytes / kernel / timing->peakBytesPerSecond,
          100.0 * bytes / copy / timing->peakBytesPerSecond);
    llvm::outs() << llvm::format("compile: %.1f ms (HLO to loaded PTX)\n",
                                 exe.compileMilliseconds());
  } else if (repeat > 0) {
    // Every buffer, the copy's too, is a HostBuffer (huge pages where the
    // system gives them), written once so that no page fault is timed.
    auto buffer = [](int64_t bytes, uint8_t fill) -> Expected<HostBuffer> {
      HostBuffer b(std::max<int64_t>(bytes, 1));
      if (!b.data())
        return Error("cannot allocate " + describeBytes(double(bytes)));
      std::memset(b.data(), fill, static_cast<size_t>(b.size()));
      return b;
    };
    std::vector<HostBuffer> in, out;
    int64_t bytes = 0;
    // An output that aliases an input (input_output_alias) is given the
    // input's own buffer, donated: the kernels update it in place. Each run
    // starts from a fresh copy of that input, restored untimed.
    std::vector<int64_t> aliases = exe.outputAliases();
    aliases.resize(exe.outputBytes().size(), -1);
    std::vector<std::string> saved(arguments.size());
    for (size_t i = 0; i < arguments.size(); ++i) {
      Expected<std::string> physical =
          toPhysical(arguments[i], program.parameters[i]);
      if (!physical)
        return cli::fail(physical.error());
      Expected<HostBuffer> b = buffer(physical->size(), 0);
      if (!b)
        return cli::fail(b.error());
      std::memcpy(b->data(), physical->data(), physical->size());
      bytes += physical->size();
      in.push_back(std::move(*b));
      if (std::count(aliases.begin(), aliases.end(), int64_t(i)))
        saved[i] = std::move(*physical);
    }
    for (size_t o = 0; o < aliases.size(); ++o) {
      int64_t size = aliases[o] >= 0 ? 0 : exe.outputBytes()[o];
      Expected<HostBuffer> b = buffer(size, 0);
      if (!b)
        return cli::fail(b.error());
      bytes += size;
      out.push_back(std::move(*b));
    }
    std::vector<const void *> inPtrs;
    for (const HostBuffer &b : in)
      inPtrs.push_back(b.data());
    std::vector<void *> outPtrs;
    for (size_t o = 0; o < out.size(); ++o)
      outPtrs.push_back(aliases[o] >= 0 ? in[aliases[o]].data()
                                        : out[o].data());
    for (size_t o = 0; o < aliases.size(); ++o)
      if (aliases[o] >= 0)
        llvm::outs() << "output " << o << " updates input " << aliases[o]
                     << " in place (input_output_alias; the input is "
                        "restored before each run, untimed)\n";
    int workers = threads > 0
                      ? static_cast<int>(threads)
                      : static_cast<int>(std::thread::hardware_concurrency());
    // A copy that reads and writes as many bytes as the kernels do.
    Expected<HostBuffer> copySrc = buffer(bytes / 2, 1),
                         copyDst = buffer(bytes / 2, 0);
    if (!copySrc || !copyDst)
      return cli::fail(!copySrc ? copySrc.error() : copyDst.error());
    std::vector<double> kernelTimes, copyTimes, kernelCpu, copyCpu;
    for (int r = 0; r < repeat; ++r) {
      for (size_t p = 0; p < saved.size(); ++p)
        if (!saved[p].empty())
          std::memcpy(in[p].data(), saved[p].data(), saved[p].size());
      double c0 = processCpuSeconds();
      auto t0 = std::chrono::steady_clock::now();
      Status ran = exe.runPhysical(inPtrs, outPtrs, runOptions);
      auto t1 = std::chrono::steady_clock::now();
      double c1 = processCpuSeconds();
      if (!ran)
        return cli::fail(ran.error());
      parallelCopy(copyDst->data(), copySrc->data(), bytes / 2, workers);
      auto t2 = std::chrono::steady_clock::now();
      double c2 = processCpuSeconds();
      kernelTimes.push_back(std::chrono::duration<double>(t1 - t0).count());
      copyTimes.push_back(std::chrono::duration<double>(t2 - t1).count());
      kernelCpu.push_back(c1 - c0);
      copyCpu.push_back(c2 - c1);
    }
    double kernel = median(kernelTimes), copy = median(copyTimes);
    llvm::outs() << llvm::format(
        "time: %.3f ms median of %d runs, %.2f GB/s (%lld bytes read and "
        "written), %d threads\n",
        kernel * 1e3, repeat.getValue(), bytes / kernel / 1e9,
        static_cast<long long>(bytes), workers);
    llvm::outs() << llvm::format(
        "copy of the same bytes: %.3f ms, %.2f GB/s; the kernels run at "
        "%.0f%% of copy speed\n",
        copy * 1e3, bytes / copy / 1e9, 100.0 * copy / kernel);
    llvm::outs() << llvm::format(
        "cpu time: %.3f ms median per run, copy %.3f ms (the process's CPU "
        "time, all threads: steadier than the time on a busy machine)\n",
        median(kernelCpu) * 1e3, median(copyCpu) * 1e3);
    llvm::outs() << llvm::format("compile: %.1f ms (HLO to callable kernels)\n",
                                 exe.compileMilliseconds());
  }

  if (!outputs.empty()) {
    if (outputs.size() != values.size())
      return cli::usageError("the module has " + std::to_string(values.size()) +
                             " outputs, given " +
                             std::to_string(outputs.size()) + " --output");
    std::vector<std::string> files;
    for (size_t i = 0; i < values.size(); ++i) {
      Expected<NpyArray> array =
          cli::resultArray(*values[i], values[i]->shape(), /*logical=*/true);
      if (!array)
        return cli::fail(array.error());
      files.push_back(writeNpy(*array));
    }
    std::vector<std::pair<std::string, std::string>> named;
    for (size_t i = 0; i < files.size(); ++i)
      named.emplace_back(outputs[i], std::move(files[i]));
    Status written = cli::writeFilesAtomically(named);
    if (!written)
      return cli::fail(written.error());
  } else if (!check && repeat == 0) {
    for (const Literal *value : values)
      llvm::outs() << value->shape().toStringWithoutLayout() << " "
                   << value->toString() << "\n";
  }
  return checkFailed ? 1 : 0;
}

} // namespace

int runCompileCommand(int argc, char **argv) { return runCompile(argc, argv); }
int runRunCommand(int argc, char **argv) { return runRun(argc, argv); }

} // namespace tessel
