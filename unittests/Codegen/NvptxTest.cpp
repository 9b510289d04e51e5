//===- NvptxTest.cpp - Kernels as PTX, assembled by ptxas -----------------===//
//
// Every kernel these tests compile for the GPU (the jax corpus, the examples,
// the lit inputs and the benchmark's cases, random transposes, column
// reductions and loop fusions with transcendental functions) is written as PTX
// for sm_80 and sm_90 and assembled by CUDA's ptxas, so PTX that does not
// assemble fails even without a GPU. Without ptxas (no CUDA toolkit:
// $CUDA_HOME, $CUDA_PATH, PATH, /usr/local/cuda) the assembling tests are
// skipped and say so. With a CUDA driver and a GPU, the same modules also run
// on it and are compared with the evaluator; without one they are skipped.
//
//===----------------------------------------------------------------------===//
#include "CorpusRefusals.h"
#include "KernelCheck.h"
#include "RandomFusion.h"

#include "tessel/Codegen/Nvptx.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Support/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

using namespace tessel;

namespace {

std::unique_ptr<HloModule> parseFile(const std::string &path) {
  Expected<std::string> text = readFileBytes(path);
  EXPECT_TRUE(text) << text.error().message;
  return text ? parseTestModule(*text) : nullptr;
}

Expected<std::string> ptx(const HloModule &module, int sm) {
  CompileOptions options;
  options.backend = Backend::Nvptx;
  options.smVersion = sm;
  return emitHloModule(module, EmitKind::Ptx, options);
}

/// "" when ptxas assembles `text` for sm_`sm`, else its messages.
std::string assemble(const std::string &ptxas, const std::string &text,
                     int sm) {
  llvm::SmallString<128> input, log;
  int fd = -1;
  if (llvm::sys::fs::createTemporaryFile("tessel", "ptx", fd, input))
    return "cannot create a temporary file";
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << text;
  }
  llvm::sys::fs::createTemporaryFile("tessel", "log", log);
  std::string arch = "-arch=sm_" + std::to_string(sm);
  llvm::StringRef args[] = {ptxas, arch, input, "-o", "/dev/null"};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                log.str()};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                         /*SecondsToWait=*/300, 0, &error);
  std::string messages;
  if (auto buffer = llvm::MemoryBuffer::getFile(log))
    messages = (*buffer)->getBuffer().str();
  llvm::sys::fs::remove(input);
  llvm::sys::fs::remove(log);
  if (status == 0)
    return "";
  return "ptxas " + arch + " failed (status " + std::to_string(status) +
         (error.empty() ? "" : ", " + error) + "): " + messages;
}

/// The PTX of `module` for sm_80 and sm_90, each assembled by ptxas:
/// failures as text ("" when all is well). `refusal`, when not empty, is
/// the piece of the message the compiler must refuse the module with.
std::string checkAssembles(const std::string &ptxas, const HloModule &module,
                           const std::string &refusal = "") {
  std::string failures;
  for (int sm : {80, 90}) {
    Expected<std::string> text = ptx(module, sm);
    if (!refusal.empty()) {
      if (text)
        failures += "now compiles for the GPU: update the refusals\n";
      else if (text.error().message.find(refusal) == std::string::npos)
        failures += "refused with another message: " + text.error().message;
      continue;
    }
    if (!text) {
      failures += "sm_" + std::to_string(sm) +
                  ": the compiler failed: " + text.error().message + "\n";
      continue;
    }
    if (text->find(".target sm_" + std::to_string(sm)) == std::string::npos)
      failures += "sm_" + std::to_string(sm) + ": no .target line\n";
    failures += assemble(ptxas, *text, sm);
  }
  return failures;
}

/// ptxas, or "" after telling the test it is skipped.
std::string findPtxas() {
  Expected<std::string> ptxas = findCudaToolkitFile("bin/ptxas");
  return ptxas ? *ptxas : "";
}

#define REQUIRE_PTXAS(var)                                                     \
  std::string var = findPtxas();                                               \
  if (var.empty())                                                             \
    GTEST_SKIP() << "ptxas not found (no CUDA toolkit: set CUDA_HOME): PTX "   \
                    "is not assembled";

/// Modules the compiler refuses (as for the CPU), with their messages.
const char *refusalOf(const std::string &path) {
  if (const std::string *message = knownRefusalOf(path))
    return message->c_str();
  if (path.find("_s4_epilogue") != std::string::npos)
    return "element type s4 is not supported";
  // The CPU calls the C library's complex functions; the GPU has none.
  if (path.find("complex_exp.hlo") != std::string::npos)
    return "exponential of c64 is not supported on the GPU";
  return "";
}

