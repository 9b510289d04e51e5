//===- GpuRuntimeTest.cpp - The GPU executable against a stand-in driver --===//
//
// tessel's use of the CUDA driver API, checked without a GPU: the
// executable opens FakeCudaDriver.cpp's library (TESSEL_CUDA_DRIVER) in
// place of libcuda.so.1, which keeps "device" memory on the host and logs
// every call. The tests check the buffers allocated, the copies, each
// launch's grid, block and arguments (as many as the PTX's .entry takes,
// each an allocated buffer), the synchronization and the frees. The PTX
// itself is not run (NvptxTest assembles it; a GPU runs it there).
//
// A test binary of its own: the driver is opened once per process.
//
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/Compiler.h"
#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Support/FileIO.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include <dlfcn.h>

using namespace tessel;

namespace {

/// The fake driver's log since the last call (and clears it); allocations
/// are counted from 0 again.
std::string takeLog() {
  void *library = dlopen(TESSEL_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
  if (!library)
    return "the fake driver is not loaded";
  auto log = reinterpret_cast<const char *(*)()>(dlsym(library, "fakeCudaLog"));
  auto clear = reinterpret_cast<void (*)()>(dlsym(library, "fakeCudaClearLog"));
  std::string text = log();
  clear();
  dlclose(library);
  return text;
}

std::shared_ptr<Executable> compile(const std::string &text) {
  setenv("TESSEL_CUDA_DRIVER", TESSEL_FAKE_CUDA_DRIVER, 1);
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  EXPECT_TRUE(module) << module.error().message;
  if (!module)
    return nullptr;
  CompileOptions options;
  options.backend = Backend::Nvptx;
  options.smVersion = 0; // the device's: the fake is an sm_90
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(**module, options);
  EXPECT_TRUE(exe) << exe.error().message;
  return exe ? *exe : nullptr;
}

TEST(GpuRuntimeTest, GeluIsOneLaunchOfItsLoopEmittersConfiguration) {
  Expected<std::string> text =
      readFileBytes(std::string(TESSEL_EXAMPLES) + "/gelu_small.hlo");
  ASSERT_TRUE(text);
  std::shared_ptr<Executable> exe = compile(*text);
  ASSERT_TRUE(exe);
  EXPECT_EQ(takeLog(), "load module\n");
  // bf16[4,8]: 64 bytes in and out; 8 threads of 4 elements, one block.
  Literal x = randomLiteral(exe->outputShapes()[0], 1, false);
  Expected<Literal> y = exe->run({x});
  ASSERT_TRUE(y) << y.error().message;
  EXPECT_EQ(takeLog(), "alloc 64\n"
                       "alloc 64\n"
                       "to device 64\n"
                       "launch kernel_0 grid 1x1x1 block 8x1x1 shared 0 args "
                       "#0 #1\n"
                       "synchronize\n"
                       "to host 64\n"
                       "free 64\n"
                       "free 64\n");
}

// A while or conditional reads its pred or index on the host between
// kernels, which the GPU's executable does not do yet: it refuses the
// module, naming the instruction and its line. A call is planned in place
// and runs.
/// The "launch kernel_N" lines of a fake driver log, and its reads of a
/// pred to the host, in order ("kernel_1 kernel_2 pred ...").
std::string launchesAndReads(const std::string &log) {
  std::string out;
  size_t at = 0;
  while (at < log.size()) {
    size_t end = log.find('\n', at);
    std::string line = log.substr(at, end - at);
    at = end == std::string::npos ? log.size() : end + 1;
    if (line.rfind("launch ", 0) == 0)
      out += (out.empty() ? "" : " ") + line.substr(7, line.find(' ', 7) - 7);
    else if (line == "to host 1")
      out += (out.empty() ? "" : " ") + std::string("pred");
    else if (line.rfind("device copy ", 0) == 0)
      out += (out.empty() ? "" : " ") + std::string("copy");
  }
  return out;
}

// A while and a conditional run their steps: a conditional's pred is
// copied to the host (one byte) and picks the branch whose kernels are
// launched; a while launches its condition's kernels, reads the pred and
// stops when it is false (the fake's memory is zeroed and its launches
// compute nothing, so the pred stays false). What the kernels compute, over
// many iterations, is checked on a GPU (ControlFlowTest and the corpus with
// TESSEL_TEST_BACKEND=nvptx).
TEST(GpuRuntimeTest, ControlFlowReadsItsPredOnTheHostBetweenLaunches) {
  std::shared_ptr<Executable> conditional = compile(R"(HloModule m
inc {
  p = f32[4] parameter(0)
  one = f32[] constant(1)
  o = f32[4] broadcast(one), dimensions={}
  ROOT a = f32[4] add(p, o)
}
neg {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
ENTRY e {
  c = pred[] parameter(0)
  x = f32[4] parameter(1)
  ROOT r = f32[4] conditional(c, x, x), true_computation=inc, false_computation=neg
})");
  ASSERT_TRUE(conditional);
  takeLog();
  Literal x = randomLiteral(conditional->outputShapes()[0], 1, false);
  for (bool c : {true, false}) {
    Literal pred(Shape(PrimitiveType::Pred, {}));
    pred.setInt(0, c);
    Expected<Literal> y = conditional->run({pred, x});
    ASSERT_TRUE(y) << y.error().message;
    // Branch 0 (true) is kernels 0 to 2, branch 1 kernel 3; the last
    // kernel of each writes the conditional's buffer itself (no copy).
    EXPECT_EQ(launchesAndReads(takeLog()),
              c ? "pred kernel_0 kernel_1 kernel_2" : "pred kernel_3")
        << c;
  }

  std::shared_ptr<Executable> loop = compile(R"(HloModule m
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[4] get-tuple-element(s), index=1
  y = f32[4] negate(x)
  ROOT t = (s32[], f32[4]) tuple(j, y)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(t), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
})");
  ASSERT_TRUE(loop);
  takeLog();
  Expected<Literal> y = loop->run({x});
  ASSERT_TRUE(y) << y.error().message;
  // kernel_0 writes the counter's 0; both state elements are copied into
  // the loop's state; the condition (kernels 1 and 2) runs and its pred is
  // read: false, so the body (kernels 3 to 5) never runs.
  EXPECT_EQ(launchesAndReads(takeLog()),
            "kernel_0 copy copy kernel_1 kernel_2 pred");

  // A failed copy or pred read (after a kernel's illegal access, say)
  // stops the run with the driver's message and what was being done.
  void *library = dlopen(TESSEL_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_TRUE(library);
  auto failNext = reinterpret_cast<void (*)(const char *)>(
      dlsym(library, "fakeCudaFailNext"));
  ASSERT_TRUE(failNext);
  failNext("cuMemcpyDtoH_v2");
  Expected<Literal> unread = loop->run({x});
  ASSERT_FALSE(unread);
  EXPECT_EQ(unread.error().message,
            "CUDA: reading the pred of %w (condition %cond, body %body): "
            "fake: an illegal memory access");
  failNext("cuMemcpyDtoD_v2");
  Expected<Literal> uncopied = loop->run({x});
  ASSERT_FALSE(uncopied);
  EXPECT_EQ(uncopied.error().message,
            "CUDA: copy of buffer 1 into buffer 2: fake: an illegal memory "
            "access");
  dlclose(library);
  takeLog();

  std::shared_ptr<Executable> called = compile(R"(HloModule m
negated {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
ENTRY e {
  x = f32[4] parameter(0)
  c = f32[4] call(x), to_apply=negated
  ROOT r = f32[4] abs(c)
})");
  ASSERT_TRUE(called);
  takeLog();
  Expected<Literal> z = called->run({x});
  ASSERT_TRUE(z) << z.error().message;
  EXPECT_EQ(launchesAndReads(takeLog()), "kernel_0 kernel_1");
}

// TESSEL_PTX_DUMP=FILE writes the PTX the driver is given: the text of
// `tessel compile --target=nvptx --emit=ptx` for the device's sm.
TEST(GpuRuntimeTest, PtxDumpWritesWhatTheDriverLoads) {
  std::string path = testing::TempDir() + "tessel_ptx_dump.ptx";
  std::remove(path.c_str());
  setenv("TESSEL_PTX_DUMP", path.c_str(), 1);
  std::shared_ptr<Executable> exe =
      compile("HloModule m\nENTRY e { p = f32[4] parameter(0) ROOT n = f32[4] "
              "negate(p) }");
  unsetenv("TESSEL_PTX_DUMP");
  ASSERT_TRUE(exe);
  takeLog();
  Expected<std::string> ptx = readFileBytes(path);
  ASSERT_TRUE(ptx) << ptx.error().message;
  EXPECT_NE(ptx->find(".target sm_90"), std::string::npos) << *ptx;
  EXPECT_NE(ptx->find(".entry kernel_0("), std::string::npos) << *ptx;
  // The negation: its sign bit flipped (LowerToLlvm.cpp).
  EXPECT_NE(ptx->find("xor.b32"), std::string::npos) << *ptx;
  std::remove(path.c_str());
}

TEST(GpuRuntimeTest, KernelsShareTheBufferBetweenThem) {
  std::shared_ptr<Executable> exe = compile(R"(
HloModule two
%f {
  %p = f32[300,40] parameter(0)
  ROOT %t = f32[40,300] transpose(%p), dimensions={1,0}
}
ENTRY %e {
  %p = f32[300,40] parameter(0)
  %a = f32[40,300] fusion(%p), kind=kLoop, calls=%f
  ROOT %n = f32[40,300] negate(%a)
})");
  ASSERT_TRUE(exe);
  takeLog();
  Literal x(Shape(PrimitiveType::F32, {300, 40}));
  Expected<Literal> y = exe->run({x});
  ASSERT_TRUE(y) << y.error().message;
  // The transpose emitter's 20 blocks of 128 threads (its tile is static
  // shared memory: no dynamic shared bytes), then the negate's 24 blocks
  // of 128 threads of 4 elements, reading the buffer the first wrote.
  EXPECT_EQ(takeLog(), "alloc 48000\n"
                       "alloc 48000\n"
                       "alloc 48000\n"
                       "to device 48000\n"
                       "launch kernel_0 grid 20x1x1 block 128x1x1 shared 0 "
                       "args #0 #1\n"
                       "launch kernel_1 grid 24x1x1 block 128x1x1 shared 0 "
                       "args #1 #2\n"
                       "synchronize\n"
                       "to host 48000\n"
                       "free 48000\n"
                       "free 48000\n"
                       "free 48000\n");
}

// An in-place dynamic-update-slice of an ENTRY parameter copies the
// parameter into the output buffer on the device first; with
// input_output_alias the output is the parameter's own buffer: no device
// copy, the kernel's output argument is the parameter's allocation, and the
// result comes back from it.
TEST(GpuRuntimeTest, DonatedParameterIsUpdatedWithoutADeviceCopy) {
  const std::string body = R"(
ENTRY %e {
  %x = f32[64,48] parameter(0)
  %u = f32[5,7] parameter(1)
  %i = s32[] parameter(2)
  ROOT %d = f32[64,48] dynamic-update-slice(%x, %u, %i, %i)
})";
  for (bool aliased : {false, true}) {
    std::string text = std::string("HloModule m") +
                       (aliased ? ", input_output_alias={ {}: (0, {}) }" : "") +
                       "\n" + body;
    std::shared_ptr<Executable> exe = compile(text);
    ASSERT_TRUE(exe);
    EXPECT_EQ(exe->outputAliases(),
              std::vector<int64_t>{aliased ? int64_t(0) : int64_t(-1)});
    takeLog();
    std::vector<Literal> arguments = {
        randomLiteral(Shape(PrimitiveType::F32, {64, 48}), 1, false),
        randomLiteral(Shape(PrimitiveType::F32, {5, 7}), 2, false),
        Literal::scalar(PrimitiveType::S32, 9)};
    Expected<Literal> y = exe->run(arguments);
    ASSERT_TRUE(y) << y.error().message;
    std::string log = takeLog();
    EXPECT_EQ(log.find("device copy") != std::string::npos, !aliased) << log;
    if (aliased) {
      EXPECT_NE(log.find("args #0 #1 #2 #0\n"), std::string::npos) << log;
    } else {
      EXPECT_NE(log.find("device copy 12288\nlaunch kernel_0 grid 1x1x1 "
                         "block 35x1x1 shared 0 args #0 #1 #2 #3\n"),
                std::string::npos)
          << log;
    }
  }
}

TEST(GpuRuntimeTest, TimingRunsTheKernelsAloneNextToADeviceCopy) {
  Expected<std::string> text =
      readFileBytes(std::string(TESSEL_EXAMPLES) + "/gelu_small.hlo");
  ASSERT_TRUE(text);
  std::shared_ptr<Executable> exe = compile(*text);
  ASSERT_TRUE(exe);
  takeLog();
  std::string input(64, '\0');
  Expected<DeviceTiming> timing = exe->timeOnDevice({input.data()}, 2);
  ASSERT_TRUE(timing) << timing.error().message;
  EXPECT_EQ(timing->kernelSeconds, std::vector<double>({1e-3, 1e-3}));
  EXPECT_EQ(timing->copySeconds.size(), 2u);
  EXPECT_EQ(timing->bytes, 128);
  // 2 * 2619 MHz * 5120 bits / 8.
  EXPECT_DOUBLE_EQ(timing->peakBytesPerSecond, 2.0 * 2619e6 * 640);
  // A first run that is not counted, then two; the copy moves half the
  // bytes each way.
  std::string launch =
      "launch kernel_0 grid 1x1x1 block 8x1x1 shared 0 args #0 #1\n";
  EXPECT_EQ(takeLog(), "alloc 64\nalloc 64\nto device 64\nalloc 64\nalloc "
                       "64\n" +
                           launch + "device copy 64\n" + launch +
                           "device copy 64\n" + launch +
                           "device copy 64\nfree 64\nfree 64\nfree 64\nfree "
                           "64\n");
}

} // namespace
