//===- EvaluatorGather.cpp - gather and scatter with XLA's semantics ------===//
//
// Both ops walk an index space and map each point to an operand position:
//
//   gather: output index -> batch dims (not in offset_dims) pick a start
//           vector from start_indices; start_index_map spreads it over
//           operand dims, clamped so the slice fits; offset dims add the
//           position inside the slice (collapsed and batching dims skipped).
//   scatter: update index -> the same with update_window_dims and
//           inserted_window_dims; an update whose window does not fit the
//           operand is skipped whole, the others are combined in row-major
//           order of the updates with to_apply.
//
// operand_batching_dims / input_batching_dims take their index from the
// matching start_indices dim. indices_are_sorted and unique_indices are
// hints: the results never depend on them.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorOps.h"
#include "RawAttributes.h"

#include <algorithm>
#include <cstring>

namespace tessel::eval {
namespace {

bool nextIndex(std::vector<int64_t> &index, const std::vector<int64_t> &dims) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d])
      return true;
    index[d] = 0;
  }
  return false;
}

bool contains(const std::vector<int64_t> &v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string joinDims(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

/// An index element as a signed value; unsigned values above INT64_MAX
/// saturate (they are out of range either way).
int64_t indexValue(const Literal &indices, int64_t i) {
  if (isUnsignedInteger(indices.elementType()) &&
      static_cast<int64_t>(indices.getBits(i)) < 0)
    return INT64_MAX;
  return indices.getInt(i);
}

/// What gather and scatter share: how a point of the batch (scatter) space
/// finds its start vector in the indices.
struct IndexSpace {
  int64_t indexVectorDim = 0;
  /// Number of components of a start vector.
  int64_t vectorSize = 0;
  /// Dims of the indices without the index vector dim: the batch space.
  std::vector<int64_t> batchDims;
  std::vector<int64_t> indicesDims;

  Status init(const Shape &indices, int64_t vectorDim) {
    if (indices.isTuple() || !isInteger(indices.elementType))
      return Error("the indices are " + indices.toStringWithoutLayout() +
                   ", expected an integer array");
    indexVectorDim = vectorDim;
    indicesDims = indices.dims;
    if (vectorDim < 0 || vectorDim > indices.rank())
      return Error("index_vector_dim=" + std::to_string(vectorDim) +
                   " is out of range, expected 0.." +
                   std::to_string(indices.rank()));
    vectorSize = vectorDim == indices.rank() ? 1 : indices.dims[vectorDim];
    for (int64_t d = 0; d < indices.rank(); ++d)
      if (d != vectorDim)
        batchDims.push_back(indices.dims[d]);
    return {};
  }
};

/// Component k of the start vector at batch point `batch`.
int64_t component(const Literal &indices, int64_t indexVectorDim,
                  const std::vector<int64_t> &batch, int64_t k,
                  std::vector<int64_t> &scratch) {
  scratch.clear();
  for (int64_t d = 0, b = 0; d < indices.rank(); ++d)
    scratch.push_back(d == indexVectorDim ? k : batch[b++]);
  return indexValue(indices, indices.linearIndex(scratch));
}

/// Checks the batching dims: pairs of operand and indices dims of equal
/// sizes.
Status checkBatching(const std::vector<int64_t> &operandDims,
                     const std::vector<int64_t> &indicesDims,
                     const Shape &operand, const IndexSpace &space,
                     const char *operandWhat, const char *indicesWhat) {
  if (Status e = checkDimList(operandDims, operand.rank(), operandWhat); !e)
    return e;
  int64_t indicesRank = static_cast<int64_t>(space.indicesDims.size());
  if (Status e = checkDimList(indicesDims, indicesRank, indicesWhat); !e)
    return e;
  if (operandDims.size() != indicesDims.size())
    return Error(std::string(operandWhat) + " and " + indicesWhat +
                 " differ in length");
  for (size_t i = 0; i < operandDims.size(); ++i) {
    if (indicesDims[i] == space.indexVectorDim)
      return Error(std::string(indicesWhat) + " " +
                   std::to_string(indicesDims[i]) + " is index_vector_dim");
    if (operand.dims[operandDims[i]] != space.indicesDims[indicesDims[i]])
      return Error(std::string(operandWhat) + " " +
                   std::to_string(operandDims[i]) + " has size " +
                   std::to_string(operand.dims[operandDims[i]]) +
                   ", the indices' dim " + std::to_string(indicesDims[i]) +
                   " " + std::to_string(space.indicesDims[indicesDims[i]]));
  }
  return {};
}

std::string joinInts(const std::vector<int64_t> &values) {
  std::string s = "{";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? "," : "") + std::to_string(values[i]);
  return s + "}";
}

Status checkSorted(const std::vector<int64_t> &dims, const char *what) {
  if (!std::is_sorted(dims.begin(), dims.end()))
    return Error(std::string(what) + "=" + joinInts(dims) + " must be sorted");
  return {};
}

#define TRY_LIST(var, key)                                                     \
  Expected<std::vector<int64_t>> var##OrError = intListAttribute(inst, key);   \
  if (!var##OrError)                                                           \
    return var##OrError.takeError();                                           \
  const std::vector<int64_t> &var = *var##OrError;

#define TRY_CHECK(check)                                                       \
  if (Status checked = (check); !checked)                                      \
    return checked.takeError();

} // namespace

Expected<GatherDims> gatherDims(const HloInstruction &inst,
                                const Shape &operand, const Shape &indices) {
  TRY_LIST(offsetDims, "offset_dims")
  TRY_LIST(collapsed, "collapsed_slice_dims")
  TRY_LIST(startIndexMap, "start_index_map")
  TRY_LIST(operandBatching, "operand_batching_dims")
  TRY_LIST(indicesBatching, "start_indices_batching_dims")
  Expected<std::vector<int64_t>> sizesOrError =
      intListAttribute(inst, "slice_sizes", /*required=*/true);
  if (!sizesOrError)
    return sizesOrError.takeError();
  const std::vector<int64_t> &sliceSizes = *sizesOrError;
  Expected<int64_t> vectorDim = intAttribute(inst, "index_vector_dim");
  if (!vectorDim)
    return vectorDim.takeError();
  if (operand.isTuple())
    return Error("the operand is " + operand.toStringWithoutLayout() +
                 ", expected an array");
  IndexSpace space;
  TRY_CHECK(space.init(indices, *vectorDim))
  int64_t rank = operand.rank();
  if (static_cast<int64_t>(sliceSizes.size()) != rank)
    return Error("slice_sizes has " + std::to_string(sliceSizes.size()) +
                 " sizes, expected one per operand dim (" +
                 std::to_string(rank) + ")");
  for (int64_t d = 0; d < rank; ++d)
    if (sliceSizes[d] < 0 || sliceSizes[d] > operand.dims[d])
      return Error("slice size " + std::to_string(sliceSizes[d]) + " of dim " +
                   std::to_string(d) + " does not fit size " +
                   std::to_string(operand.dims[d]));
  TRY_CHECK(checkDimList(collapsed, rank, "collapsed_slice_dims"))
  TRY_CHECK(checkSorted(collapsed, "collapsed_slice_dims"))
  TRY_CHECK(checkDimList(startIndexMap, rank, "start_index_map"))
  TRY_CHECK(checkBatching(operandBatching, indicesBatching, operand, space,
                          "operand_batching_dims",
                          "start_indices_batching_dims"))
  if (static_cast<int64_t>(startIndexMap.size()) != space.vectorSize)
    return Error("start_index_map has " + std::to_string(startIndexMap.size()) +
                 " dims, the index vectors " +
                 std::to_string(space.vectorSize) + " components");
  for (int64_t d : collapsed)
    if (contains(operandBatching, d) || sliceSizes[d] != 1)
      return Error("collapsed dim " + std::to_string(d) +
                   " must have slice size 1 and not be a batching dim");
  for (int64_t d : operandBatching)
    if (sliceSizes[d] != 1 || contains(startIndexMap, d))
      return Error("batching dim " + std::to_string(d) +
                   " must have slice size 1 and not be in start_index_map");
  GatherDims g;
  g.offsetDims = offsetDims;
  g.startIndexMap = startIndexMap;
  g.operandBatching = operandBatching;
  g.indicesBatching = indicesBatching;
  g.sliceSizes = sliceSizes;
  g.indexVectorDim = *vectorDim;
  // The operand dims the offset dims walk, in order.
  for (int64_t d = 0; d < rank; ++d)
    if (!contains(collapsed, d) && !contains(operandBatching, d))
      g.windowDims.push_back(d);
  int64_t outRank =
      static_cast<int64_t>(space.batchDims.size() + g.windowDims.size());
  if (g.windowDims.size() != offsetDims.size())
    return Error("offset_dims has " + std::to_string(offsetDims.size()) +
                 " dims, expected " + std::to_string(g.windowDims.size()) +
                 " (operand dims neither collapsed nor batching)");
  TRY_CHECK(checkDimList(offsetDims, outRank, "offset_dims"))
  TRY_CHECK(checkSorted(offsetDims, "offset_dims"))
  g.outDims.resize(outRank);
  for (int64_t d = 0, b = 0, w = 0; d < outRank; ++d) {
    if (contains(offsetDims, d)) {
      g.outDims[d] = sliceSizes[g.windowDims[w++]];
    } else {
      g.batchPositions.push_back(d);
      g.outDims[d] = space.batchDims[b++];
    }
  }
  return g;
}

Expected<Literal> gather(const HloInstruction &inst, const Literal &operand,
                         const Literal &indices) {
  Expected<GatherDims> g = gatherDims(inst, operand.shape(), indices.shape());
  if (!g)
    return g.takeError();
  const std::vector<int64_t> &outDims = g->outDims;
  const Shape &declared = inst.shape();
  if (declared.isTuple() || declared.dims != outDims ||
      declared.elementType != operand.elementType())
    return Error("declared shape " + declared.toStringWithoutLayout() +
                 " does not match the inferred " +
                 std::string(primitiveTypeName(operand.elementType())) +
                 joinDims(outDims));
  Literal out(Shape(operand.elementType(), outDims));
  int64_t rank = operand.rank();
  int64_t outRank = static_cast<int64_t>(outDims.size());
  std::vector<int64_t> index(outRank, 0), batch(g->batchPositions.size());
  std::vector<int64_t> from(rank), scratch;
  int64_t width = out.elementBytes();
  for (int64_t i = 0; i < out.elementCount(); ++i, nextIndex(index, outDims)) {
    for (size_t b = 0; b < g->batchPositions.size(); ++b)
      batch[b] = index[g->batchPositions[b]];
    std::fill(from.begin(), from.end(), 0);
    for (size_t k = 0; k < g->startIndexMap.size(); ++k) {
      int64_t d = g->startIndexMap[k];
      from[d] = std::clamp<int64_t>(
          component(indices, g->indexVectorDim, batch, k, scratch), 0,
          operand.dims()[d] - g->sliceSizes[d]);
    }
    for (size_t k = 0; k < g->operandBatching.size(); ++k) {
      int64_t dim = g->indicesBatching[k];
      from[g->operandBatching[k]] =
          batch[dim < g->indexVectorDim ? dim : dim - 1];
    }
    for (size_t w = 0; w < g->windowDims.size(); ++w)
      from[g->windowDims[w]] += index[g->offsetDims[w]];
    std::memcpy(out.data() + i * width,
                operand.data() + operand.linearIndex(from) * width, width);
  }
  return out;
}

Expected<ScatterDims> scatterDims(const HloInstruction &inst,
                                  const std::vector<const Shape *> &operands) {
  if (operands.size() < 3 || operands.size() % 2 == 0)
    return Error("scatter takes n operands, the indices and n updates, "
                 "found " +
                 std::to_string(operands.size()) + " operands");
  size_t n = operands.size() / 2;
  const Shape &first = *operands[0];
  const Shape &indices = *operands[n];
  TRY_LIST(updateWindowDims, "update_window_dims")
  TRY_LIST(inserted, "inserted_window_dims")
  TRY_LIST(toOperand, "scatter_dims_to_operand_dims")
  TRY_LIST(inputBatching, "input_batching_dims")
  TRY_LIST(indicesBatching, "scatter_indices_batching_dims")
  Expected<int64_t> vectorDim = intAttribute(inst, "index_vector_dim");
  if (!vectorDim)
    return vectorDim.takeError();
  IndexSpace space;
  TRY_CHECK(space.init(indices, *vectorDim))
  for (size_t k = 0; k < n; ++k) {
    if (operands[k]->isTuple() || operands[k]->dims != first.dims)
      return Error("scatter operand " + std::to_string(k) + " " +
                   operands[k]->toStringWithoutLayout() +
                   " differs in shape from operand 0 " +
                   first.toStringWithoutLayout());
    const Shape &updates = *operands[n + 1 + k];
    if (updates.isTuple() || updates.elementType != operands[k]->elementType ||
        updates.dims != operands[n + 1]->dims)
      return Error("scatter update " + std::to_string(k) + " is " +
                   updates.toStringWithoutLayout() +
                   ", expected the element type of its operand and the "
                   "dims of update 0");
  }
  const Shape &updates0 = *operands[n + 1];
  int64_t rank = first.rank();
  TRY_CHECK(checkDimList(inserted, rank, "inserted_window_dims"))
  TRY_CHECK(checkSorted(inserted, "inserted_window_dims"))
  TRY_CHECK(checkDimList(toOperand, rank, "scatter_dims_to_operand_dims"))
  TRY_CHECK(checkBatching(inputBatching, indicesBatching, first, space,
                          "input_batching_dims",
                          "scatter_indices_batching_dims"))
  TRY_CHECK(
      checkDimList(updateWindowDims, updates0.rank(), "update_window_dims"))
  TRY_CHECK(checkSorted(updateWindowDims, "update_window_dims"))
  if (static_cast<int64_t>(toOperand.size()) != space.vectorSize)
    return Error("scatter_dims_to_operand_dims has " +
                 std::to_string(toOperand.size()) +
                 " dims, the index vectors " +
                 std::to_string(space.vectorSize) + " components");
  for (int64_t d : inputBatching)
    if (contains(inserted, d) || contains(toOperand, d))
      return Error("batching dim " + std::to_string(d) +
                   " must not be inserted or scattered to");
  ScatterDims s;
  s.updateWindowDims = updateWindowDims;
  s.toOperand = toOperand;
  s.inputBatching = inputBatching;
  s.indicesBatching = indicesBatching;
  s.indexVectorDim = *vectorDim;
  for (int64_t d = 0; d < rank; ++d)
    if (!contains(inserted, d) && !contains(inputBatching, d))
      s.windowDims.push_back(d);
  if (s.windowDims.size() != updateWindowDims.size())
    return Error("update_window_dims has " +
                 std::to_string(updateWindowDims.size()) + " dims, expected " +
                 std::to_string(s.windowDims.size()) +
                 " (operand dims neither inserted nor batching)");
  // The update's scatter dims must be the batch space of the indices.
  for (int64_t d = 0; d < updates0.rank(); ++d)
    if (!contains(updateWindowDims, d))
      s.scatterPositions.push_back(d);
  std::vector<int64_t> scatterSizes;
  for (int64_t d : s.scatterPositions)
    scatterSizes.push_back(updates0.dims[d]);
  if (scatterSizes != space.batchDims)
    return Error("the updates' scatter dims " + joinDims(scatterSizes) +
                 " do not match the indices' batch dims " +
                 joinDims(space.batchDims));
  s.windowSizes.assign(rank, 1);
  for (size_t w = 0; w < s.windowDims.size(); ++w) {
    int64_t size = updates0.dims[updateWindowDims[w]];
    if (size > first.dims[s.windowDims[w]])
      return Error("update window dim " + std::to_string(updateWindowDims[w]) +
                   " of size " + std::to_string(size) +
                   " does not fit operand dim " +
                   std::to_string(s.windowDims[w]));
    s.windowSizes[s.windowDims[w]] = size;
  }
  return s;
}

Expected<Literal> scatter(const HloInstruction &inst,
                          const std::vector<const Literal *> &operands,
                          const ScatterCombiner &combine) {
  std::vector<const Shape *> shapes;
  for (const Literal *operand : operands)
    shapes.push_back(&operand->shape());
  Expected<ScatterDims> s = scatterDims(inst, shapes);
  if (!s)
    return s.takeError();
  size_t n = operands.size() / 2;
  const Literal &first = *operands[0];
  const Literal &indices = *operands[n];
  const Literal &updates0 = *operands[n + 1];
  int64_t rank = first.rank();
  std::vector<Literal> results;
  for (size_t k = 0; k < n; ++k) {
    results.push_back(*operands[k]);
    results.back().setLayout(std::nullopt);
  }
  std::vector<int64_t> index(updates0.rank(), 0),
      batch(s->scatterPositions.size());
  std::vector<int64_t> start(rank), to(rank), scratch;
  int64_t count = updates0.elementCount();
  for (int64_t i = 0; i < count; ++i, nextIndex(index, updates0.dims())) {
    for (size_t b = 0; b < s->scatterPositions.size(); ++b)
      batch[b] = index[s->scatterPositions[b]];
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < s->toOperand.size(); ++k)
      start[s->toOperand[k]] =
          component(indices, s->indexVectorDim, batch, k, scratch);
    for (size_t k = 0; k < s->inputBatching.size(); ++k) {
      int64_t dim = s->indicesBatching[k];
      start[s->inputBatching[k]] =
          batch[dim < s->indexVectorDim ? dim : dim - 1];
    }
    // The whole window must fit, else the update is skipped.
    bool fits = true;
    for (int64_t d = 0; d < rank && fits; ++d)
      fits = start[d] >= 0 && start[d] <= first.dims()[d] - s->windowSizes[d];
    if (!fits)
      continue;
    to = start;
    for (size_t w = 0; w < s->windowDims.size(); ++w)
      to[s->windowDims[w]] += index[s->updateWindowDims[w]];
    int64_t o = first.linearIndex(to);
    if (Status e = combine(results, o, operands, n + 1, i); !e)
      return e.takeError();
  }
  if (n == 1)
    return std::move(results[0]);
  return Literal::makeTuple(std::move(results));
}

} // namespace tessel::eval