std::vector<std::string> hloFilesIn(const std::string &dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".hlo") &&
        it->path().find("Faults") == std::string::npos)
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> gpuTestModules() {
  std::vector<std::string> files = hloFilesIn(TESSEL_HLO_CORPUS);
  for (const std::string &dir :
       {std::string(TESSEL_EXAMPLES), std::string(TESSEL_CODEGEN_INPUTS)})
    for (const std::string &file : hloFilesIn(dir))
      files.push_back(file);
  return files;
}

/// One module of `count` fusions, each a transpose (of 2 to 4 dims, with a
/// producer and a consumer) of every element type the emitters take;
/// most are heroes of the transpose emitter, the rest loop fusions.
std::string randomTransposes(int count, uint64_t seed) {
  std::mt19937 rng(seed);
  const char *types[] = {"f32", "bf16", "s8", "f16", "s32", "f64", "u8"};
  std::string computations, entry, roots, rootShapes;
  for (int i = 0; i < count; ++i) {
    int rank = 2 + static_cast<int>(rng() % 3);
    std::vector<int64_t> dims, permutation;
    for (int d = 0; d < rank; ++d) {
      dims.push_back(d >= rank - 2 ? 16 + rng() % 50 : 1 + rng() % 4);
      permutation.push_back(d);
    }
    // Move the minor dim.
    do
      std::shuffle(permutation.begin(), permutation.end(), rng);
    while (permutation.back() == rank - 1);
    std::vector<int64_t> out;
    for (int64_t d : permutation)
      out.push_back(dims[d]);
    std::string type = types[i % 7];
    std::string in = shapeText(type, dims), res = shapeText(type, out);
    std::string name = "%fused_" + std::to_string(i);
    computations += name + " {\n  %p = " + in + " parameter(0)\n  %n = " + in +
                    " negate(%p)\n  %t = " + res +
                    " transpose(%n), dimensions={" + joinText(permutation) +
                    "}\n  ROOT %a = " + res + " add(%t, %t)\n}\n";
    std::string param = "%p" + std::to_string(i);
    entry += "  " + param + " = " + in + " parameter(" + std::to_string(i) +
             ")\n  %f" + std::to_string(i) + " = " + res + " fusion(" + param +
             "), kind=kLoop, calls=" + name + "\n";
    roots += (i ? ", %f" : "%f") + std::to_string(i);
    rootShapes += (i ? ", " : "") + res;
  }
  return "HloModule transposes\n" + computations + "ENTRY e {\n" + entry +
         "  ROOT %r = (" + rootShapes + ") tuple(" + roots + ")\n}\n";
}

/// One module of `count` column reductions (f32, bf16, f16, s32; add,
/// maximum, minimum, multiply), each with a producer and a consumer.
std::string randomColumnReductions(int count, uint64_t seed) {
  std::mt19937 rng(seed);
  const char *types[] = {"f32", "bf16", "s32", "f16"};
  const char *ops[] = {"add", "maximum", "multiply", "minimum"};
  std::string computations, entry, roots, rootShapes;
  for (int i = 0; i < count; ++i) {
    std::string type = types[i % 4], op = ops[(i / 4) % 4];
    std::string red = "%red_" + std::to_string(i);
    computations +=
        red + " {\n  %a = " + type + "[] parameter(0)\n  %b = " + type +
        "[] parameter(1)\n  ROOT %s = " + type + "[] " + op + "(%a, %b)\n}\n";
    int rank = 2 + static_cast<int>(rng() % 2);
    std::vector<int64_t> dims, kept, reduced;
    for (int d = 0; d < rank; ++d) {
      dims.push_back(d == 0 ? 2 + rng() % 40 : 16 + rng() % 300);
      (d == 0 ? reduced : kept).push_back(dims.back());
    }
    std::string in = shapeText(type, dims), res = shapeText(type, kept);
    std::string name = "%fused_" + std::to_string(i);
    computations += name + " {\n  %p = " + in + " parameter(0)\n  %n = " + in +
                    " negate(%p)\n  %z = " + type + "[] constant(" +
                    (op == "multiply" ? "1" : "0") + ")\n  %r = " + res +
                    " reduce(%n, %z), dimensions={0}, to_apply=" + red +
                    "\n  ROOT %a = " + res + " add(%r, %r)\n}\n";
    std::string param = "%p" + std::to_string(i);
    entry += "  " + param + " = " + in + " parameter(" + std::to_string(i) +
             ")\n  %f" + std::to_string(i) + " = " + res + " fusion(" + param +
             "), kind=kInput, calls=" + name + "\n";
    roots += (i ? ", %f" : "%f") + std::to_string(i);
    rootShapes += (i ? ", " : "") + res;
  }
  return "HloModule reductions\n" + computations + "ENTRY e {\n" + entry +
         "  ROOT %r = (" + rootShapes + ") tuple(" + roots + ")\n}\n";
}

