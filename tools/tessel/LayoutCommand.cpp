//===- LayoutCommand.cpp - `tessel layout ...` ----------------------------===//
#include "CommandLine.h"
#include "Commands.h"

#include "tessel/Indexing/LayoutMap.h"
#include "tessel/Json/ReportJson.h"
#include "tessel/Layout/Decomposition.h"
#include "tessel/Layout/LayoutSizes.h"
#include "tessel/Layout/ShapeParser.h"
#include "tessel/Layout/TiledLayout.h"
#include "tessel/Layout/TpuLayout.h"
#include "tessel/Render/LayoutPicture.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace tessel {
namespace {

/// Parses LAYOUT (a shape with an optional layout) into a TiledLayout,
/// printing the error on failure.
std::optional<TiledLayout> loadLayout(const std::string &text) {
  Expected<Shape> shape = parseShape(text);
  if (!shape) {
    cli::fail(shape.takeError().inSource("<layout>"));
    return std::nullopt;
  }
  Expected<TiledLayout> layout = TiledLayout::get(*shape);
  if (!layout) {
    cli::fail(layout.error());
    return std::nullopt;
  }
  return std::move(*layout);
}

std::string joinIndex(const std::vector<int64_t> &index) {
  std::string out;
  for (size_t i = 0; i < index.size(); ++i)
    out += (i ? "," : "") + std::to_string(index[i]);
  return out;
}

int runIndex(int argc, char **argv) {
  cl::opt<std::string> layoutText(cl::Positional, cl::Required,
                                  cl::desc("<LAYOUT>"),
                                  cl::cat(cli::category()));
  cl::opt<std::string> indexText(cl::Positional, cl::desc("[I,J,...]"),
                                 cl::cat(cli::category()));
  cl::opt<int64_t> offsetOpt(
      "offset", cl::desc("print the logical index stored at this offset"),
      cl::value_desc("N"), cl::init(-1), cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "the offset of a logical index, or the index at an offset\n\n"
          "  tessel layout index 'f32[3,5]{1,0:T(2,2)}' 2,3       -> 17\n"
          "  tessel layout index 'f32[3,5]{1,0:T(2,2)}' --offset 17 -> 2,3\n"
          "  tessel layout index 'f32[3,5]{1,0:T(2,2)}' --offset 9  -> "
          "padding\n"))
    return 2;
  bool haveOffset = offsetOpt.getNumOccurrences() > 0;
  if (haveOffset == !indexText.empty())
    return cli::usageError("give either an index I,J,... or --offset N");
  std::optional<TiledLayout> layout = loadLayout(layoutText);
  if (!layout)
    return 1;
  if (haveOffset) {
    Expected<std::optional<std::vector<int64_t>>> index =
        layout->checkedLogicalIndex(offsetOpt);
    if (!index)
      return cli::fail(index.error());
    llvm::outs() << (*index ? joinIndex(**index) : "padding") << "\n";
    return 0;
  }
  Expected<std::vector<int64_t>> index = cli::parseIntList(indexText);
  if (!index)
    return cli::fail(index.takeError().inSource("<index>"));
  Expected<int64_t> offset = layout->checkedOffset(*index);
  if (!offset)
    return cli::fail(offset.error());
  llvm::outs() << *offset << "\n";
  return 0;
}

int runExplain(int argc, char **argv) {
  cl::opt<std::string> layoutText(cl::Positional, cl::Required,
                                  cl::desc("<LAYOUT>"),
                                  cl::cat(cli::category()));
  cl::opt<bool> json("json", cl::desc("print a JSON object"),
                     cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "sizes, padding, utilization, and a cheaper layout when one "
          "exists\n\n"
          "  tessel layout explain 'f32[1000,3]{1,0:T(8,128)}'\n"))
    return 2;
  std::optional<TiledLayout> layout = loadLayout(layoutText);
  if (!layout)
    return 1;
  if (json) {
    llvm::outs() << formatJson(layoutExplainJson(*layout)) << "\n";
    return 0;
  }
  llvm::outs() << explainLayout(*layout);
  return 0;
}

