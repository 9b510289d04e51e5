//===- NpuFit.cpp - `tessel npu fit`: matrix W advice and fit reports -----===//
#include "NpuOptions.h"
#include "NpuVerbs.h"
#include "tessel/Json/ReportJson.h"
#include "tessel/Npu/NpuReport.h"

#include "tessel/Npu/NpuAdvisor.h"
#include "tessel/Render/NpuPicture.h"
#include "tessel/Support/FileIO.h"

#include "llvm/Support/raw_ostream.h"

namespace tessel::npucli {
namespace {

//===----------------------------------------------------------------------===//
// The matrix advisor
//===----------------------------------------------------------------------===//

int adviseMatrixCommand(const NpuConfig &config, const std::string &matrix,
                        const std::string &dtype, int64_t startNpu,
                        const std::string &wList, bool json) {
  std::string dims = matrix;
  for (char &ch : dims)
    ch = ch == 'x' || ch == 'X' ? ',' : ch;
  Expected<std::vector<int64_t>> rc = cli::parseIntList(dims);
  if (!rc || rc->size() != 2)
    return cli::fail("--matrix '" + matrix +
                     "': expected ROWSxCOLS, e.g. 2x40");
  std::vector<int64_t> ws;
  if (!wList.empty()) {
    Expected<std::vector<int64_t>> parsed = cli::parseIntList(wList);
    if (!parsed)
      return cli::fail(parsed.takeError().inSource("--w"));
    ws = std::move(*parsed);
  }
  Expected<PrimitiveType> type = parseNpuType(dtype);
  if (!type)
    return cli::fail(type.error());
  Expected<MatrixAdviceTable> table =
      adviseMatrixTable(config, (*rc)[0], (*rc)[1], *type, startNpu, ws);
  if (!table)
    return cli::fail(table.error());
  if (json)
    printJson(matrixAdviceJson(*table, config));
  else
    llvm::outs() << describeMatrixAdvice(*table, config);
  return 0;
}

//===----------------------------------------------------------------------===//
// Fit reports
//===----------------------------------------------------------------------===//

/// The largest --tensors file: 16 MiB of specs is far more than any local
/// memory holds.
constexpr int64_t kMaxSpecFileBytes = int64_t(1) << 24;

/// The specs from the positional arguments and from --tensors FILE.
bool loadSpecs(const std::vector<std::string> &args, const std::string &file,
               std::vector<TensorSpec> &specs, int &status) {
  for (const std::string &text : args) {
    Expected<TensorSpec> spec = parseTensorSpec(text);
    if (!spec) {
      status = cli::fail(spec.takeError().inSource("<spec>"));
      return false;
    }
    specs.push_back(std::move(*spec));
  }
  if (file.empty())
    return true;
  Expected<std::string> text = readFileBytes(
      file, kMaxSpecFileBytes, "the most a file of tensor specs may hold");
  if (!text) {
    status = cli::fail(text.error());
    return false;
  }
  Expected<std::vector<TensorSpec>> list = parseTensorSpecList(*text);
  if (!list) {
    status = cli::fail(list.takeError().inSource(file));
    return false;
  }
  specs.insert(specs.end(), list->begin(), list->end());
  return true;
}

int drawFit(const FitReport &r, const std::string &svgPath, bool text) {
  std::vector<NamedTensor> tensors;
  for (const FitEntry &e : r.entries)
    tensors.push_back({e.name, e.tensor});
  if (tensors.empty())
    return 0;
  NpuPictureOptions options;
  options.byTensor = true;
  options.title = "local memory";
  if (text) {
    Expected<std::string> picture = drawMemoryText(tensors, options);
    if (!picture)
      return cli::fail(picture.error());
    llvm::outs() << *picture;
  }
  if (svgPath.empty())
    return 0;
  Expected<std::string> svg = drawMemorySvg(tensors, options);
  if (!svg)
    return cli::fail(svg.error());
  Status written = cli::writeFileAtomically(svgPath, *svg);
  return written ? 0 : cli::fail(written.error());
}

} // namespace

int runFit(int argc, char **argv) {
  ConfigOptions configOpts;
  cl::list<std::string> specArgs(cl::Positional, cl::desc("[SPEC...]"),
                                 cl::cat(cli::category()));
  cl::opt<std::string> file("tensors",
                            cl::desc("a file of tensor specs, one per line "
                                     "or ';'-separated ('-' for stdin)"),
                            cl::value_desc("FILE"), cl::cat(cli::category()));
  cl::opt<std::string> matrix("matrix",
                              cl::desc("advise W for a ROWSxCOLS matrix"),
                              cl::value_desc("RxC"), cl::cat(cli::category()));
  cl::opt<std::string> dtype("dtype", cl::desc("--matrix: element type"),
                             cl::init("fp32"), cl::cat(cli::category()));
  cl::opt<int64_t> startNpu("start-npu", cl::desc("--matrix: start npu Q"),
                            cl::init(0), cl::cat(cli::category()));
  cl::opt<std::string> ws("w", cl::desc("--matrix: the W values to compare"),
                          cl::value_desc("W,W,..."), cl::cat(cli::category()));
  cl::opt<bool> draw("draw", cl::desc("draw the tensors in the terminal"),
                     cl::cat(cli::category()));
  cl::opt<std::string> svg("svg", cl::desc("write a picture of the tensors"),
                           cl::value_desc("FILE"), cl::cat(cli::category()));
  cl::opt<bool> json("json", cl::desc("print JSON"), cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "whether tensors fit in local memory, where the bytes go, and\n"
          "cheaper choices; or the best W for a matrix\n\n"
          "  tessel npu fit --npus 4 --mem 1024 --matrix 2x40 --dtype fp32\n"
          "  tessel npu fit --npus 4 --mem 1024 'a=fp32[2,3,4,5]@0' \\\n"
          "      'b=fp32[1,1,4,5]' 'c=fp32[2,40]:matrix'\n"
          "  tessel npu fit --chip bm1684x --tensors layer.txt --svg "
          "fit.svg\n"))
    return 2;
  int status = 0;
  std::optional<NpuConfig> config = configOpts.resolve(status);
  if (!config)
    return status;
  if (!matrix.empty())
    return specArgs.empty() && file.empty()
               ? adviseMatrixCommand(*config, matrix, dtype, startNpu, ws, json)
               : cli::usageError("give --matrix or tensor specs, not both");
  std::vector<TensorSpec> specs;
  if (!loadSpecs(specArgs, file, specs, status))
    return status;
  if (specs.empty() && !file.empty())
    return cli::fail(file + " holds no tensor specs, expected one per line "
                            "(e.g. 'a=fp32[2,3,4,5]')");
  if (specs.empty())
    return cli::usageError("give tensor SPECs, --tensors FILE or --matrix RxC");
  Expected<FitReport> report = fitTensors(*config, specs);
  if (!report)
    return cli::fail(report.error());
  if (json)
    printJson(fitReportJson(*report, *config));
  else
    llvm::outs() << describeFitReport(*report, *config);
  if (int drawn = drawFit(*report, svg, draw && !json))
    return drawn;
  if (report->fits())
    return 0;
  return cli::fail("the tensors do not fit: " + report->problems.front());
}

} // namespace tessel::npucli
