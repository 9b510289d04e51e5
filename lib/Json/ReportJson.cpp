//===- ReportJson.cpp - The --json objects of tessel's reports ------------===//
#include "tessel/Json/ReportJson.h"

#include "tessel/Indexing/HloIndexing.h"
#include "tessel/Layout/LayoutSizes.h"
#include "tessel/Npu/TensorSpec.h"

#include "llvm/Support/FormatVariadic.h"

#include <array>

namespace tessel {

llvm::json::Value layoutExplainJson(const TiledLayout &layout) {
  LayoutSizes sizes = computeSizes(layout);
  std::optional<CheaperLayout> cheaper = suggestCheaperLayout(layout);
  llvm::json::Array paddingDims;
  for (const DimPadding &pad : sizes.firstTilePadding)
    paddingDims.push_back(
        llvm::json::Object{{"dims", llvm::json::Array(pad.logicalDims)},
                           {"size", pad.size},
                           {"padded_size", pad.paddedSize},
                           {"tile", pad.tileSize}});
  llvm::json::Array tiles;
  for (const Tile &tile : layout.layout().tiles)
    tiles.push_back(tile.toString());
  llvm::json::Object object{
      {"canonical", layout.shape().toString()},
      {"element_type",
       std::string(primitiveTypeName(layout.shape().elementType))},
      {"element_bits", layout.elementBits()},
      {"logical_shape", llvm::json::Array(layout.logicalDims())},
      {"minor_to_major", llvm::json::Array(layout.layout().minorToMajor)},
      {"tiles", std::move(tiles)},
      {"physical_shape", llvm::json::Array(layout.finalDims())},
      {"logical_elements", sizes.logicalElements},
      {"physical_elements", sizes.physicalElements},
      {"physical_bytes", sizes.physicalBytes},
      {"data_bytes", sizes.dataBytes},
      {"padding_bytes", sizes.paddingBytes},
      {"utilization", sizes.utilization},
      {"padding_dims", std::move(paddingDims)},
      {"later_tile_padding_elements", sizes.laterTilePaddingElements},
      {"tail_padding_elements", sizes.tailPaddingElements},
      {"worst_padding", describeWorstPadding(sizes)},
      {"xla_bytes", sizes.xlaBytes ? llvm::json::Value(*sizes.xlaBytes)
                                   : llvm::json::Value(nullptr)},
      {"xla_note", sizes.xlaNote},
  };
  if (cheaper)
    object["cheaper"] =
        llvm::json::Object{{"layout", cheaper->shape.toString()},
                           {"physical_bytes", cheaper->physicalBytes},
                           {"why", cheaper->why}};
  else
    object["cheaper"] = nullptr;
  return llvm::json::Value(std::move(object));
}

llvm::json::Object tpuLayoutJson(const TpuLayoutChoice &choice) {
  Expected<TiledLayout> layout = TiledLayout::get(choice.shape);
  LayoutSizes sizes = layout ? computeSizes(*layout) : LayoutSizes();
  return llvm::json::Object{{"layout", choice.shape.toString()},
                            {"reason", choice.reason},
                            {"physical_bytes", sizes.physicalBytes},
                            {"utilization", sizes.utilization}};
}

llvm::json::Object npuConfigJson(const NpuConfig &config) {
  return llvm::json::Object{{"name", config.name()},
                            {"npus", config.npus()},
                            {"bytes_per_npu", config.bytesPerNpu()},
                            {"banks", config.banks()},
                            {"align_bytes", config.alignBytes()}};
}

llvm::json::Object npuStridesJson(const Dims4 &strides) {
  return llvm::json::Object{{"n", strides[0]},
                            {"c", strides[1]},
                            {"h", strides[2]},
                            {"w", strides[3]}};
}

llvm::json::Array npuDimsJson(const Dims4 &dims, int rank) {
  llvm::json::Array out;
  for (int i = 0; i < rank; ++i)
    out.push_back(dims[i]);
  return out;
}

llvm::json::Object localTensorExplainJson(const LocalTensor &t) {
  NpuUsage u = t.totalUsage();
  std::array<bool, 4> used = t.stridesUsed();
  llvm::json::Array npus, problems, suggestions;
  for (int64_t n : t.npus())
    npus.push_back(n);
  for (const std::string &p : localTensorProblems(t))
    problems.push_back(p);
  for (const std::string &s : suggestCheaper(t))
    suggestions.push_back(s);
  TensorSpec spec{"", t.desc(), true};
  return llvm::json::Object{
      {"tensor", printTensorSpec(spec)},
      {"config", npuConfigJson(t.config())},
      {"start_npu", t.start().npu},
      {"offset", t.start().offset},
      {"address", t.desc().address},
      {"channels_per_npu", t.channelsPerNpu()},
      {"npus", std::move(npus)},
      {"stored_type", t.storedTypeName()},
      {"stored_shape", npuDimsJson(t.storageShape())},
      {"strides", npuStridesJson(t.strides())},
      {"strides_used",
       llvm::json::Object{
           {"n", used[0]}, {"c", used[1]}, {"h", used[2]}, {"w", used[3]}}},
      {"bytes_per_npu", t.bytesPerNpu()},
      {"total_bytes", u.reserved},
      {"data_bytes", u.data},
      {"waste", llvm::json::Object{{"padding", u.featurePadding},
                                   {"empty_slots", u.emptySlots},
                                   {"dummy", u.dummy},
                                   {"matrix_tail", u.matrixTail},
                                   {"gaps", u.gaps},
                                   {"total", u.wasted()}}},
      {"problems", std::move(problems)},
      {"suggestions", std::move(suggestions)}};
}

llvm::json::Object fitReportJson(const FitReport &r, const NpuConfig &config) {
  llvm::json::Array tensors, npus, problems;
  for (const FitEntry &e : r.entries) {
    llvm::json::Array touched, suggestions;
    for (int64_t n : e.tensor.npus())
      touched.push_back(n);
    for (const std::string &s : e.suggestions)
      suggestions.push_back(s);
    tensors.push_back(
        llvm::json::Object{{"name", e.name},
                           {"spec", printTensorSpec(e.spec)},
                           {"npus", std::move(touched)},
                           {"bytes_per_npu", e.tensor.bytesPerNpu()},
                           {"data_bytes", e.usage.data},
                           {"wasted_bytes", e.usage.wasted()},
                           {"auto_placed", e.autoPlaced},
                           {"auto_w", e.autoW},
                           {"suggestions", std::move(suggestions)}});
  }
  for (int64_t n = 0; n < config.npus(); ++n)
    npus.push_back(llvm::json::Object{{"npu", n},
                                      {"high_water", r.highWater[n]},
                                      {"reserved", r.reserved[n]},
                                      {"data", r.data[n]}});
  for (const std::string &p : r.problems)
    problems.push_back(p);
  return llvm::json::Object{{"config", npuConfigJson(config)},
                            {"fits", r.fits()},
                            {"tensors", std::move(tensors)},
                            {"npus", std::move(npus)},
                            {"problems", std::move(problems)}};
}

namespace {

llvm::json::Object choiceJson(const MatrixChoice &c) {
  return llvm::json::Object{{"w", c.w},
                            {"channels", c.channels},
                            {"channels_per_npu", c.channelsPerNpu},
                            {"npus", c.npusUsed},
                            {"row_bytes", c.rowBytes},
                            {"fullest_npu_bytes", c.fullestNpuBytes},
                            {"total_bytes", c.totalBytes},
                            {"wasted_bytes", c.wastedBytes}};
}

} // namespace

llvm::json::Object matrixAdviceJson(const MatrixAdviceTable &table,
                                    const NpuConfig &config) {
  const MatrixAdvice &advice = table.advice;
  llvm::json::Array reasons, choices;
  for (const std::string &r : advice.reasons)
    reasons.push_back(r);
  for (const MatrixChoice &c : table.choices)
    choices.push_back(choiceJson(c));
  return llvm::json::Object{
      {"rows", table.rows},
      {"cols", table.cols},
      {"dtype", npuTypeName(table.type)},
      {"start_npu", table.startNpu},
      {"config", npuConfigJson(config)},
      {"best", choiceJson(advice.best)},
      {"ties", llvm::json::Object{{"low", advice.tieLow},
                                  {"high", advice.tieHigh},
                                  {"count", advice.tieCount}}},
      {"reasons", std::move(reasons)},
      {"choices", std::move(choices)}};
}

namespace {

llvm::json::Value indexingJson(const HloInstructionIndexing &indexing,
                               const char *key) {
  llvm::json::Array ids;
  for (size_t id = 0; id < indexing.maps.size(); ++id) {
    llvm::json::Array maps;
    for (const IndexingMap &map : indexing.maps[id])
      maps.push_back(map.toString());
    llvm::json::Object object{{key, static_cast<int64_t>(id)},
                              {"maps", std::move(maps)}};
    if (indexing.isUnknown(id))
      object["unknown"] = true;
    ids.push_back(std::move(object));
  }
  return llvm::json::Value(std::move(ids));
}

} // namespace

Expected<llvm::json::Value> hloIndexingJson(const HloInstruction &inst,
                                            std::optional<int64_t> inputId,
                                            mlir::MLIRContext *context) {
  bool forward = inputId.has_value();
  const Shape &shape = inst.shape();
  int64_t outputs =
      shape.isTuple() ? static_cast<int64_t>(shape.tupleShapes.size()) : 1;
  llvm::json::Array results;
  for (int64_t out = 0; out < (forward ? 1 : outputs); ++out) {
    Expected<HloInstructionIndexing> indexing =
        forward ? computeInputToOutputIndexing(inst, *inputId, context)
                : computeOutputToInputIndexing(inst, out, context);
    if (!indexing)
      return indexing.error();
    if (forward) {
      results = std::move(*indexingJson(*indexing, "output").getAsArray());
      continue;
    }
    results.push_back(llvm::json::Object{
        {"output", out}, {"operands", indexingJson(*indexing, "operand")}});
  }
  llvm::json::Object object{
      {"instruction", inst.name()},
      {"opcode", std::string(hloOpcodeName(inst.opcode()))},
      {"direction", forward ? "input-to-output" : "output-to-input"}};
  if (forward)
    object["operand"] = *inputId;
  object["outputs"] = std::move(results);
  return llvm::json::Value(std::move(object));
}

std::string formatJson(const llvm::json::Value &value) {
  return llvm::formatv("{0:2}", value).str();
}

} // namespace tessel
