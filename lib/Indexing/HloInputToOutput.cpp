//===- HloInputToOutput.cpp - Input-to-output maps of single HLO ops ------===//
#include "HloIndexingOps.h"

#include "mlir/IR/AffineMap.h"

using mlir::AffineExpr;
using mlir::AffineMap;

namespace tessel {
namespace hlo_indexing {
namespace {

using Dims = std::vector<int64_t>;
using Exprs = llvm::SmallVector<AffineExpr>;

/// The input-to-output map of an op whose output-to-input map is a
/// permutation or a reshape: built the same way, with the roles swapped.
Expected<IndexingMap> singleMap(const HloInstruction &inst, int64_t k,
                                const Dims &in, const Dims &out,
                                mlir::MLIRContext *context) {
  switch (inst.opcode()) {
  case HloOpcode::Broadcast: {
    Exprs results(out.size());
    for (size_t j = 0; j < inst.dimensions().size(); ++j)
      if (inst.dimensions()[j] >= 0 &&
          inst.dimensions()[j] < static_cast<int64_t>(out.size()))
        results[inst.dimensions()[j]] = dim(j, context);
    Dims symbols;
    for (size_t i = 0; i < out.size(); ++i)
      if (!results[i]) {
        results[i] = sym(symbols.size(), context);
        symbols.push_back(out[i]);
      }
    return makeMap(context, in, symbols, results);
  }
  case HloOpcode::Transpose: {
    Exprs results;
    for (int64_t d : inst.dimensions()) {
      if (d < 0 || d >= static_cast<int64_t>(in.size()))
        return unsupported(inst, "dimensions do not permute the operand");
      results.push_back(dim(d, context));
    }
    return makeMap(context, in, {}, results);
  }
  case HloOpcode::Reshape:
    return makeMap(
        context, in, {},
        delinearize(linearize(dimExprs(in.size(), context), in, context), out,
                    context));
  case HloOpcode::Bitcast:
    return bitcastMap(inst.operand(0)->shape(), inst.shape(), context);
  case HloOpcode::Reverse: {
    Exprs results = dimExprs(in.size(), context);
    for (int64_t d : inst.dimensions())
      if (d >= 0 && d < static_cast<int64_t>(in.size()))
        results[d] = cst(in[d] - 1, context) - dim(d, context);
    return makeMap(context, in, {}, results);
  }
  case HloOpcode::Copy:
  case HloOpcode::GetTupleElement:
    return IndexingMap::identity(context, in);
  case HloOpcode::Concatenate: {
    Exprs results = dimExprs(in.size(), context);
    int64_t cd = inst.dimensions().empty() ? -1 : inst.dimensions()[0];
    if (cd < 0 || cd >= static_cast<int64_t>(in.size()))
      return unsupported(inst, "expected one concatenated dimension");
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j)
      offset += inst.operand(j)->shape().dims[cd];
    results[cd] = dim(cd, context) + offset;
    return makeMap(context, in, {}, results);
  }
  default:
    return unsupported(inst, "no input-to-output maps for this op");
  }
}

/// Operand index d lands on (d - start) / stride where that is a whole
/// number inside the output.
IndexingMap sliceMap(const HloInstruction &inst, const Dims &in,
                     const Dims &out, mlir::MLIRContext *context) {
  const std::vector<SliceDim> &s = inst.attributes().slice;
  Exprs results;
  std::vector<std::pair<AffineExpr, Interval>> constraints;
  for (size_t i = 0; i < in.size(); ++i) {
    AffineExpr shifted = dim(i, context) - s[i].start;
    results.push_back(s[i].stride == 1 ? shifted
                                       : shifted.floorDiv(s[i].stride));
    constraints.push_back({shifted, Interval(0, (out[i] - 1) * s[i].stride)});
    if (s[i].stride > 1)
      constraints.push_back({shifted % s[i].stride, Interval(0, 0)});
  }
  IndexingMap map = makeMap(context, in, {}, results);
  for (const auto &[expr, bounds] : constraints)
    map.addConstraint(expr, bounds);
  return map;
}

IndexingMap padMap(const HloInstruction &inst, const Dims &in, const Dims &out,
                   mlir::MLIRContext *context) {
  const std::vector<PadDim> &p = inst.attributes().padding;
  Exprs results;
  for (size_t i = 0; i < in.size(); ++i)
    results.push_back(dim(i, context) * (p[i].interior + 1) + p[i].low);
  IndexingMap map = makeMap(context, in, {}, results);
  for (size_t i = 0; i < in.size(); ++i)
    map.addConstraint(results[i], Interval(0, out[i] - 1));
  return map;
}

IndexingMap reduceMap(const HloInstruction &inst, const Dims &in,
                      mlir::MLIRContext *context) {
  std::vector<bool> reduced(in.size(), false);
  for (int64_t d : inst.dimensions())
    if (d >= 0 && d < static_cast<int64_t>(in.size()))
      reduced[d] = true;
  Exprs results;
  for (size_t j = 0; j < in.size(); ++j)
    if (!reduced[j])
      results.push_back(dim(j, context));
  return makeMap(context, in, {}, results);
}

/// lhs (k = 0) or rhs (k = 1) index to the output: the other side's free
/// dims are range variables.
IndexingMap dotMap(const HloInstruction &inst, int64_t k, const Dims &in,
                   mlir::MLIRContext *context) {
  const DotDimensionNumbers &dn = inst.attributes().dotDimensionNumbers;
  const std::vector<int64_t> &batch =
      k == 0 ? dn.lhsBatchDims : dn.rhsBatchDims;
  const std::vector<int64_t> &contracting =
      k == 0 ? dn.lhsContractingDims : dn.rhsContractingDims;
  const Dims &other = inst.operand(1 - k)->shape().dims;
  const std::vector<int64_t> &otherBatch =
      k == 0 ? dn.rhsBatchDims : dn.lhsBatchDims;
  const std::vector<int64_t> &otherContracting =
      k == 0 ? dn.rhsContractingDims : dn.lhsContractingDims;
  auto isFree = [](size_t j, const std::vector<int64_t> &a,
                   const std::vector<int64_t> &b) {
    return std::find(a.begin(), a.end(), int64_t(j)) == a.end() &&
           std::find(b.begin(), b.end(), int64_t(j)) == b.end();
  };
  Exprs own, others, results;
  for (int64_t b : batch)
    results.push_back(dim(b, context));
  for (size_t j = 0; j < in.size(); ++j)
    if (isFree(j, batch, contracting))
      own.push_back(dim(j, context));
  Dims symbols;
  for (size_t j = 0; j < other.size(); ++j)
    if (isFree(j, otherBatch, otherContracting)) {
      others.push_back(sym(symbols.size(), context));
      symbols.push_back(other[j]);
    }
  const Exprs &first = k == 0 ? own : others;
  const Exprs &second = k == 0 ? others : own;
  results.append(first.begin(), first.end());
  results.append(second.begin(), second.end());
  return makeMap(context, in, symbols, results);
}

/// dynamic-slice operand 0: d lands on d - rt; dynamic-update-slice update:
/// d lands on d + rt.
IndexingMap dynamicMap(const HloInstruction &inst, const Dims &in,
                       const Dims &out, mlir::MLIRContext *context) {
  bool update = inst.opcode() == HloOpcode::DynamicUpdateSlice;
  Exprs results;
  std::vector<IndexingVariable> dimVars, rtVars;
  for (size_t i = 0; i < in.size(); ++i) {
    results.push_back(update ? dim(i, context) + sym(i, context)
                             : dim(i, context) - sym(i, context));
    dimVars.emplace_back(0, in[i] - 1);
    rtVars.emplace_back(0, update ? out[i] - in[i] : in[i] - out[i]);
  }
  IndexingMap map(AffineMap::get(in.size(), in.size(), results, context),
                  dimVars, {}, rtVars);
  if (!update)
    for (size_t i = 0; i < in.size(); ++i)
      map.addConstraint(results[i], Interval(0, out[i] - 1));
  return map;
}

/// Operand index d reaches output o for every window position s with
/// o * stride + s * windowDilation - padLow = d * baseDilation.
IndexingMap reduceWindowMap(const HloInstruction &inst, const Dims &in,
                            const Dims &out, mlir::MLIRContext *context) {
  const std::vector<WindowDim> &window = inst.attributes().window;
  Exprs results;
  Dims symbols;
  std::vector<std::pair<AffineExpr, Interval>> constraints;
  for (size_t i = 0; i < in.size(); ++i) {
    const WindowDim &w = window[i];
    AffineExpr scaled = dim(i, context) * w.baseDilation + w.paddingLow -
                        sym(i, context) * w.windowDilation;
    symbols.push_back(w.size);
    AffineExpr o = w.stride == 1 ? scaled : scaled.floorDiv(w.stride);
    results.push_back(o);
    constraints.push_back({scaled, Interval(0, (out[i] - 1) * w.stride)});
    if (w.stride > 1)
      constraints.push_back({scaled % w.stride, Interval(0, 0)});
  }
  IndexingMap map = makeMap(context, in, symbols, results);
  for (const auto &[expr, bounds] : constraints)
    map.addConstraint(expr, bounds);
  return map;
}

/// reduce, pad, slice, dot and the dynamic slices, whose map depends on
/// which operand it is. Returns nullopt for other ops, an empty Error when
/// the maps were added, or the error.
Status addMapsByOperandKind(const HloInstruction &inst, int64_t k,
                            const Dims &in, const Dims &out,
                            HloInstructionIndexing &r,
                            mlir::MLIRContext *context) {
  HloOpcode op = inst.opcode();
  switch (op) {
  case HloOpcode::Reduce: {
    int64_t n = inst.operandCount() / 2;
    for (size_t j = 0; j < r.maps.size(); ++j)
      r.addMap(j, k < n ? reduceMap(inst, in, context)
                        : everyElementMap(context, out));
    break;
  }
  case HloOpcode::Pad:
    r.addMap(0, k == 0 ? padMap(inst, in, out, context)
                       : everyElementMap(context, out));
    break;
  case HloOpcode::Slice:
    r.addMap(0, sliceMap(inst, in, out, context));
    break;
  case HloOpcode::Dot:
    r.addMap(0, dotMap(inst, k, in, context));
    break;
  case HloOpcode::DynamicSlice:
  case HloOpcode::DynamicUpdateSlice: {
    bool update = op == HloOpcode::DynamicUpdateSlice;
    if (k == 0 && update)
      r.addMap(0, IndexingMap::identity(context, in));
    else if (k == (update ? 1 : 0))
      r.addMap(0, dynamicMap(inst, in, out, context));
    else
      r.addMap(0, everyElementMap(context, out));
    break;
  }
  case HloOpcode::ReduceWindow:
    r.addMap(0, k < inst.operandCount() / 2
                    ? reduceWindowMap(inst, in, out, context)
                    : everyElementMap(context, out));
    break;
  default:
    return {};
  }
  return Error("");
}

/// Elementwise ops: the identity; a scalar operand reaches every output;
/// bitcast-convert across widths adds or drops the minor dim.
Expected<IndexingMap> elementwiseMap(const HloInstruction &inst, const Dims &in,
                                     const Dims &out,
                                     mlir::MLIRContext *context) {
  bool widthChange = inst.opcode() == HloOpcode::BitcastConvert;
  if (in.empty() && !out.empty())
    return everyElementMap(context, out);
  if (in == out)
    return IndexingMap::identity(context, in);
  if (widthChange && in.size() + 1 == out.size()) {
    Exprs results = dimExprs(in.size(), context);
    results.push_back(sym(0, context));
    return makeMap(context, in, {out.back()}, results);
  }
  if (widthChange && in.size() == out.size() + 1)
    return makeMap(context, in, {}, dimExprs(out.size(), context));
  return unsupported(inst, "no input-to-output maps when the operand and "
                           "output dims differ");
}

} // namespace

Expected<HloInstructionIndexing> inputToOutput(const HloInstruction &inst,
                                               int64_t k,
                                               mlir::MLIRContext *context) {
  HloOpcode op = inst.opcode();
  // The output-to-input maps check the attributes (dims in range, counts
  // that match) for every op; a bad op fails the same way both ways.
  if (getOutputShape(inst, 0)) {
    Expected<HloInstructionIndexing> check = outputToInput(inst, 0, context);
    if (!check)
      return check.takeError();
  }
  HloInstructionIndexing r;
  const Shape &shape = inst.shape();
  size_t outputs = shape.isTuple() ? shape.tupleShapes.size() : 1;
  r.maps.resize(outputs);
  // opt-barrier and the Sharding custom-call pass each element through.
  if (inst.passesValueThrough()) {
    for (size_t j = 0; j < outputs; ++j)
      if (const Shape *element = getOutputShape(inst, j))
        r.addMap(j, IndexingMap::identity(context, element->dims));
    return r;
  }
  if (op == HloOpcode::Scatter)
    return scatterInputToOutput(inst, k, context);
  if (!hasIndexingMaps(inst)) {
    // XLA's `unknown indexing`: the element may reach any output element.
    for (size_t j = 0; j < outputs; ++j)
      r.markUnknown(j);
    return r;
  }
  if (op == HloOpcode::Tuple) {
    Expected<Dims> in = operandDims(inst, k);
    if (!in)
      return in.takeError();
    r.addMap(k, IndexingMap::identity(context, *in));
    return r;
  }
  const Shape *outShape = getOutputShape(inst, 0);
  if (!outShape || !outShape->dynamicDims.empty())
    return unsupported(inst, "the output is not a static array");
  const Dims &out = outShape->dims;
  Expected<Dims> operand = operandDims(inst, k);
  if (!operand && op != HloOpcode::GetTupleElement)
    return operand.takeError();
  Dims in = operand ? *operand : out;
  if (Status handled = addMapsByOperandKind(inst, k, in, out, r, context);
      !handled) {
    if (!handled.error().message.empty())
      return handled.takeError();
    return r;
  }
  Expected<IndexingMap> map = hasElementwiseMaps(op)
                                  ? elementwiseMap(inst, in, out, context)
                                  : singleMap(inst, k, in, out, context);
  if (!map)
    return map.takeError();
  r.addMap(0, std::move(*map));
  return r;
}

} // namespace hlo_indexing
} // namespace tessel
