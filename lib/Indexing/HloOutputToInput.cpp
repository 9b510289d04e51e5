//===- HloOutputToInput.cpp - Output-to-input maps of single HLO ops ------===//
#include "HloIndexingOps.h"

#include "mlir/IR/AffineMap.h"

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
