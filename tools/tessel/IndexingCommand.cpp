//===- IndexingCommand.cpp - `tessel indexing ...` ------------------------===//
//
//   tessel indexing simplify MAP [--check] [--rules]
//   tessel indexing compose FIRST SECOND [--no-simplify]
//   tessel indexing eval MAP D0,D1,... [S0,...]
//   tessel indexing maps M.hlo [--instruction NAME] [--input-to-output N]
//                              [--json]
//   tessel indexing M.hlo ...      the same as `maps`
//   tessel indexing npu [SPEC] [--chip C | --npus X --mem S] [--shape ...]
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"
#include "Commands.h"
#include "HloInput.h"
#include "NpuOptions.h"

#include "tessel/Indexing/BruteForce.h"
#include "tessel/Indexing/HloIndexing.h"
#include "tessel/Indexing/IndexingMap.h"
#include "tessel/Indexing/MapQueries.h"
#include "tessel/Indexing/NpuMap.h"
#include "tessel/Indexing/Simplifier.h"
#include "tessel/Json/ReportJson.h"
#include "tessel/Support/Npy.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace tessel {
namespace {

std::optional<IndexingMap> loadMap(const std::string &text,
                                   mlir::MLIRContext *context) {
  Expected<IndexingMap> map = parseIndexingMap(text, context);
  if (!map) {
    cli::fail(map.takeError().inSource("<map>"));
    return std::nullopt;
  }
  return std::move(*map);
}

/// Prints "checked N points: equal" or fails.
int checkByEnumeration(const IndexingMap &before, const IndexingMap &after) {
  Expected<int64_t> points = checkSameMapByEnumeration(before, after);
  if (!points)
    return cli::fail(points.error());
  llvm::outs().flush();
  llvm::errs() << "checked " << *points << " points by enumeration: same map\n";
  return 0;
}

int runSimplify(int argc, char **argv) {
  cl::opt<std::string> mapText(cl::Positional, cl::Required, cl::desc("<MAP>"),
                               cl::cat(cli::category()));
  cl::opt<bool> check("check",
                      cl::desc("compare with the input at every point of the "
                               "domain (small domains)"),
                      cl::cat(cli::category()));
  cl::opt<bool> stats("rules", cl::desc("print how often each rule fired"),
                      cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "simplify an indexing map (XLA's text form)\n\n"
          "  tessel indexing simplify '(d0, d1) -> ((d0 * 4 + d1) floordiv "
          "8), domain: d0 in [0, 15], d1 in [0, 3]'\n"
          "  -> (d0, d1) -> (d0 floordiv 2), domain: d0 in [0, 15], d1 in "
          "[0, 3]\n"))
    return 2;
  mlir::MLIRContext context;
  std::optional<IndexingMap> map = loadMap(mapText, &context);
  if (!map)
    return 1;
  // Where a value overflows, the map has no value; the simplifier works
  // in int64 and would give one. Refuse rather than change the answer.
  SimplifyStats counts;
  Expected<IndexingMap> simplified = simplifyIndexingMapChecked(*map, &counts);
  if (!simplified)
    return cli::fail(simplified.error());
  llvm::outs() << *simplified << "\n";
  llvm::outs().flush();
  if (stats)
    for (unsigned r = 0; r < static_cast<unsigned>(SimplifyRule::Count); ++r)
      if (counts.counts[r])
        llvm::errs() << SimplifyStats::name(static_cast<SimplifyRule>(r))
                     << ": " << counts.counts[r] << "\n";
  return check ? checkByEnumeration(*map, *simplified) : 0;
}

