//===- LayoutCommand.cpp - `tessel layout ...` ----------------------------===//
#include "CommandLine.h"
#include "Commands.h"

#include "tessel/Indexing/LayoutMap.h"
#include "tessel/Layout/ShapeParser.h"
#include "tessel/Layout/TiledLayout.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace tessel {
namespace {

/// Parses LAYOUT (a shape with an optional layout) into a TiledLayout,
/// printing the error on failure.
std::optional<TiledLayout> loadLayout(const std::string &text) {
  Expected<Shape> shape = parseShape(text);
  if (!shape) {
    cli::fail("in '" + text + "' at column " + shape.error().message);
    return std::nullopt;
  }
  Expected<TiledLayout> layout = TiledLayout::get(*shape);
  if (!layout) {
    cli::fail(layout.error().message);
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
    if (offsetOpt < 0 || offsetOpt >= layout->physicalElements())
      return cli::fail("offset " + std::to_string(offsetOpt) +
                       " is outside the buffer of " +
                       std::to_string(layout->physicalElements()) +
                       " elements, expected 0.." +
                       std::to_string(layout->physicalElements() - 1));
    std::optional<std::vector<int64_t>> index = layout->logicalIndex(offsetOpt);
    llvm::outs() << (index ? joinIndex(*index) : "padding") << "\n";
    return 0;
  }
  std::vector<int64_t> index;
  std::string error;
  if (!cli::parseIntList(indexText, index, error))
    return cli::fail(error);
  if (static_cast<int64_t>(index.size()) != layout->rank())
    return cli::fail("index " + joinIndex(index) + " has " +
                     std::to_string(index.size()) + " entries, expected " +
                     std::to_string(layout->rank()) + " for " +
                     layout->shape().toString());
  for (int64_t i = 0; i < layout->rank(); ++i)
    if (index[i] < 0 || index[i] >= layout->logicalDims()[i])
      return cli::fail("index " + std::to_string(index[i]) + " of dim " +
                       std::to_string(i) + " is out of range, expected 0.." +
                       std::to_string(layout->logicalDims()[i] - 1));
  llvm::outs() << layout->offset(index) << "\n";
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
