//===- AnalysisBinding.cpp - tessel.align and tessel.indexing -------------===//
//
// The alignment verifier on MLIR text (`tessel align`) and the indexing-map
// algebra (`tessel indexing simplify|compose|eval`). The Python package
// (python/tessel/_align.py, indexing.py) wraps these private functions.
//
//===----------------------------------------------------------------------===//
#include "Bindings.h"

#include "tessel/Analysis/AlignmentCheck.h"
#include "tessel/Indexing/IndexingMap.h"
#include "tessel/Indexing/MapQueries.h"
#include "tessel/Support/Messages.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace tessel::python {
namespace {

/// (the report as `tessel align --json` prints it, as the text report).
std::pair<std::string, std::string> align(const std::string &text,
                                          const std::string &name) {
  AlignmentSourceReport report;
  std::string diagnostics;
  Status checked = [&] {
    nb::gil_scoped_release release;
    return checkAlignmentOfSource(text, name, report, diagnostics);
  }();
  // The command line prints the parser's messages, then the error.
  if (!checked)
    raise(describe(checked.error()) + (diagnostics.empty() ? "" : "\n") +
          diagnostics);
  std::string json =
      llvm::formatv("{0:2}", alignmentReportJson(name, report)).str();
  return {json, formatAlignmentReport(name, report)};
}

/// The map `text` in `context`, or a ValueError quoting it as
/// `tessel indexing` does.
IndexingMap loadMap(const std::string &text, mlir::MLIRContext *context) {
  Expected<IndexingMap> map = parseIndexingMap(text, context);
  if (!map)
    raise(map.takeError().inSource("<map>"));
  return std::move(*map);
}

std::string mapText(const IndexingMap &map) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << map;
  return s;
}

std::string simplify(const std::string &text, bool checkByEnumeration) {
  mlir::MLIRContext context;
  IndexingMap map = loadMap(text, &context);
  IndexingMap simplified = unwrap(simplifyIndexingMapChecked(map));
  if (checkByEnumeration)
    unwrap(checkSameMapByEnumeration(map, simplified));
  return mapText(simplified);
}

std::string compose(const std::string &firstText, const std::string &secondText,
                    bool simplify) {
  mlir::MLIRContext context;
  IndexingMap first = loadMap(firstText, &context);
  IndexingMap second = loadMap(secondText, &context);
  return mapText(unwrap(composeIndexingMapsForUser(first, second, simplify)));
}

std::optional<std::vector<int64_t>>
evaluate(const std::string &text, const std::vector<int64_t> &dims,
         const std::vector<int64_t> &symbols) {
  mlir::MLIRContext context;
  IndexingMap map = loadMap(text, &context);
  return unwrap(evaluateIndexingMapAt(map, dims, symbols));
}

} // namespace

void bindAnalysis(nb::module_ &m) {
  m.def("_align", &align, nb::arg("text"), nb::arg("name"),
        "(JSON of `tessel align --json`, text of `tessel align`) for MLIR "
        "text.");
  m.def("_indexing_simplify", &simplify, nb::arg("map"), nb::arg("check"),
        "`tessel indexing simplify MAP [--check]`.");
  m.def("_indexing_compose", &compose, nb::arg("first"), nb::arg("second"),
        nb::arg("simplify"), "`tessel indexing compose FIRST SECOND`.");
  m.def("_indexing_eval", &evaluate, nb::arg("map"), nb::arg("dims"),
        nb::arg("symbols"), "`tessel indexing eval MAP DIMS [SYMBOLS]`.");
}

} // namespace tessel::python