/// `count` fusions of a row reduction each (the GPU's row-reduction
/// emitter: f32/f64 sums in the compiler's order, max/min and integer ops
/// in any order), some with two reduced dims, in one module.
std::string randomRowReductions(int count, uint64_t seed) {
  std::mt19937 rng(seed);
  const char *cases[][3] = {
      {"f32", "add", "0"},        {"f64", "add", "0"},
      {"f32", "maximum", "-inf"}, {"bf16", "minimum", "inf"},
      {"f16", "maximum", "-inf"}, {"s32", "add", "0"},
      {"u8", "multiply", "1"},    {"pred", "or", "false"}};
  std::string computations, entry, roots, rootShapes;
  for (int i = 0; i < count; ++i) {
    std::string type = cases[i % 8][0], op = cases[i % 8][1];
    std::string red = "%red_" + std::to_string(i);
    computations +=
        red + " {\n  %a = " + type + "[] parameter(0)\n  %b = " + type +
        "[] parameter(1)\n  ROOT %s = " + type + "[] " + op + "(%a, %b)\n}\n";
    int rank = 2 + static_cast<int>(rng() % 2);
    std::vector<int64_t> dims = {int64_t(1 + rng() % 40)};
    if (rank == 3)
      dims.push_back(1 + rng() % 4);
    dims.push_back(32 + rng() % 300);
    std::string in = shapeText(type, dims), res = shapeText(type, {dims[0]});
    std::string reduced = rank == 3 ? "1,2" : "1";
    std::string name = "%fused_" + std::to_string(i);
    std::string producer = type == "pred" ? "not" : "abs";
    computations += name + " {\n  %p = " + in + " parameter(0)\n  %n = " + in +
                    " " + producer + "(%p)\n  %z = " + type + "[] constant(" +
                    cases[i % 8][2] + ")\n  %r = " + res +
                    " reduce(%n, %z), dimensions={" + reduced +
                    "}, to_apply=" + red + "\n  ROOT %a = " + res + " " +
                    (type == "pred" ? "not" : "negate") + "(%r)\n}\n";
    std::string param = "%p" + std::to_string(i);
    entry += "  " + param + " = " + in + " parameter(" + std::to_string(i) +
             ")\n  %f" + std::to_string(i) + " = " + res + " fusion(" + param +
             "), kind=kInput, calls=" + name + "\n";
    roots += (i ? ", %f" : "%f") + std::to_string(i);
    rootShapes += (i ? ", " : "") + res;
  }
  return "HloModule reductions\n" + computations + "ENTRY e {\n" + entry +
         "  ROOT %r = (" + rootShapes + ") tuple(" + roots + ")\n}\n";
}

TEST(NvptxTest, TestModulesAssembleForSm80AndSm90) {
  REQUIRE_PTXAS(ptxas);
  std::vector<std::string> files = gpuTestModules();
  // And the GPU benchmark's cases (bench/gpu_bench.sh).
  for (const std::string &file :
       hloFilesIn(std::string(TESSEL_EXAMPLES) + "/../bench/codegen"))
    files.push_back(file);
  EXPECT_GE(files.size(), 77u);
  for (const std::string &file : files) {
    SCOPED_TRACE(file);
    std::unique_ptr<HloModule> module = parseFile(file);
    if (module) {
      EXPECT_EQ(checkAssembles(ptxas, *module, refusalOf(file)), "");
    }
  }
}

TEST(NvptxTest, HeroEmittersAssemble) {
  REQUIRE_PTXAS(ptxas);
  std::unique_ptr<HloModule> transposes =
      parseTestModule(randomTransposes(24, 7));
  ASSERT_TRUE(transposes);
  EXPECT_EQ(checkAssembles(ptxas, *transposes), "");
  Expected<std::string> text = ptx(*transposes, 90);
  ASSERT_TRUE(text) << text.error().message;
  // Shared tiles and barriers.
  EXPECT_NE(text->find(".shared .align 16"), std::string::npos);
  EXPECT_NE(text->find("bar.sync"), std::string::npos);
  std::unique_ptr<HloModule> reductions =
      parseTestModule(randomColumnReductions(16, 3));
  ASSERT_TRUE(reductions);
  EXPECT_EQ(checkAssembles(ptxas, *reductions), "");
  std::unique_ptr<HloModule> rows = parseTestModule(randomRowReductions(16, 5));
  ASSERT_TRUE(rows);
  EXPECT_EQ(checkAssembles(ptxas, *rows), "");
}

