//===- HloOutputToInput.cpp - Output-to-input maps of single HLO ops ------===//
#include "HloIndexingOps.h"

#include "tessel/Hlo/HloParser.h"

#include "mlir/IR/AffineMap.h"

#include <cstdlib>

using mlir::AffineExpr;
using mlir::AffineMap;

namespace tessel {
namespace hlo_indexing {
namespace {

using Dims = std::vector<int64_t>;
using Exprs = llvm::SmallVector<AffineExpr>;

/// Every operand read at the output index; scalars (clamp bounds) read
/// everywhere. bitcast-convert to a narrower type adds a minor dim to the
/// output, to a wider type consumes one of the input.
Expected<HloInstructionIndexing> elementwise(const HloInstruction &inst,
                                             const Dims &out,
                                             mlir::MLIRContext *context) {
  HloInstructionIndexing r;
  for (int64_t k = 0; k < inst.operandCount(); ++k) {
    Expected<Dims> in = operandDims(inst, k);
    if (!in)
      return in.takeError();
    if (in->empty() && !out.empty()) {
      r.addMap(k, scalarMap(context, out));
      continue;
    }
    if (*in == out) {
      r.addMap(k, IndexingMap::identity(context, out));
      continue;
    }
    if (inst.opcode() != HloOpcode::BitcastConvert)
      return unsupported(inst, "operand " + std::to_string(k) +
                                   " does not have the output's dims");
    Exprs results;
    if (in->size() + 1 == out.size()) {
      results = dimExprs(in->size(), context);
      r.addMap(k, makeMap(context, out, {}, results));
    } else if (in->size() == out.size() + 1) {
      results = dimExprs(out.size(), context);
      results.push_back(sym(0, context));
      r.addMap(k, makeMap(context, out, {in->back()}, results));
    } else {
      return unsupported(inst, "operand and output ranks do not match");
    }
  }
  return r;
}

Expected<HloInstructionIndexing> broadcast(const HloInstruction &inst,
                                           const Dims &out,
                                           mlir::MLIRContext *context) {
  Exprs results;
  for (int64_t d : inst.dimensions()) {
    if (d < 0 || d >= static_cast<int64_t>(out.size()))
      return unsupported(inst,
                         "dimension " + std::to_string(d) + " is out of range");
    results.push_back(dim(d, context));
  }
  HloInstructionIndexing r;
  r.addMap(0, makeMap(context, out, {}, results));
  return r;
}

Expected<HloInstructionIndexing> transpose(const HloInstruction &inst,
                                           const Dims &out,
                                           mlir::MLIRContext *context) {
  const Dims &perm = inst.dimensions();
  if (perm.size() != out.size())
    return unsupported(inst, "dimensions do not permute the output dims");
  Exprs results(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(perm.size()) ||
        results[perm[i]])
      return unsupported(inst, "dimensions do not permute the output dims");
    results[perm[i]] = dim(i, context);
  }
  HloInstructionIndexing r;
  r.addMap(0, makeMap(context, out, {}, results));
  return r;
}

Expected<HloInstructionIndexing> reshape(const HloInstruction &inst,
                                         const Dims &out,
                                         mlir::MLIRContext *context) {
  Expected<Dims> in = operandDims(inst, 0);
  if (!in)
    return in.takeError();
  Exprs index = dimExprs(out.size(), context);
  HloInstructionIndexing r;
  r.addMap(0,
           makeMap(context, out, {},
                   delinearize(linearize(index, out, context), *in, context)));
  return r;
}

Expected<HloInstructionIndexing>
slice(const HloInstruction &inst, const Dims &out, mlir::MLIRContext *context) {
  const std::vector<SliceDim> &s = inst.attributes().slice;
  if (s.size() != out.size())
    return unsupported(inst, "slice has the wrong number of dims");
  Exprs results;
  for (size_t i = 0; i < out.size(); ++i)
    results.push_back(dim(i, context) * s[i].stride + s[i].start);
  HloInstructionIndexing r;
  r.addMap(0, makeMap(context, out, {}, results));
  return r;
}

Expected<HloInstructionIndexing> reverse(const HloInstruction &inst,
                                         const Dims &out,
                                         mlir::MLIRContext *context) {
  Exprs results = dimExprs(out.size(), context);
  for (int64_t d : inst.dimensions()) {
    if (d < 0 || d >= static_cast<int64_t>(out.size()))
      return unsupported(inst,
                         "dimension " + std::to_string(d) + " is out of range");
    results[d] = cst(out[d] - 1, context) - dim(d, context);
  }
  HloInstructionIndexing r;
  r.addMap(0, makeMap(context, out, {}, results));
  return r;
}

/// Output index d reads operand index (d - low) / (interior + 1) where that
/// is a whole number inside the operand.
Expected<HloInstructionIndexing>
pad(const HloInstruction &inst, const Dims &out, mlir::MLIRContext *context) {
  Expected<Dims> in = operandDims(inst, 0);
  if (!in)
    return in.takeError();
  const std::vector<PadDim> &p = inst.attributes().padding;
  if (p.size() != out.size() || in->size() != out.size())
    return unsupported(inst, "padding has the wrong number of dims");
  Exprs results;
  std::vector<std::pair<AffineExpr, Interval>> constraints;
  for (size_t i = 0; i < out.size(); ++i) {
    AffineExpr shifted = dim(i, context) - p[i].low;
    int64_t step = p[i].interior + 1;
    results.push_back(step == 1 ? shifted : shifted.floorDiv(step));
    constraints.push_back({shifted, Interval(0, ((*in)[i] - 1) * step)});
    if (step > 1)
      constraints.push_back({shifted % step, Interval(0, 0)});
  }
  IndexingMap map = makeMap(context, out, {}, results);
  for (const auto &[expr, bounds] : constraints)
    map.addConstraint(expr, bounds);
  HloInstructionIndexing r;
  r.addMap(0, std::move(map));
  r.addMap(1, scalarMap(context, out));
  return r;
}

Expected<HloInstructionIndexing> concatenate(const HloInstruction &inst,
                                             const Dims &out,
                                             mlir::MLIRContext *context) {
  if (inst.dimensions().size() != 1 || inst.dimensions()[0] < 0 ||
      inst.dimensions()[0] >= static_cast<int64_t>(out.size()))
    return unsupported(inst, "expected one concatenated dimension");
  int64_t cd = inst.dimensions()[0];
  HloInstructionIndexing r;
  r.maps.resize(inst.operandCount());
  int64_t offset = 0;
  for (int64_t k = 0; k < inst.operandCount(); ++k) {
    Expected<Dims> in = operandDims(inst, k);
    if (!in)
      return in.takeError();
    if (in->size() != out.size())
      return unsupported(inst, "operand " + std::to_string(k) +
                                   " has the wrong rank");
    Exprs results = dimExprs(out.size(), context);
    results[cd] = dim(cd, context) - offset;
    IndexingMap map = makeMap(context, out, {}, results);
    map.setDimBounds(cd, Interval(offset, offset + (*in)[cd] - 1));
    if ((*in)[cd] == 0)
      map.markKnownEmpty();
    r.addMap(k, std::move(map));
    offset += (*in)[cd];
  }
  return r;
}

/// Kept dims are the output dims in order; reduced dims are range
/// variables, in increasing order of the operand dim.
Expected<HloInstructionIndexing> reduce(const HloInstruction &inst,
                                        const Dims &out,
                                        mlir::MLIRContext *context) {
  int64_t n = inst.operandCount() / 2;
  Expected<Dims> in = operandDims(inst, 0);
  if (!in)
    return in.takeError();
  std::vector<bool> reduced(in->size(), false);
  for (int64_t d : inst.dimensions()) {
    if (d < 0 || d >= static_cast<int64_t>(in->size()))
      return unsupported(inst,
                         "dimension " + std::to_string(d) + " is out of range");
    reduced[d] = true;
  }
  Exprs results;
  Dims symbols;
  unsigned kept = 0;
  for (size_t j = 0; j < in->size(); ++j) {
    if (reduced[j]) {
      results.push_back(sym(symbols.size(), context));
      symbols.push_back((*in)[j]);
    } else {
      results.push_back(dim(kept++, context));
    }
  }
  if (kept != out.size())
    return unsupported(inst, "the output rank does not match the kept dims");
  HloInstructionIndexing r;
  for (int64_t k = 0; k < n; ++k)
    r.addMap(k, makeMap(context, out, symbols, results));
  for (int64_t k = n; k < 2 * n; ++k)
    r.addMap(k, scalarMap(context, out));
  return r;
}

/// Output index o reads (o * stride + w * windowDilation - padLow) /
/// baseDilation for every window position w where that is a whole number
/// inside the operand.
Expected<HloInstructionIndexing> reduceWindow(const HloInstruction &inst,
                                              const Dims &out,
                                              mlir::MLIRContext *context) {
  int64_t n = inst.operandCount() / 2;
  Expected<Dims> in = operandDims(inst, 0);
  if (!in)
    return in.takeError();
  const std::vector<WindowDim> &window = inst.attributes().window;
  if (window.size() != in->size() || in->size() != out.size())
    return unsupported(inst, "window has the wrong number of dims");
  Exprs results;
  Dims symbols;
  std::vector<std::pair<AffineExpr, Interval>> constraints;
  for (size_t i = 0; i < out.size(); ++i) {
    const WindowDim &w = window[i];
    AffineExpr pos = dim(i, context) * w.stride +
                     sym(i, context) * w.windowDilation - w.paddingLow;
    symbols.push_back(w.size);
    int64_t base = w.baseDilation;
    results.push_back(base == 1 ? pos : pos.floorDiv(base));
    constraints.push_back({pos, Interval(0, ((*in)[i] - 1) * base)});
    if (base > 1)
      constraints.push_back({pos % base, Interval(0, 0)});
  }
  IndexingMap map = makeMap(context, out, symbols, results);
  for (const auto &[expr, bounds] : constraints)
    map.addConstraint(expr, bounds);
  HloInstructionIndexing r;
  for (int64_t k = 0; k < n; ++k)
    r.addMap(k, map);
  for (int64_t k = n; k < 2 * n; ++k)
    r.addMap(k, scalarMap(context, out));
  return r;
}

/// Operand index d + rt, rt the start index clamped to [0, in - out].
Expected<HloInstructionIndexing> dynamicSlice(const HloInstruction &inst,
                                              const Dims &out,
                                              mlir::MLIRContext *context) {
  Expected<Dims> in = operandDims(inst, 0);
  if (!in)
    return in.takeError();
  if (in->size() != out.size() ||
      inst.operandCount() != static_cast<int64_t>(out.size()) + 1)
    return unsupported(inst, "expected one scalar start index per dim");
  Exprs results;
  std::vector<IndexingVariable> dimVars, rtVars;
  for (size_t i = 0; i < out.size(); ++i) {
    results.push_back(dim(i, context) + sym(i, context));
    dimVars.emplace_back(0, out[i] - 1);
    rtVars.emplace_back(0, (*in)[i] - out[i]);
  }
  HloInstructionIndexing r;
  r.addMap(0,
           IndexingMap(AffineMap::get(out.size(), out.size(), results, context),
                       dimVars, {}, rtVars));
  for (int64_t k = 1; k < inst.operandCount(); ++k)
    r.addMap(k, scalarMap(context, out));
  return r;
}

/// The base is read everywhere (a superset: the updated window is not);
/// the update at d - rt inside the update's shape.
Expected<HloInstructionIndexing>
dynamicUpdateSlice(const HloInstruction &inst, const Dims &out,
                   mlir::MLIRContext *context) {
  Expected<Dims> update = operandDims(inst, 1);
  if (!update)
    return update.takeError();
  if (update->size() != out.size() ||
      inst.operandCount() != static_cast<int64_t>(out.size()) + 2)
    return unsupported(inst, "expected one scalar start index per dim");
  Exprs results;
  std::vector<IndexingVariable> dimVars, rtVars;
  for (size_t i = 0; i < out.size(); ++i) {
    results.push_back(dim(i, context) - sym(i, context));
    dimVars.emplace_back(0, out[i] - 1);
    rtVars.emplace_back(0, out[i] - (*update)[i]);
  }
  IndexingMap map(AffineMap::get(out.size(), out.size(), results, context),
                  dimVars, {}, rtVars);
  for (size_t i = 0; i < out.size(); ++i)
    map.addConstraint(results[i], Interval(0, (*update)[i] - 1));
  HloInstructionIndexing r;
  r.addMap(0, IndexingMap::identity(context, out));
  r.addMap(1, std::move(map));
  for (int64_t k = 2; k < inst.operandCount(); ++k)
    r.addMap(k, scalarMap(context, out));
  return r;
}

/// Output dims: batch, lhs free, rhs free; contracting dims are range
/// variables shared by both operands.
Expected<HloInstructionIndexing>
dot(const HloInstruction &inst, const Dims &out, mlir::MLIRContext *context) {
  const DotDimensionNumbers &dn = inst.attributes().dotDimensionNumbers;
  Expected<Dims> lhs = operandDims(inst, 0);
  if (!lhs)
    return lhs.takeError();
  Expected<Dims> rhs = operandDims(inst, 1);
  if (!rhs)
    return rhs.takeError();
  if (dn.lhsBatchDims.size() != dn.rhsBatchDims.size() ||
      dn.lhsContractingDims.size() != dn.rhsContractingDims.size())
    return unsupported(inst, "dimension numbers do not pair up");
  Dims symbols;
  for (int64_t d : dn.lhsContractingDims) {
    if (d < 0 || d >= static_cast<int64_t>(lhs->size()))
      return unsupported(inst, "contracting dim out of range");
    symbols.push_back((*lhs)[d]);
  }
  unsigned next = dn.lhsBatchDims.size();
  auto side = [&](const Dims &dims, const std::vector<int64_t> &batch,
                  const std::vector<int64_t> &contracting) {
    Exprs results(dims.size());
    for (size_t b = 0; b < batch.size(); ++b)
      if (batch[b] >= 0 && batch[b] < static_cast<int64_t>(dims.size()))
        results[batch[b]] = dim(b, context);
    for (size_t c = 0; c < contracting.size(); ++c)
      if (contracting[c] >= 0 &&
          contracting[c] < static_cast<int64_t>(dims.size()))
        results[contracting[c]] = sym(c, context);
    for (size_t j = 0; j < dims.size(); ++j)
      if (!results[j])
        results[j] = dim(next++, context);
    return results;
  };
  Exprs lhsResults = side(*lhs, dn.lhsBatchDims, dn.lhsContractingDims);
  Exprs rhsResults = side(*rhs, dn.rhsBatchDims, dn.rhsContractingDims);
  if (next != out.size())
    return unsupported(inst, "the output rank does not match the dimension "
                             "numbers");
  HloInstructionIndexing r;
  r.addMap(0, makeMap(context, out, symbols, lhsResults));
  r.addMap(1, makeMap(context, out, symbols, rhsResults));
  return r;
}

/// copy and get-tuple-element: the identity; tuple: the identity to the
/// operand of the output; bitcast: through the buffer.
Expected<HloInstructionIndexing> oneOperandMap(const HloInstruction &inst,
                                               int64_t outputId,
                                               const Shape &shape,
                                               mlir::MLIRContext *context) {
  HloInstructionIndexing r;
  if (inst.opcode() == HloOpcode::Bitcast) {
    Expected<IndexingMap> map =
        bitcastMap(shape, inst.operand(0)->shape(), context);
    if (!map)
      return unsupported(inst, map.error().message);
    r.addMap(0, std::move(*map));
    return r;
  }
  bool tuple = inst.opcode() == HloOpcode::Tuple;
  r.maps.resize(inst.operandCount());
  r.addMap(tuple ? outputId : 0, IndexingMap::identity(context, shape.dims));
  return r;
}

/// `{1,2}` of a verbatim attribute; nullopt when absent or malformed
/// (`required`) or an empty list when absent and optional.
std::optional<Dims> rawIntList(const HloInstruction &inst, const char *key,
                               bool required) {
  const std::string *text = inst.rawAttribute(key);
  if (!text)
    return required ? std::nullopt : std::optional<Dims>(Dims());
  Dims values;
  size_t i = 0, n = text->size();
  if (n < 2 || (*text)[0] != '{' || (*text)[n - 1] != '}')
    return std::nullopt;
  std::string body = text->substr(1, n - 2);
  while (i < body.size()) {
    size_t end = body.find(',', i);
    std::string item =
        body.substr(i, end == std::string::npos ? std::string::npos : end - i);
    if (item.empty() || item.size() > 18 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    values.push_back(std::stoll(item));
    if (end == std::string::npos)
      break;
    i = end + 1;
  }
  return values;
}

/// gather, as XLA's analysis gives it: operand dim d is read at the start
/// index of its start_index_map entry (a runtime variable over the clamped
/// range [0, size - slice_size]) plus the output's offset dim that walks
/// it; batching dims at the output's batch dim of the matching indices dim.
/// The indices: the output's batch dims and every component of the index
/// vector (a range variable). Malformed dimension numbers (the verifier
/// does not check gather) give unknown indexing.
Expected<HloInstructionIndexing> gather(const HloInstruction &inst,
                                        const Dims &out,
                                        mlir::MLIRContext *context) {
  HloInstructionIndexing unknown;
  unknown.markUnknown(0);
  unknown.markUnknown(1);
  if (inst.operandCount() != 2)
    return unknown;
  Expected<Dims> in = operandDims(inst, 0);
  Expected<Dims> indices = operandDims(inst, 1);
  std::optional<Dims> offsetDims = rawIntList(inst, "offset_dims", false);
  std::optional<Dims> collapsed =
      rawIntList(inst, "collapsed_slice_dims", false);
  std::optional<Dims> startMap = rawIntList(inst, "start_index_map", false);
  std::optional<Dims> batching =
      rawIntList(inst, "operand_batching_dims", false);
  std::optional<Dims> indicesBatching =
      rawIntList(inst, "start_indices_batching_dims", false);
  std::optional<Dims> sizes = rawIntList(inst, "slice_sizes", true);
  if (!in || !indices || !offsetDims || !collapsed || !startMap || !batching ||
      !indicesBatching || !sizes)
    return unknown;
  const std::string *vectorText = inst.rawAttribute("index_vector_dim");
  if (!vectorText || vectorText->empty() || vectorText->size() > 3 ||
      vectorText->find_first_not_of("0123456789") != std::string::npos)
    return unknown;
  int64_t vectorDim = std::stoll(*vectorText);
  int64_t rank = static_cast<int64_t>(in->size());
  int64_t indicesRank = static_cast<int64_t>(indices->size());
  if (vectorDim > indicesRank || static_cast<int64_t>(sizes->size()) != rank ||
      batching->size() != indicesBatching->size())
    return unknown;
  int64_t vectorSize = vectorDim == indicesRank ? 1 : (*indices)[vectorDim];
  if (static_cast<int64_t>(startMap->size()) != vectorSize)
    return unknown;
  auto inRange = [](const Dims &dims, int64_t bound) {
    for (int64_t d : dims)
      if (d < 0 || d >= bound)
        return false;
    return true;
  };
  if (!inRange(*collapsed, rank) || !inRange(*startMap, rank) ||
      !inRange(*batching, rank) || !inRange(*indicesBatching, indicesRank))
    return unknown;
  for (int64_t d = 0; d < rank; ++d)
    if ((*sizes)[d] < 0 || (*sizes)[d] > (*in)[d])
      return unknown;
  // Output dims: offset dims walk the window dims, the others the indices'
  // batch dims in order.
  Dims window;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(*collapsed, d) && !llvm::is_contained(*batching, d))
      window.push_back(d);
  int64_t outRank = static_cast<int64_t>(out.size());
  if (window.size() != offsetDims->size() || !inRange(*offsetDims, outRank) ||
      outRank != static_cast<int64_t>(window.size()) + indicesRank -
                     (vectorDim < indicesRank ? 1 : 0))
    return unknown;
  Dims batchPositions;
  for (int64_t d = 0; d < outRank; ++d)
    if (!llvm::is_contained(*offsetDims, d))
      batchPositions.push_back(d);
  // The output dim of indices dim j (j != vectorDim).
  auto outputDimOfIndices = [&](int64_t j) {
    return batchPositions[j < vectorDim ? j : j - 1];
  };
  Exprs operandResults(rank, cst(0, context));
  std::vector<IndexingVariable> dimVars, rtVars;
  for (int64_t d = 0; d < outRank; ++d)
    dimVars.emplace_back(0, out[d] - 1);
  for (size_t k = 0; k < startMap->size(); ++k) {
    int64_t d = (*startMap)[k];
    operandResults[d] = sym(k, context);
    rtVars.emplace_back(0, (*in)[d] - (*sizes)[d]);
  }
  for (size_t i = 0; i < batching->size(); ++i) {
    if ((*indicesBatching)[i] == vectorDim ||
        llvm::is_contained(*startMap, (*batching)[i]))
      return unknown;
    operandResults[(*batching)[i]] =
        dim(outputDimOfIndices((*indicesBatching)[i]), context);
  }
  for (size_t w = 0; w < window.size(); ++w)
    operandResults[window[w]] =
        operandResults[window[w]] + dim((*offsetDims)[w], context);
  HloInstructionIndexing r;
  r.addMap(0, IndexingMap(AffineMap::get(outRank, rtVars.size(), operandResults,
                                         context),
                          dimVars, {}, rtVars));
  Exprs indexResults;
  Dims rangeSizes;
  for (int64_t j = 0; j < indicesRank; ++j) {
    if (j == vectorDim) {
      indexResults.push_back(sym(0, context));
      rangeSizes.push_back(vectorSize);
    } else {
      indexResults.push_back(dim(outputDimOfIndices(j), context));
    }
  }
  r.addMap(1, makeMap(context, out, rangeSizes, indexResults));
  return r;
}

/// sort: output element (d...) of any output may come from any element of
/// its line along the sorted dim, in every operand (the comparator sees
/// them all): the sorted dim is a range variable.
Expected<HloInstructionIndexing>
sort(const HloInstruction &inst, const Dims &out, mlir::MLIRContext *context) {
  std::optional<Dims> dims = rawIntList(inst, "dimensions", true);
  HloInstructionIndexing r;
  for (int64_t k = 0; k < inst.operandCount(); ++k) {
    Expected<Dims> in = operandDims(inst, k);
    if (!dims || dims->size() != 1 || !in || *in != out || (*dims)[0] < 0 ||
        (*dims)[0] >= static_cast<int64_t>(out.size())) {
      for (int64_t j = 0; j < inst.operandCount(); ++j)
        r.markUnknown(j);
      return r;
    }
    Exprs results = dimExprs(out.size(), context);
    results[(*dims)[0]] = sym(0, context);
    r.addMap(k, makeMap(context, out, {out[(*dims)[0]]}, results));
  }
  return r;
}

/// Where dim_labels puts the two special dims (b/f or i/o) and the spatial
/// ones of one operand; false when malformed.
bool convolutionLabels(std::string_view text, char a, char b, int64_t &first,
                       int64_t &second, Dims &spatial) {
  first = second = -1;
  spatial.assign(text.size() >= 2 ? text.size() - 2 : 0, -1);
  for (size_t pos = 0; pos < text.size(); ++pos) {
    char c = text[pos];
    int64_t d = static_cast<int64_t>(pos);
    if (c == a && first < 0)
      first = d;
    else if (c == b && second < 0)
      second = d;
    else if (c >= '0' && c - '0' < static_cast<int>(spatial.size()) &&
             spatial[c - '0'] < 0)
      spatial[c - '0'] = d;
    else
      return false;
  }
  return first >= 0 && second >= 0 && !llvm::is_contained(spatial, int64_t(-1));
}

/// convolution: output (b, f, y...) reads the lhs at batch b (plus the
/// batch group of f), feature c of f's feature group (c a range variable
/// over the kernel's input features) and, per spatial dim, position
/// (y * stride + k * rhs_dilate - pad_low) / lhs_dilate inside the input
/// and on a multiple of lhs_dilate (k a range variable over the kernel); the
/// rhs at (o = f, i = c, k or size-1-k reversed) under the same
/// constraints. Malformed attributes give unknown indexing.
Expected<HloInstructionIndexing> convolution(const HloInstruction &inst,
                                             const Dims &out,
                                             mlir::MLIRContext *context) {
  HloInstructionIndexing unknown;
  unknown.markUnknown(0);
  unknown.markUnknown(1);
  Expected<Dims> lhs = operandDims(inst, 0);
  Expected<Dims> rhs = operandDims(inst, 1);
  const std::string *labels = inst.rawAttribute("dim_labels");
  if (inst.operandCount() != 2 || !lhs || !rhs || !labels)
    return unknown;
  std::string_view all = *labels;
  size_t underscore = all.find('_'), arrow = all.find("->");
  if (underscore == std::string_view::npos || arrow == std::string_view::npos ||
      arrow < underscore)
    return unknown;
  int64_t lb, lf, ri, ro, ob, of;
  Dims ls, rs, os;
  if (!convolutionLabels(all.substr(0, underscore), 'b', 'f', lb, lf, ls) ||
      !convolutionLabels(all.substr(underscore + 1, arrow - underscore - 1),
                         'i', 'o', ri, ro, rs) ||
      !convolutionLabels(all.substr(arrow + 2), 'b', 'f', ob, of, os))
    return unknown;
  size_t spatial = ls.size();
  if (rs.size() != spatial || os.size() != spatial ||
      lhs->size() != spatial + 2 || rhs->size() != spatial + 2 ||
      out.size() != spatial + 2)
    return unknown;
  std::vector<WindowDim> window(spatial);
  if (const std::string *text = inst.rawAttribute("window")) {
    Expected<std::vector<WindowDim>> parsed = parseWindow(*text);
    if (!parsed || parsed->size() != spatial)
      return unknown;
    window = *parsed;
  }
  auto count = [&](const char *key) -> int64_t {
    const std::string *text = inst.rawAttribute(key);
    if (!text)
      return 1;
    if (text->empty() || text->size() > 9 ||
        text->find_first_not_of("0123456789") != std::string::npos)
      return -1;
    return std::stoll(*text);
  };
  int64_t g = count("feature_group_count"), bg = count("batch_group_count");
  int64_t batch = (*lhs)[lb], features = (*lhs)[lf];
  int64_t kernelIn = (*rhs)[ri], kernelOut = (*rhs)[ro];
  if (g < 1 || bg < 1 || kernelIn < 1 || kernelOut < 1 ||
      features != kernelIn * g || kernelOut % g != 0 || kernelOut % bg != 0 ||
      batch % bg != 0 || out[ob] != batch / bg || out[of] != kernelOut)
    return unknown;
  for (size_t s = 0; s < spatial; ++s) {
    const WindowDim &w = window[s];
    int64_t in = (*lhs)[ls[s]], k = w.size;
    if (k != (*rhs)[rs[s]] || w.stride < 1 || w.baseDilation < 1 ||
        w.windowDilation < 1 || in < 1 || k < 1 || in > (int64_t(1) << 31) ||
        k > (int64_t(1) << 31) || w.baseDilation > (int64_t(1) << 31) ||
        w.windowDilation > (int64_t(1) << 31) ||
        std::abs(w.paddingLow) > (int64_t(1) << 40) ||
        std::abs(w.paddingHigh) > (int64_t(1) << 40))
      return unknown;
    // The declared output must be the one the window gives.
    int64_t padded =
        (in - 1) * w.baseDilation + 1 + w.paddingLow + w.paddingHigh;
    int64_t dilatedK = (k - 1) * w.windowDilation + 1;
    int64_t size = padded < dilatedK ? 0 : (padded - dilatedK) / w.stride + 1;
    if (out[os[s]] != size)
      return unknown;
  }
  // Symbols: one range variable per spatial kernel dim, then the input
  // feature within the group.
  Dims symbols;
  for (size_t s = 0; s < spatial; ++s)
    symbols.push_back((*rhs)[rs[s]]);
  symbols.push_back(kernelIn);
  AffineExpr c = sym(spatial, context);
  AffineExpr f = dim(of, context), b = dim(ob, context);
  Exprs lhsResults(spatial + 2), rhsResults(spatial + 2);
  lhsResults[lb] = bg == 1 ? b : b + f.floorDiv(kernelOut / bg) * (batch / bg);
  lhsResults[lf] = g == 1 ? c : f.floorDiv(kernelOut / g) * kernelIn + c;
  rhsResults[ri] = c;
  rhsResults[ro] = f;
  std::vector<std::pair<AffineExpr, Interval>> constraints;
  for (size_t s = 0; s < spatial; ++s) {
    const WindowDim &w = window[s];
    AffineExpr k = sym(s, context);
    AffineExpr pos =
        dim(os[s], context) * w.stride + k * w.windowDilation - w.paddingLow;
    int64_t base = w.baseDilation;
    lhsResults[ls[s]] = base == 1 ? pos : pos.floorDiv(base);
    rhsResults[rs[s]] = w.reversal ? (w.size - 1) - k : k;
    constraints.push_back({pos, Interval(0, ((*lhs)[ls[s]] - 1) * base)});
    if (base > 1)
      constraints.push_back({pos % base, Interval(0, 0)});
  }
  IndexingMap lhsMap = makeMap(context, out, symbols, lhsResults);
  IndexingMap rhsMap = makeMap(context, out, symbols, rhsResults);
  for (const auto &[expr, bounds] : constraints) {
    lhsMap.addConstraint(expr, bounds);
    rhsMap.addConstraint(expr, bounds);
  }
  HloInstructionIndexing r;
  r.addMap(0, std::move(lhsMap));
  r.addMap(1, std::move(rhsMap));
  return r;
}

} // namespace

Expected<HloInstructionIndexing> outputToInput(const HloInstruction &inst,
                                               int64_t outputId,
                                               mlir::MLIRContext *context) {
  const Shape *shape = getOutputShape(inst, outputId);
  if (!shape->dynamicDims.empty())
    return unsupported(inst, "dynamic shapes have no indexing maps");
  const Dims &out = shape->dims;
  HloOpcode op = inst.opcode();
  if (hasElementwiseMaps(op))
    return elementwise(inst, out, context);
  // opt-barrier and the Sharding custom-call: output j is (element j of)
  // the operand, as for get-tuple-element.
  if (inst.passesValueThrough()) {
    HloInstructionIndexing r;
    r.addMap(0, IndexingMap::identity(context, out));
    return r;
  }
  switch (op) {
  case HloOpcode::Parameter:
  case HloOpcode::Constant:
  case HloOpcode::Iota:
    return HloInstructionIndexing();
  case HloOpcode::Broadcast:
    return broadcast(inst, out, context);
  case HloOpcode::Transpose:
    return transpose(inst, out, context);
  case HloOpcode::Reshape:
    return reshape(inst, out, context);
  case HloOpcode::Slice:
    return slice(inst, out, context);
  case HloOpcode::Reverse:
    return reverse(inst, out, context);
  case HloOpcode::Pad:
    return pad(inst, out, context);
  case HloOpcode::Concatenate:
    return concatenate(inst, out, context);
  case HloOpcode::Reduce:
    return reduce(inst, out, context);
  case HloOpcode::ReduceWindow:
    return reduceWindow(inst, out, context);
  case HloOpcode::DynamicSlice:
    return dynamicSlice(inst, out, context);
  case HloOpcode::DynamicUpdateSlice:
    return dynamicUpdateSlice(inst, out, context);
  case HloOpcode::Dot:
    return dot(inst, out, context);
  case HloOpcode::Gather:
    return gather(inst, out, context);
  case HloOpcode::Sort:
    return sort(inst, out, context);
  case HloOpcode::Scatter:
    return scatterOutputToInput(inst, context);
  case HloOpcode::Convolution:
    return convolution(inst, out, context);
  case HloOpcode::Copy:
  case HloOpcode::Bitcast:
  case HloOpcode::Tuple:
  case HloOpcode::GetTupleElement:
    return oneOperandMap(inst, outputId, *shape, context);
  default: {
    // XLA's `unknown indexing`: any operand element may be read.
    HloInstructionIndexing r;
    for (int64_t k = 0; k < inst.operandCount(); ++k)
      r.markUnknown(static_cast<size_t>(k));
    return r;
  }
  }
}

} // namespace hlo_indexing
} // namespace tessel
