//===- NpuOptions.h - Options shared by the `tessel npu` verbs ---*- C++
//-*-===//
//
// Every verb takes a configuration (--chip NAME, or --npus X --mem S with
// optional --banks and --align) and most take one tensor, either as a spec
// (`x=fp32[2,3,4,5]:aligned@2048`, see tessel/Npu/TensorSpec.h) or as flags
// (--shape 2,3,4,5 --dtype fp32 --layout aligned --address 2048). The option
// groups below declare those flags as members, so a verb constructs them
// before cli::parseOptions.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TOOLS_NPUOPTIONS_H
#define TESSEL_TOOLS_NPUOPTIONS_H

#include "CommandLine.h"

#include "tessel/Npu/LocalTensor.h"
#include "tessel/Npu/TensorSpec.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace tessel::npucli {

namespace cl = llvm::cl;

/// --chip, --npus, --mem, --banks, --align.
struct ConfigOptions {
  cl::opt<std::string> chip{
      "chip", cl::desc("a chip preset: bm1684, bm1684x or bm1688"),
      cl::value_desc("NAME"), cl::cat(cli::category())};
  cl::opt<int64_t> npus{"npus", cl::desc("number of NPUs (X)"),
                        cl::value_desc("X"), cl::init(0),
                        cl::cat(cli::category())};
  cl::opt<std::string> mem{
      "mem", cl::desc("local memory per NPU (S): 1024, 512K, 256KiB, ..."),
      cl::value_desc("S"), cl::cat(cli::category())};
  cl::opt<int64_t> banks{"banks",
                         cl::desc("banks per NPU memory (default 1, or the "
                                  "chip's)"),
                         cl::value_desc("B"), cl::init(0),
                         cl::cat(cli::category())};
  cl::opt<int64_t> align{"align",
                         cl::desc("the chip's alignment unit in bytes, used "
                                  "by the eu layout (default 128, or the "
                                  "chip's)"),
                         cl::value_desc("BYTES"), cl::init(0),
                         cl::cat(cli::category())};

  /// The configuration; on failure prints the message and sets `status` (2
  /// when neither --chip nor --npus/--mem was given, else 1).
  std::optional<NpuConfig> resolve(int &status) const;
};

/// One tensor as flags: --shape, --dtype, --layout, --mode, --w, --strides,
/// --address.
struct TensorOptions {
  cl::opt<std::string> shape{
      "shape", cl::desc("N,C,H,W (or ROWS,COLS for --layout matrix)"),
      cl::value_desc("DIMS"), cl::cat(cli::category())};
  cl::opt<std::string> dtype{"dtype",
                             cl::desc("element type: fp32, fp16, bf16, int8, "
                                      "uint8, int16, uint16, int32, ..."),
                             cl::value_desc("TYPE"), cl::init("fp32"),
                             cl::cat(cli::category())};
  cl::opt<std::string> layout{
      "layout",
      cl::desc("aligned (128 bytes), eu (the chip's unit), compact, matrix, "
               "continuous (system memory) or strided"),
      cl::value_desc("LAYOUT"), cl::init("aligned"), cl::cat(cli::category())};
  cl::opt<std::string> mode{"mode", cl::desc("storage mode: 1n, 4n, 2n, 2ic"),
                            cl::value_desc("MODE"), cl::init("1n"),
                            cl::cat(cli::category())};
  cl::opt<int64_t> w{"w", cl::desc("matrix layout: columns per channel"),
                     cl::value_desc("W"), cl::init(0),
                     cl::cat(cli::category())};
  cl::opt<std::string> strides{
      "strides",
      cl::desc("explicit N,C,H,W strides in elements (implies "
               "--layout strided)"),
      cl::value_desc("N,C,H,W"), cl::cat(cli::category())};
  cl::opt<std::string> address{
      "address", cl::desc("local-memory address A (default 0)"),
      cl::value_desc("A"), cl::init("0"), cl::cat(cli::category())};

  /// The spec from `specText` when not empty, else from the flags. Prints the
  /// error and sets `status` on failure.
  std::optional<TensorSpec> resolve(const std::string &specText,
                                    int &status) const;
};

/// The tensor of a spec on a configuration (W must be set for a matrix).
std::optional<LocalTensor> makeTensor(const NpuConfig &config,
                                      const TensorSpec &spec, int &status);

/// Gives a matrix spec without W the advisor's W. Prints the error and sets
/// `status` on failure.
bool chooseMatrixW(const NpuConfig &config, TensorSpec &spec, int &status);

/// Prints a JSON value, indented, with a final newline.
void printJson(llvm::json::Value value);
llvm::json::Object configJson(const NpuConfig &config);
llvm::json::Object stridesJson(const Dims4 &strides);
llvm::json::Array dimsJson(const Dims4 &dims, int rank = 4);

/// "(2,3,4,5)", or "(2,40)" with rank 2.
std::string dimsText(const Dims4 &dims, int rank = 4);
/// "npus 2, 3, 0", "npu 1", "npus 0..63".
std::string npuListText(const std::vector<int64_t> &npus);
/// The tensor in one line: "fp32 (2,3,4,5) aligned at address 2048".
std::string tensorLine(const LocalTensor &t);

} // namespace tessel::npucli

#endif // TESSEL_TOOLS_NPUOPTIONS_H