TEST(NvptxTest, RowReductionsShareRowsThroughSharedMemory) {
  // The row-reduction emitter's kernels: 16 threads a row, the partial
  // results through shared memory and a barrier (no ptxas needed).
  std::unique_ptr<HloModule> rows = parseTestModule(randomRowReductions(8, 9));
  ASSERT_TRUE(rows);
  Expected<std::string> text = ptx(*rows, 90);
  ASSERT_TRUE(text) << text.error().message;
  size_t kernels = 0, barriers = 0;
  for (size_t at = 0; (at = text->find(".entry", at)) != std::string::npos;
       ++at)
    ++kernels;
  for (size_t at = 0; (at = text->find("bar.sync", at)) != std::string::npos;
       ++at)
    ++barriers;
  EXPECT_EQ(kernels, 8u);
  EXPECT_EQ(barriers, 8u);
  EXPECT_NE(text->find("st.shared"), std::string::npos);
  EXPECT_NE(text->find("ld.shared"), std::string::npos);
}

TEST(NvptxTest, RandomFusionsAssemble) {
  REQUIRE_PTXAS(ptxas);
  RandomFusionOptions options;
  options.approximateFunctions = true;
  for (uint64_t seed : {1, 2, 3}) {
    RandomModule random =
        RandomFusionGenerator(seed, options).module(/*fusions=*/12);
    std::unique_ptr<HloModule> module = parseTestModule(random.text);
    ASSERT_TRUE(module);
    EXPECT_EQ(checkAssembles(ptxas, *module), "") << random.text;
  }
}

TEST(NvptxTest, PtxNeedsTheNvptxTarget) {
  std::unique_ptr<HloModule> module =
      parseFile(std::string(TESSEL_EXAMPLES) + "/gelu_small.hlo");
  ASSERT_TRUE(module);
  Expected<std::string> text =
      emitHloModule(*module, EmitKind::Ptx, CompileOptions());
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("--target=nvptx"), std::string::npos);
  Expected<std::string> unknown = ptx(*module, 12);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("sm_12 is not a GPU"),
            std::string::npos)
      << unknown.error().message;
}

/// The modules of these tests on the GPU against the evaluator, where a
/// CUDA driver and a GPU are present.
TEST(NvptxTest, ModulesRunOnTheGpu) {
  std::unique_ptr<HloModule> probe =
      parseFile(std::string(TESSEL_EXAMPLES) + "/gelu_small.hlo");
  ASSERT_TRUE(probe);
  CompileOptions options;
  options.backend = Backend::Nvptx;
  options.smVersion = 0; // the device's
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(*probe, options);
  if (!exe && exe.error().message.find("CUDA") != std::string::npos)
    GTEST_SKIP() << exe.error().message;
  ASSERT_TRUE(exe) << exe.error().message;
  std::vector<std::unique_ptr<HloModule>> modules;
  for (const std::string &file : gpuTestModules()) {
    if (*refusalOf(file) || file.find("too_large") != std::string::npos)
      continue;
    // A module whose PTX assembles but which the GPU's executable refuses
    // (gpuRunRefusals).
    if (const std::string *refusal = gpuRunRefusalOf(file)) {
      std::unique_ptr<HloModule> module = parseFile(file);
      ASSERT_TRUE(module);
      Expected<std::shared_ptr<Executable>> refused =
          Executable::compile(*module, options);
      ASSERT_FALSE(refused) << file
                            << " now runs on the GPU: update "
                               "gpuRunRefusals()";
      EXPECT_NE(refused.error().message.find(*refusal), std::string::npos)
          << refused.error().message;
      continue;
    }
    modules.push_back(parseFile(file));
  }
  modules.push_back(parseTestModule(randomTransposes(24, 7)));
  modules.push_back(parseTestModule(randomColumnReductions(16, 3)));
  RandomFusionOptions random;
  random.approximateFunctions = true;
  for (uint64_t seed : {1, 2, 3})
    modules.push_back(
        parseTestModule(RandomFusionGenerator(seed, random).module(12).text));
  for (const std::unique_ptr<HloModule> &module : modules) {
    ASSERT_TRUE(module);
    SCOPED_TRACE(module->name());
    KernelCheckResult check =
        checkKernels(*module, randomArguments(*module, 11), options);
    EXPECT_EQ(check.failure, "");
  }
  // The timing of --repeat: the kernels alone and a device copy, per run.
  std::vector<Literal> arguments = randomArguments(*probe, 1);
  std::vector<std::string> physical;
  std::vector<const void *> inputs;
  for (size_t i = 0; i < arguments.size(); ++i) {
    Expected<std::string> bytes =
        toPhysical(arguments[i], probe->entry()->parameters()[i]->shape());
    ASSERT_TRUE(bytes) << bytes.error().message;
    physical.push_back(std::move(*bytes));
  }
  for (const std::string &bytes : physical)
    inputs.push_back(bytes.data());
  Expected<DeviceTiming> timing = (*exe)->timeOnDevice(inputs, 3);
  ASSERT_TRUE(timing) << timing.error().message;
  EXPECT_EQ(timing->kernelSeconds.size(), 3u);
  EXPECT_EQ(timing->copySeconds.size(), 3u);
  EXPECT_GT(timing->bytes, 0);
}

} // namespace
