//===- IndexingCommand.cpp - `tessel indexing ...` ------------------------===//
#include "CommandLine.h"
#include "Commands.h"

#include "tessel/Indexing/BruteForce.h"
#include "tessel/Indexing/IndexingMap.h"
#include "tessel/Indexing/Simplifier.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace tessel {
namespace {

/// Largest box `--check` enumerates.
constexpr int64_t kMaxCheckedPoints = int64_t(1) << 24;

std::optional<IndexingMap> loadMap(const std::string &text,
                                   mlir::MLIRContext *context) {
  Expected<IndexingMap> map = parseIndexingMap(text, context);
  if (!map) {
    cli::fail("in '" + text + "' at column " + map.error().message);
    return std::nullopt;
  }
  return std::move(*map);
}

/// Prints "checked N points: equal" or fails.
int checkByEnumeration(const IndexingMap &before, const IndexingMap &after) {
  Expected<BruteForceComparison> same =
      compareByEnumeration(before, after, kMaxCheckedPoints);
  if (!same)
    return cli::fail("cannot check: " + same.error().message);
  if (!same->equal)
    return cli::fail("the maps differ " + same->mismatch);
  llvm::outs().flush();
  llvm::errs() << "checked " << same->pointsChecked
               << " points by enumeration: same map\n";
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
  SimplifyStats counts;
  IndexingMap simplified = map->simplified(&counts);
  llvm::outs() << simplified << "\n";
  llvm::outs().flush();
  if (stats)
    for (unsigned r = 0; r < static_cast<unsigned>(SimplifyRule::Count); ++r)
      if (counts.counts[r])
        llvm::errs() << SimplifyStats::name(static_cast<SimplifyRule>(r))
                     << ": " << counts.counts[r] << "\n";
  return check ? checkByEnumeration(*map, simplified) : 0;
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
  if (first->getNumResults() != second->getNumDims())
    return cli::fail("FIRST has " + std::to_string(first->getNumResults()) +
                     " results but SECOND has " +
                     std::to_string(second->getNumDims()) +
                     " dims, expected equal counts");
  IndexingMap composed = composeIndexingMaps(*first, *second);
  if (!raw)
    composed.simplify();
  llvm::outs() << composed << "\n";
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
  std::vector<int64_t> dims, symbols;
  std::string error;
  if (!cli::parseIntList(dimsText, dims, error) ||
      !cli::parseIntList(symbolsText, symbols, error))
    return cli::fail(error);
  if (dims.size() != map->getNumDims())
    return cli::fail("got " + std::to_string(dims.size()) +
                     " dim values, expected " +
                     std::to_string(map->getNumDims()));
  if (symbols.size() != map->getNumSymbols())
    return cli::fail("got " + std::to_string(symbols.size()) +
                     " symbol values, expected " +
                     std::to_string(map->getNumSymbols()));
  std::optional<llvm::SmallVector<int64_t>> results =
      map->evaluate(dims, symbols);
  if (!results) {
    llvm::outs() << "outside the domain\n";
    return 0;
  }
  for (size_t i = 0; i < results->size(); ++i)
    llvm::outs() << (i ? "," : "") << (*results)[i];
  llvm::outs() << "\n";
  return 0;
}

const cli::Verb kVerbs[] = {
    {"simplify", "simplify an indexing map, optionally checking it",
     runSimplify},
    {"compose", "compose two indexing maps and simplify", runCompose},
    {"eval", "evaluate an indexing map at a point", runEval},
};

} // namespace

int runIndexingCommand(int argc, char **argv) {
  return cli::dispatch("indexing",
                       "Indexing maps in XLA's text form: (d0, d1)[s0] -> "
                       "(d1, d0 + s0), domain: d0 in [0, 9], ...",
                       kVerbs, argc, argv);
}

} // namespace tessel