int runCompose(int argc, char **argv) {
  cl::opt<std::string> firstText(cl::Positional, cl::Required,
                                 cl::desc("<FIRST>"), cl::cat(cli::category()));
  cl::opt<std::string> secondText(cl::Positional, cl::Required,
                                  cl::desc("<SECOND>"),
                                  cl::cat(cli::category()));
  cl::opt<bool> raw("no-simplify", cl::desc("print the composition as built"),
                    cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "compose two indexing maps: the results of FIRST feed the dims of "
          "SECOND\n\n"
          "  tessel indexing compose '(d0) -> (-d0 + 3), domain: d0 in [0, "
          "3]' '(d0) -> (d0 + 2), domain: d0 in [0, 3]'\n"
          "  -> (d0) -> (-d0 + 5), domain: d0 in [0, 3]\n"))
    return 2;
  mlir::MLIRContext context;
  std::optional<IndexingMap> first = loadMap(firstText, &context);
  if (!first)
    return 1;
  std::optional<IndexingMap> second = loadMap(secondText, &context);
  if (!second)
    return 1;
  Expected<IndexingMap> composed =
      composeIndexingMapsForUser(*first, *second, !raw);
  if (!composed)
    return cli::fail(composed.error());
  llvm::outs() << *composed << "\n";
  return 0;
}

int runEval(int argc, char **argv) {
  cl::opt<std::string> mapText(cl::Positional, cl::Required, cl::desc("<MAP>"),
                               cl::cat(cli::category()));
  cl::opt<std::string> dimsText(cl::Positional, cl::Required,
                                cl::desc("<D0,D1,...>"),
                                cl::cat(cli::category()));
  cl::opt<std::string> symbolsText(cl::Positional, cl::desc("[S0,S1,...]"),
                                   cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "evaluate an indexing map at a point (dims, then symbols: range "
          "variables then runtime variables)\n\n"
          "  tessel indexing eval '(d0, d1) -> (d1, d0), domain: d0 in [0, "
          "39], d1 in [0, 19]' 3,7   -> 7,3\n"))
    return 2;
  mlir::MLIRContext context;
  std::optional<IndexingMap> map = loadMap(mapText, &context);
  if (!map)
    return 1;
  Expected<std::vector<int64_t>> dims = cli::parseIntList(dimsText);
  if (!dims)
    return cli::fail(dims.takeError().inSource("<dims>"));
  Expected<std::vector<int64_t>> symbols = cli::parseIntList(symbolsText);
  if (!symbols)
    return cli::fail(symbols.takeError().inSource("<symbols>"));
  Expected<std::optional<std::vector<int64_t>>> values =
      evaluateIndexingMapAt(*map, *dims, *symbols);
  if (!values)
    return cli::fail(values.error());
  if (!*values) {
    llvm::outs() << "outside the domain\n";
    return 0;
  }
  const std::vector<int64_t> &results = **values;
  for (size_t i = 0; i < results.size(); ++i)
    llvm::outs() << (i ? "," : "") << results[i];
  llvm::outs() << "\n";
  return 0;
}

/// Prints the maps of `inst`: output-to-input for every output, or
/// input-to-output from operand `inputId` when `forward`.
int printMaps(const HloInstruction &inst, bool forward, int64_t inputId,
              bool json) {
  mlir::MLIRContext context;
  if (!json) {
    Expected<std::string> text = describeHloIndexing(
        inst, forward ? std::optional<int64_t>(inputId) : std::nullopt,
        &context);
    if (!text)
      return cli::fail(text.error());
    llvm::outs() << *text;
    return 0;
  }
  Expected<llvm::json::Value> object = hloIndexingJson(
      inst, forward ? std::optional<int64_t>(inputId) : std::nullopt, &context);
  if (!object)
    return cli::fail(object.error());
  llvm::outs() << formatJson(*object) << "\n";
  return 0;
}