int runDraw(int argc, char **argv) {
  cl::opt<std::string> layoutText(cl::Positional, cl::Required,
                                  cl::desc("<LAYOUT>"),
                                  cl::cat(cli::category()));
  cl::opt<std::string> svgPath("svg", cl::desc("also write an SVG picture"),
                               cl::value_desc("FILE"),
                               cl::cat(cli::category()));
  cl::opt<int64_t> maxRows("max-rows", cl::desc("rows drawn before eliding"),
                           cl::init(24), cl::cat(cli::category()));
  cl::opt<int64_t> maxCols("max-cols", cl::desc("columns drawn before eliding"),
                           cl::init(16), cl::cat(cli::category()));
  cl::opt<int64_t> maxSlices(
      "max-slices", cl::desc("grids drawn for rank > 2 before eliding"),
      cl::init(4), cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "draw the offset of every element, tile borders and padding\n\n"
          "  tessel layout draw 'f32[3,5]{1,0:T(2,2)}' --svg fig1.svg\n"))
    return 2;
  if (maxRows < 4 || maxCols < 4 || maxSlices < 2)
    return cli::usageError("--max-rows and --max-cols must be at least 4, "
                           "--max-slices at least 2");
  if (svgPath.getNumOccurrences() && svgPath.empty())
    return cli::usageError("--svg needs a file name ('-' for standard output)");
  std::optional<TiledLayout> layout = loadLayout(layoutText);
  if (!layout)
    return 1;
  PictureOptions options;
  options.maxRows = maxRows;
  options.maxColumns = maxCols;
  options.maxSlices = maxSlices;
  if (Status tooLarge = checkPictureSize(*layout, options); !tooLarge)
    return cli::fail(tooLarge.error());
  if (!svgPath.empty()) {
    Status written =
        cli::writeFileAtomically(svgPath, renderLayoutSvg(*layout, options));
    if (!written)
      return cli::fail(written.error());
  }
  llvm::outs() << renderLayoutText(*layout, options);
  return 0;
}

int runTpu(int argc, char **argv) {
  cl::opt<std::string> shapeText(cl::Positional, cl::Required,
                                 cl::desc("<SHAPE>"), cl::cat(cli::category()));
  cl::opt<bool> packedPred("packed-pred",
                           cl::desc("store pred bit-packed (E(1))"),
                           cl::cat(cli::category()));
  cl::opt<bool> json("json", cl::desc("print a JSON object"),
                     cl::cat(cli::category()));
  if (!cli::parseOptions(argc, argv,
                         "the tiling a TPU compiler picks for a shape\n\n"
                         "  tessel layout tpu 'bf16[3,300]'\n"))
    return 2;
  Expected<Shape> shape = parseShape(shapeText);
  if (!shape)
    return cli::fail(shape.takeError().inSource("<shape>"));
  Expected<TpuLayoutChoice> choice =
      chooseTpuLayout(*shape, TpuOptions{packedPred});
  if (!choice)
    return cli::fail(choice.error());
  if (json) {
    llvm::outs() << formatJson(tpuLayoutJson(*choice)) << "\n";
    return 0;
  }
  LayoutSizes sizes = computeSizes(*TiledLayout::get(choice->shape));
  llvm::outs() << choice->shape.toString() << "\n  why: " << choice->reason
               << "\n  size: " << describeByteCount(sizes.physicalBytes)
               << ", utilization " << describePercent(sizes.utilization)
               << "\n";
  return 0;
}

int runDecompose(int argc, char **argv) {
  cl::opt<std::string> layoutText(cl::Positional, cl::Required,
                                  cl::desc("<LAYOUT>"),
                                  cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "the layout as pad, reshape (bitcast) and transpose steps\n\n"
          "  tessel layout decompose 'f32[3,5]{1,0:T(2,2)}'\n"))
    return 2;
  std::optional<TiledLayout> layout = loadLayout(layoutText);
  if (!layout)
    return 1;
  llvm::outs() << describeDecomposition(*layout);
  return 0;
}

int runMap(int argc, char **argv) {
  cl::opt<std::string> layoutText(cl::Positional, cl::Required,
                                  cl::desc("<LAYOUT>"),
                                  cl::cat(cli::category()));
  cl::opt<bool> inverse(
      "inverse",
      cl::desc("print the map from the offset to the logical index instead "
               "(padding slots are outside its domain)"),
      cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "the layout as an indexing map from the logical index to the "
          "element offset\n\n"
          "  tessel layout map 'f32[3,5]{1,0:T(2,2)}'\n"
          "  -> (d0, d1) -> ((d0 floordiv 2) * 12 + (d1 floordiv 2) * 4 + "
          "(d0 mod 2) * 2 + d1 mod 2), domain: d0 in [0, 2], d1 in [0, 4]\n"
          "  tessel layout map 'f32[3,5]{1,0:T(2,2)}' --inverse\n"))
    return 2;
  std::optional<TiledLayout> layout = loadLayout(layoutText);
  if (!layout)
    return 1;
  mlir::MLIRContext context;
  IndexingMap map = inverse ? getPhysicalToLogicalMap(*layout, &context)
                            : getLogicalToPhysicalMap(*layout, &context);
  llvm::outs() << map << "\n";
  return 0;
}

const cli::Verb kVerbs[] = {
    {"index", "offset of a logical index, or the index at an offset", runIndex},
    {"explain", "sizes, padding, utilization and a cheaper layout", runExplain},
    {"draw", "picture of the offsets (terminal and --svg)", runDraw},
    {"tpu", "the tiling a TPU compiler picks for a shape", runTpu},
    {"decompose", "the layout as pad, reshape and transpose steps",
     runDecompose},
    {"map", "the layout as an indexing map (logical index -> offset)", runMap},
};

} // namespace

int runLayoutCommand(int argc, char **argv) {
  return cli::dispatch("layout",
                       "Tiled layouts as XLA defines them: "
                       "f32[3,5]{1,0:T(2,2)}.",
                       kVerbs, argc, argv);
}

} // namespace tessel
