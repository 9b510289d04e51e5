//===- InterleavedLoopsTest.cpp - Interleave hints for latency-bound loops
//-===//
//
// Which loops get an interleave count and which count (parsed LLVM IR,
// printed back), and that a kernel compiled with the hints gives the same
// bits as without them, and the evaluator's within the bound of its math
// functions.
//
//===----------------------------------------------------------------------===//
#include "InterleavedLoops.h"
#include "KernelCheck.h"
#include "LlvmText.h"

#include "tessel/Codegen/Compiler.h"

#include "llvm/IR/Module.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

using namespace tessel;

namespace {

/// A function @name whose loop runs `trips` times (or %n times where trips
/// is 0) over `type` elements and computes `ops` dependent floating-point
/// operations on each; with `reduce` the last value is carried to the next
/// iteration (a reduction).
std::string loopFunction(const std::string &name, int ops, int trips,
                         const std::string &type = "float",
                         bool reduce = false) {
  std::string bound = trips ? std::to_string(trips) : "%n";
  std::string text = "define void @" + name +
                     "(ptr %in, ptr %out, i64 %n) {\n"
                     "entry:\n  br label %loop\n"
                     "loop:\n"
                     "  %i = phi i64 [ 0, %entry ], [ %next, %loop ]\n";
  if (reduce)
    text += "  %acc = phi " + type + " [ 0.0, %entry ], [ %v" +
            std::to_string(ops) + ", %loop ]\n";
  text += "  %p = getelementptr " + type + ", ptr %in, i64 %i\n" +
          "  %v0 = load " + type + ", ptr %p\n";
  for (int k = 1; k <= ops; ++k) {
    std::string previous = "%v" + std::to_string(k - 1);
    std::string other = reduce && k == 1 ? "%acc" : previous;
    text += "  %v" + std::to_string(k) + " = " + (k % 2 ? "fmul " : "fadd ") +
            type + " " + previous + ", " + other + "\n";
  }
  text += "  %q = getelementptr " + type + ", ptr %out, i64 %i\n" + "  store " +
          type + " %v" + std::to_string(ops) + ", ptr %q\n" +
          "  %next = add i64 %i, 1\n"
          "  %done = icmp eq i64 %next, " +
          bound +
          "\n"
          "  br i1 %done, label %exit, label %loop\n"
          "exit:\n  ret void\n}\n";
  return text;
}

/// @name as loopFunction's, with `ops` operations, but reading element
/// i / 2 (a gather) and writing element i.
std::string gatherFunction(const std::string &name, int ops) {
  std::string text = loopFunction(name, ops, 4096);
  std::string read = "%p = getelementptr float, ptr %in, i64 %i";
  size_t at = text.find(read);
  EXPECT_NE(at, std::string::npos);
  text.replace(at, read.size(),
               "%half = udiv i64 %i, 2\n"
               "  %p = getelementptr float, ptr %in, i64 %half");
  return text;
}

/// A loop in the form the MLIR translation gives, the exit test in the
/// header: its header runs `trips` + 1 times and its body `trips` times.
std::string headerExitFunction(const std::string &name, int ops, int trips) {
  std::string text = "define void @" + name +
                     "(ptr %in, ptr %out, i64 %n) {\n"
                     "entry:\n  br label %head\n"
                     "head:\n"
                     "  %i = phi i64 [ 0, %entry ], [ %next, %body ]\n"
                     "  %more = icmp slt i64 %i, " +
                     std::to_string(trips) +
                     "\n  br i1 %more, label %body, label %exit\n"
                     "body:\n"
                     "  %p = getelementptr float, ptr %in, i64 %i\n"
                     "  %v0 = load float, ptr %p\n";
  for (int k = 1; k <= ops; ++k)
    text += "  %v" + std::to_string(k) + " = fmul float %v" +
            std::to_string(k - 1) + ", %v" + std::to_string(k - 1) + "\n";
  text += "  %q = getelementptr float, ptr %out, i64 %i\n"
          "  store float %v" +
          std::to_string(ops) +
          ", ptr %q\n"
          "  %next = add i64 %i, 1\n"
          "  br label %head\n"
          "exit:\n  ret void\n}\n";
  return text;
}

/// The interleave count the loop of @name was given in `printed` (0: none).
int countOf(const std::string &printed, const std::string &name) {
  size_t begin = printed.find("define void @" + name + "(");
  EXPECT_NE(begin, std::string::npos) << name;
  if (begin == std::string::npos)
    return -1;
  size_t end = printed.find("\n}\n", begin);
  std::string body = printed.substr(begin, end - begin);
  size_t use = body.find("!llvm.loop !");
  if (use == std::string::npos)
    return 0;
  // The loop ID: "!N = distinct !{!N, !M}", then "!M = !{!"...", i32 C}".
  auto lineOf = [&](const std::string &start) {
    size_t at = printed.find("\n" + start);
    EXPECT_NE(at, std::string::npos) << start << " in\n" << printed;
    if (at == std::string::npos)
      return std::string();
    return printed.substr(at + 1, printed.find('\n', at + 1) - at - 1);
  };
  std::string id = body.substr(use + 11);
  id = id.substr(0, id.find_first_not_of("!0123456789", 1));
  std::string loopId = lineOf(id + " = distinct !{");
  std::string hint = loopId.substr(loopId.rfind('!'));
  hint = hint.substr(0, hint.find('}'));
  std::string line = lineOf(hint + " = !{");
  EXPECT_NE(line.find("llvm.loop.interleave.count"), std::string::npos) << line;
  return std::atoi(line.substr(line.rfind("i32 ") + 4).c_str());
}

/// `text` hinted for vectors of `vectorBits`, printed back; `marked` says
/// how many loops got a count.
std::string hinted(const std::string &text, unsigned vectorBits, int &marked,
                   const llvm::StringSet<> &skip = {}) {
  return transformLlvmText(
      text,
      [&](llvm::Module &module) {
        return hintInterleavedLoops(module, vectorBits, skip);
      },
      marked);
}

TEST(InterleavedLoopsTest, CountsFollowTheWorkAndTheTripCount) {
  std::string text =
      loopFunction("long_chain", 40, 4096) +     // >= 32 ops: 4
      loopFunction("exp_like", 20, 4096) +       // 16 to 31: 2
      loopFunction("threshold_two", 16, 4096) +  // exactly 16: 2
      loopFunction("threshold_four", 32, 4096) + // exactly 32: 4
      loopFunction("copy_like", 15, 4096) +      // memory-bound: none
      loopFunction("short", 40, 24) +            // 4 x 8 lanes > 24: 2
      loopFunction("too_short", 40, 15) +        // 2 x 8 lanes > 15: none
      loopFunction("unknown_trips", 40, 0) +     // %n: none
      loopFunction("reduction", 40, 4096, "float", /*reduce=*/true) +
      loopFunction("doubles", 40, 20, "double"); // 4 lanes at 256 bits: 4
  int marked = 0;
  std::string printed = hinted(text, 256, marked);
  EXPECT_EQ(countOf(printed, "long_chain"), 4);
  EXPECT_EQ(countOf(printed, "exp_like"), 2);
  EXPECT_EQ(countOf(printed, "threshold_two"), 2);
  EXPECT_EQ(countOf(printed, "threshold_four"), 4);
  EXPECT_EQ(countOf(printed, "copy_like"), 0);
  EXPECT_EQ(countOf(printed, "short"), 2);
  EXPECT_EQ(countOf(printed, "too_short"), 0);
  EXPECT_EQ(countOf(printed, "unknown_trips"), 0);
  EXPECT_EQ(countOf(printed, "reduction"), 0);
  EXPECT_EQ(countOf(printed, "doubles"), 4);
  EXPECT_EQ(marked, 6);

  // 512-bit vectors: 16 floats or 8 doubles a vector.
  printed = hinted(text, 512, marked);
  EXPECT_EQ(countOf(printed, "long_chain"), 4);
  EXPECT_EQ(countOf(printed, "short"), 0);   // 2 x 16 > 24
  EXPECT_EQ(countOf(printed, "doubles"), 2); // 4 x 8 > 20, 2 x 8 <= 20
  EXPECT_EQ(marked, 5);
}

TEST(InterleavedLoopsTest, GathersBigBodiesAndShortHeaderExitLoops) {
  std::string text = gatherFunction("gather", 40) +
                     loopFunction("big", 200, 4096) +  // 4 x 200 > 512: 2
                     loopFunction("huge", 300, 4096) + // 2 x 300 > 512
                     headerExitFunction("body_32", 40, 32) +
                     headerExitFunction("body_31", 40, 31);
  int marked = 0;
  std::string printed = hinted(text, 256, marked);
  EXPECT_EQ(countOf(printed, "gather"), 0);
  EXPECT_EQ(countOf(printed, "big"), 2);
  EXPECT_EQ(countOf(printed, "huge"), 0);
  EXPECT_EQ(countOf(printed, "body_32"), 4); // 4 x 8 lanes = 32
  EXPECT_EQ(countOf(printed, "body_31"), 2); // the header runs 32 times
  EXPECT_EQ(marked, 3);
}

TEST(InterleavedLoopsTest, SkippedFunctionsAndMarkedLoopsAreLeftAlone) {
  int marked = 0;
  std::string text =
      loopFunction("table", 40, 4096) + loopFunction("computed", 40, 4096);
  std::string printed = hinted(text, 256, marked, {"table"});
  EXPECT_EQ(marked, 1);
  EXPECT_EQ(countOf(printed, "table"), 0);
  EXPECT_EQ(countOf(printed, "computed"), 4);
  // A second pass finds the computed loop marked already.
  printed = hinted(printed, 256, marked, {"table"});
  EXPECT_EQ(marked, 0);
  EXPECT_EQ(countOf(printed, "computed"), 4);
}

/// The benchmark's f32 chain, with a row length that leaves a remainder
/// after the interleaved vector iterations; `name` keeps the two compiles
/// apart in the kernel cache.
std::string chainModule(const std::string &name) {
  return "HloModule " + name + R"(
chain {
  %x = f32[5,1000] parameter(0)
  %y = f32[5,1000] parameter(1)
  %half = f32[] constant(0.5)
  %bhalf = f32[5,1000] broadcast(%half), dimensions={}
  %xx = f32[5,1000] multiply(%x, %x)
  %neg = f32[5,1000] negate(%xx)
  %exp = f32[5,1000] exponential(%neg)
  %xe = f32[5,1000] multiply(%x, %exp)
  %sum = f32[5,1000] add(%xe, %y)
  %tanh = f32[5,1000] tanh(%sum)
  %scaled = f32[5,1000] multiply(%tanh, %bhalf)
  %yy = f32[5,1000] multiply(%y, %y)
  ROOT %out = f32[5,1000] add(%scaled, %yy)
}
ENTRY main {
  %x = f32[5,1000] parameter(0)
  %y = f32[5,1000] parameter(1)
  ROOT fusion = f32[5,1000] fusion(%x, %y), kind=kLoop, calls=chain
}
)";
}