int runMaps(int argc, char **argv) {
  cl::opt<std::string> path(cl::Positional, cl::Required, cl::desc("<M.hlo>"),
                            cl::cat(cli::category()));
  cl::opt<std::string> name(
      "instruction",
      cl::desc("the instruction (default: the ROOT of the entry)"),
      cl::value_desc("NAME"), cl::cat(cli::category()));
  cl::opt<int64_t> inputId(
      "input-to-output",
      cl::desc("print the maps from operand N to the outputs instead"),
      cl::value_desc("N"), cl::init(-1), cl::cat(cli::category()));
  cl::opt<std::string> computationName(
      "computation",
      cl::desc("look the instruction up in this computation only (default: "
               "the entry, then the others)"),
      cl::value_desc("NAME"), cl::cat(cli::category()));
  cl::opt<bool> json("json", cl::desc("print JSON"), cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "print the indexing maps of an HLO instruction in XLA's form: for "
          "each operand, the maps from the output index to the operand "
          "index it reads\n\n"
          "  tessel indexing maps m.hlo --instruction t\n"
          "  operand id = 0\n"
          "  (d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]\n"))
    return 2;
  std::unique_ptr<HloModule> module = cli::loadHloModule(path);
  if (!module)
    return 1;
  Expected<const HloInstruction *> inst =
      findInstruction(*module, name, computationName);
  if (!inst)
    return cli::fail(inst.error());
  return printMaps(**inst, inputId.getNumOccurrences() > 0, inputId, json);
}

int runNpu(int argc, char **argv) {
  npucli::ConfigOptions configOpts;
  npucli::TensorOptions tensorOpts;
  cl::opt<std::string> specText(cl::Positional, cl::desc("[SPEC]"),
                                cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "a tensor in NPU local memory as an indexing map from (n, c, h, w) "
          "to (npu, byte offset); the tensor as for `tessel npu explain`\n\n"
          "  tessel indexing npu --npus 4 --mem 1024 'fp32[2,3,4,5]@2048'\n"
          "  -> (d0, d1, d2, d3) -> ((d1 + 2) mod 4, d0 * 256 + ((d1 + 2) "
          "floordiv 4) * 128 + d2 * 20 + d3 * 4), domain: ...\n"
          "  tessel indexing npu 'fp32[2,3,4,5]:continuous'   (system memory: "
          "the byte offset)\n"))
    return 2;
  int status = 0;
  std::optional<TensorSpec> spec = tensorOpts.resolve(specText, status);
  if (!spec)
    return status;
  mlir::MLIRContext context;
  if (spec->desc.layout == NpuLayout::Continuous) {
    llvm::outs() << getContinuousMap(spec->desc.shape,
                                     byteWidth(spec->desc.type), &context)
                 << "\n";
    return 0;
  }
  std::optional<NpuConfig> config = configOpts.resolve(status);
  if (!config || !npucli::chooseMatrixW(*config, *spec, status))
    return status;
  std::optional<LocalTensor> tensor =
      npucli::makeTensor(*config, *spec, status);
  if (!tensor)
    return status;
  llvm::outs() << getNpuLocalMap(*tensor, &context) << "\n";
  return 0;
}

const cli::Verb kVerbs[] = {
    {"simplify", "simplify an indexing map, optionally checking it",
     runSimplify},
    {"compose", "compose two indexing maps and simplify", runCompose},
    {"eval", "evaluate an indexing map at a point", runEval},
    {"maps", "print the indexing maps of an HLO instruction", runMaps},
    {"npu", "an NPU local tensor as a map to (npu, byte offset)", runNpu},
};

/// `tessel indexing M.hlo ...` runs `maps`: the first argument is no verb
/// but a file.
bool isHloFileArgument(llvm::StringRef arg) {
  if (arg.empty() || arg.starts_with("-"))
    return false;
  for (const cli::Verb &verb : kVerbs)
    if (arg == verb.name)
      return false;
  return arg.ends_with(".hlo") || llvm::sys::fs::is_regular_file(arg);
}

} // namespace

int runIndexingCommand(int argc, char **argv) {
  if (argc >= 2 && isHloFileArgument(argv[1])) {
    std::string verb = "maps";
    std::vector<char *> args(argv, argv + argc);
    args.insert(args.begin() + 1, verb.data());
    return cli::dispatch("indexing", "", kVerbs, static_cast<int>(args.size()),
                         args.data());
  }
  return cli::dispatch("indexing",
                       "Indexing maps in XLA's text form: (d0, d1)[s0] -> "
                       "(d1, d0 + s0), domain: d0 in [0, 9], ...\n"
                       "`tessel indexing M.hlo ...` is `tessel indexing maps "
                       "M.hlo ...`.",
                       kVerbs, argc, argv);
}

} // namespace tessel