/// The hinted kernel's vector loop divides (tanh's one division) more
/// times per iteration than the unhinted one (LLVM interleaves this body
/// twice by itself since exp became 17 operations, ExpApproximation.h; the
/// hint makes it four: f32[64,16384] 0.52 -> 0.38 ms on Zen 5); both give
/// the same bits, within the evaluator's bound.
TEST(InterleavedLoopsTest, InterleavedChainGivesTheSameBits) {
  std::unique_ptr<HloModule> hintedModule = parseTestModule(chainModule("a"));
  std::unique_ptr<HloModule> plainModule = parseTestModule(chainModule("b"));
  ASSERT_TRUE(hintedModule && plainModule);
  CompileOptions options;
  Expected<std::string> hintedIr =
      emitHloModule(*hintedModule, EmitKind::Llvm, options);
  Expected<std::shared_ptr<Executable>> hintedExe =
      Executable::compile(*hintedModule, options);
  auto off = std::make_unique<ScopedEnv>("TESSEL_INTERLEAVE", "0");
  Expected<std::string> plainIr =
      emitHloModule(*plainModule, EmitKind::Llvm, options);
  Expected<std::shared_ptr<Executable>> plainExe =
      Executable::compile(*plainModule, options);
  off.reset();
  ASSERT_TRUE(hintedIr && plainIr && hintedExe && plainExe);
  int hintedDivisions = countOccurrences(*hintedIr, " = fdiv <");
  int plainDivisions = countOccurrences(*plainIr, " = fdiv <");
  EXPECT_GE(plainDivisions, 1) << *plainIr;
  EXPECT_GT(hintedDivisions, plainDivisions) << *hintedIr;

  std::vector<Literal> arguments = randomArguments(*hintedModule, 5);
  for (int threads : {1, 2}) {
    RunOptions run;
    run.threads = threads;
    Expected<Literal> a = (*hintedExe)->run(arguments, run);
    Expected<Literal> b = (*plainExe)->run(arguments, run);
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->elementCount(), b->elementCount());
    // Bit for bit, except that a NaN may come out with either sign: the
    // arguments hold NaNs, and LLVM IR leaves open which operand's NaN an
    // add or multiply returns. On an Intel Xeon with AVX-512 the two
    // kernels' vector and scalar loops split the rows differently, and 9 of
    // 5000 NaNs changed sign (0xffc00000 against 0x7fc00000).
    int64_t count = a->elementCount();
    int64_t nans = 0, different = 0;
    for (int64_t i = 0; i < count; ++i) {
      uint32_t x, y;
      std::memcpy(&x, a->data() + 4 * i, 4);
      std::memcpy(&y, b->data() + 4 * i, 4);
      bool xNaN = (x & 0x7fffffffu) > 0x7f800000u;
      bool yNaN = (y & 0x7fffffffu) > 0x7f800000u;
      nans += xNaN;
      if (x != y && !(xNaN && yNaN)) {
        if (different++ < 5)
          ADD_FAILURE() << "element " << i << ": 0x" << std::hex << x
                        << " against 0x" << y << std::dec;
      }
    }
    EXPECT_EQ(different, 0);
    // The arguments' special values reach the output (else this would not
    // test the exception above).
    EXPECT_GT(nans, 0);
    KernelCheckResult check =
        checkKernels(*hintedModule, arguments, options, threads);
    EXPECT_EQ(check.failure, "");
  }
}

} // namespace
