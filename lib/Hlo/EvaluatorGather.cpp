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
  const Literal *indices = nullptr;
  int64_t indexVectorDim = 0;
  /// Number of components of a start vector.
  int64_t vectorSize = 0;
  /// Dims of the indices without the index vector dim: the batch space.
  std::vector<int64_t> batchDims;

  std::optional<Error> init(const Literal &literal, int64_t vectorDim) {
    indices = &literal;
    indexVectorDim = vectorDim;
    if (!isInteger(literal.elementType()))
      return Error("the indices are " +
                   literal.shape().toStringWithoutLayout() +
                   ", expected an integer type");
    if (vectorDim < 0 || vectorDim > literal.rank())
      return Error("index_vector_dim=" + std::to_string(vectorDim) +
                   " is out of range, expected 0.." +
                   std::to_string(literal.rank()));
    vectorSize = vectorDim == literal.rank() ? 1 : literal.dims()[vectorDim];
    for (int64_t d = 0; d < literal.rank(); ++d)
      if (d != vectorDim)
        batchDims.push_back(literal.dims()[d]);
    return std::nullopt;
  }

  /// Component k of the start vector at batch point `batch`.
  int64_t component(const std::vector<int64_t> &batch, int64_t k,
                    std::vector<int64_t> &scratch) const {
    scratch.clear();
    for (int64_t d = 0, b = 0; d < indices->rank(); ++d)
      scratch.push_back(d == indexVectorDim ? k : batch[b++]);
    return indexValue(*indices, indices->linearIndex(scratch));
  }

  /// The indices dim that batch position `b` came from.
  int64_t indicesDim(int64_t b) const { return b < indexVectorDim ? b : b + 1; }
};

/// Checks the batching dims: pairs of operand and indices dims of equal
/// sizes.
std::optional<Error> checkBatching(const std::vector<int64_t> &operandDims,
                                   const std::vector<int64_t> &indicesDims,
                                   const Literal &operand,
                                   const IndexSpace &space,
                                   const char *operandWhat,
                                   const char *indicesWhat) {
  if (auto e = checkDimList(operandDims, operand.rank(), operandWhat))
    return e;
  if (auto e = checkDimList(indicesDims, space.indices->rank(), indicesWhat))
    return e;
  if (operandDims.size() != indicesDims.size())
    return Error(std::string(operandWhat) + " and " + indicesWhat +
                 " differ in length");
  for (size_t i = 0; i < operandDims.size(); ++i) {
    if (indicesDims[i] == space.indexVectorDim)
      return Error(std::string(indicesWhat) + " " +
                   std::to_string(indicesDims[i]) + " is index_vector_dim");
    if (operand.dims()[operandDims[i]] != space.indices->dims()[indicesDims[i]])
      return Error(std::string(operandWhat) + " " +
                   std::to_string(operandDims[i]) + " has size " +
                   std::to_string(operand.dims()[operandDims[i]]) +
                   ", the indices' dim " + std::to_string(indicesDims[i]) +
                   " " + std::to_string(space.indices->dims()[indicesDims[i]]));
  }
  return std::nullopt;
}

#define TRY_LIST(var, key)                                                     \
  Expected<std::vector<int64_t>> var##OrError = intListAttribute(inst, key);   \
  if (!var##OrError)                                                           \
    return var##OrError.takeError();                                           \
  const std::vector<int64_t> &var = *var##OrError;

} // namespace

Expected<Literal> gather(const HloInstruction &inst, const Literal &operand,
                         const Literal &indices) {
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
  IndexSpace space;
  if (auto e = space.init(indices, *vectorDim))
    return *e;
  int64_t rank = operand.rank();
  if (static_cast<int64_t>(sliceSizes.size()) != rank)
    return Error("slice_sizes has " + std::to_string(sliceSizes.size()) +
                 " sizes, expected one per operand dim (" +
                 std::to_string(rank) + ")");
  for (int64_t d = 0; d < rank; ++d)
    if (sliceSizes[d] < 0 || sliceSizes[d] > operand.dims()[d])
      return Error("slice size " + std::to_string(sliceSizes[d]) + " of dim " +
                   std::to_string(d) + " does not fit size " +
                   std::to_string(operand.dims()[d]));
  if (auto e = checkDimList(collapsed, rank, "collapsed_slice_dims"))
    return *e;
  if (auto e = checkDimList(startIndexMap, rank, "start_index_map"))
    return *e;
  if (auto e =
          checkBatching(operandBatching, indicesBatching, operand, space,
                        "operand_batching_dims", "start_indices_batching_dims"))
    return *e;
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
  // The operand dims the offset dims walk, in order.
  std::vector<int64_t> windowDims;
  for (int64_t d = 0; d < rank; ++d)
    if (!contains(collapsed, d) && !contains(operandBatching, d))
      windowDims.push_back(d);
  int64_t outRank =
      static_cast<int64_t>(space.batchDims.size() + windowDims.size());
  if (windowDims.size() != offsetDims.size())
    return Error("offset_dims has " + std::to_string(offsetDims.size()) +
                 " dims, expected " + std::to_string(windowDims.size()) +
                 " (operand dims neither collapsed nor batching)");
  if (auto e = checkDimList(offsetDims, outRank, "offset_dims"))
    return *e;
  if (!std::is_sorted(offsetDims.begin(), offsetDims.end()))
    return Error("offset_dims must be sorted");
  std::vector<int64_t> outDims(outRank);
  std::vector<int64_t> batchPositions;
  for (int64_t d = 0, b = 0, w = 0; d < outRank; ++d) {
    if (contains(offsetDims, d)) {
      outDims[d] = sliceSizes[windowDims[w++]];
    } else {
      batchPositions.push_back(d);
      outDims[d] = space.batchDims[b++];
    }
  }
  const Shape &declared = inst.shape();
  if (declared.isTuple() || declared.dims != outDims ||
      declared.elementType != operand.elementType())
    return Error("declared shape " + declared.toStringWithoutLayout() +
                 " does not match the inferred " +
                 std::string(primitiveTypeName(operand.elementType())) +
                 joinDims(outDims));
  Literal out(Shape(operand.elementType(), outDims));
  std::vector<int64_t> index(outRank, 0), batch(space.batchDims.size());
  std::vector<int64_t> from(rank), scratch;
  int64_t width = out.elementBytes();
  for (int64_t i = 0; i < out.elementCount(); ++i, nextIndex(index, outDims)) {
    for (size_t b = 0; b < batchPositions.size(); ++b)
      batch[b] = index[batchPositions[b]];
    std::fill(from.begin(), from.end(), 0);
    for (size_t k = 0; k < startIndexMap.size(); ++k) {
      int64_t d = startIndexMap[k];
      from[d] = std::clamp<int64_t>(space.component(batch, k, scratch), 0,
                                    operand.dims()[d] - sliceSizes[d]);
    }
    for (size_t k = 0; k < operandBatching.size(); ++k) {
      int64_t dim = indicesBatching[k];
      from[operandBatching[k]] =
          batch[dim < space.indexVectorDim ? dim : dim - 1];
    }
    for (size_t w = 0; w < windowDims.size(); ++w)
      from[windowDims[w]] += index[offsetDims[w]];
    std::memcpy(out.data() + i * width,
                operand.data() + operand.linearIndex(from) * width, width);
  }
  return out;
}

Expected<Literal> scatter(const HloInstruction &inst,
                          const std::vector<const Literal *> &operands,
                          const ScatterCombiner &combine) {
  if (operands.size() < 3 || operands.size() % 2 == 0)
    return Error("scatter takes n operands, the indices and n updates, "
                 "found " +
                 std::to_string(operands.size()) + " operands");
  size_t n = operands.size() / 2;
  const Literal &first = *operands[0];
  const Literal &indices = *operands[n];
  TRY_LIST(updateWindowDims, "update_window_dims")
  TRY_LIST(inserted, "inserted_window_dims")
  TRY_LIST(toOperand, "scatter_dims_to_operand_dims")
  TRY_LIST(inputBatching, "input_batching_dims")
  TRY_LIST(indicesBatching, "scatter_indices_batching_dims")
  Expected<int64_t> vectorDim = intAttribute(inst, "index_vector_dim");
  if (!vectorDim)
    return vectorDim.takeError();
  IndexSpace space;
  if (auto e = space.init(indices, *vectorDim))
    return *e;
  int64_t rank = first.rank();
  for (size_t k = 0; k < n; ++k) {
    if (operands[k]->isTuple() || operands[k]->dims() != first.dims())
      return Error("scatter operand " + std::to_string(k) +
                   " differs in shape from operand 0");
    const Literal &updates = *operands[n + 1 + k];
    if (updates.isTuple() ||
        updates.elementType() != operands[k]->elementType() ||
        updates.dims() != operands[n + 1]->dims())
      return Error("scatter update " + std::to_string(k) + " is " +
                   updates.shape().toStringWithoutLayout() +
                   ", expected the element type of its operand and the "
                   "dims of update 0");
  }
  const Literal &updates0 = *operands[n + 1];
  if (auto e = checkDimList(inserted, rank, "inserted_window_dims"))
    return *e;
  if (auto e = checkDimList(toOperand, rank, "scatter_dims_to_operand_dims"))
    return *e;
  if (auto e =
          checkBatching(inputBatching, indicesBatching, first, space,
                        "input_batching_dims", "scatter_indices_batching_dims"))
    return *e;
  if (auto e =
          checkDimList(updateWindowDims, updates0.rank(), "update_window_dims"))
    return *e;
  if (!std::is_sorted(updateWindowDims.begin(), updateWindowDims.end()))
    return Error("update_window_dims must be sorted");
  if (static_cast<int64_t>(toOperand.size()) != space.vectorSize)
    return Error("scatter_dims_to_operand_dims has " +
                 std::to_string(toOperand.size()) +
                 " dims, the index vectors " +
                 std::to_string(space.vectorSize) + " components");
  for (int64_t d : inputBatching)
    if (contains(inserted, d) || contains(toOperand, d))
      return Error("batching dim " + std::to_string(d) +
                   " must not be inserted or scattered to");
  std::vector<int64_t> windowDims;
  for (int64_t d = 0; d < rank; ++d)
    if (!contains(inserted, d) && !contains(inputBatching, d))
      windowDims.push_back(d);
  if (windowDims.size() != updateWindowDims.size())
    return Error("update_window_dims has " +
                 std::to_string(updateWindowDims.size()) + " dims, expected " +
                 std::to_string(windowDims.size()) +
                 " (operand dims neither inserted nor batching)");
  // The update's scatter dims must be the batch space of the indices.
  std::vector<int64_t> scatterPositions;
  for (int64_t d = 0; d < updates0.rank(); ++d)
    if (!contains(updateWindowDims, d))
      scatterPositions.push_back(d);
  std::vector<int64_t> scatterSizes;
  for (int64_t d : scatterPositions)
    scatterSizes.push_back(updates0.dims()[d]);
  if (scatterSizes != space.batchDims)
    return Error("the updates' scatter dims " + joinDims(scatterSizes) +
                 " do not match the indices' batch dims " +
                 joinDims(space.batchDims));
  std::vector<int64_t> windowSizes(rank, 1);
  for (size_t w = 0; w < windowDims.size(); ++w) {
    int64_t size = updates0.dims()[updateWindowDims[w]];
    if (size > first.dims()[windowDims[w]])
      return Error("update window dim " + std::to_string(updateWindowDims[w]) +
                   " of size " + std::to_string(size) +
                   " does not fit operand dim " +
                   std::to_string(windowDims[w]));
    windowSizes[windowDims[w]] = size;
  }
  std::vector<Literal> results;
  for (size_t k = 0; k < n; ++k) {
    results.push_back(*operands[k]);
    results.back().setLayout(std::nullopt);
  }
  std::vector<int64_t> index(updates0.rank(), 0),
      batch(scatterPositions.size());
  std::vector<int64_t> start(rank), to(rank), scratch;
  int64_t count = updates0.elementCount();
  for (int64_t i = 0; i < count; ++i, nextIndex(index, updates0.dims())) {
    for (size_t b = 0; b < scatterPositions.size(); ++b)
      batch[b] = index[scatterPositions[b]];
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < toOperand.size(); ++k)
      start[toOperand[k]] = space.component(batch, k, scratch);
    for (size_t k = 0; k < inputBatching.size(); ++k) {
      int64_t dim = indicesBatching[k];
      start[inputBatching[k]] =
          batch[dim < space.indexVectorDim ? dim : dim - 1];
    }
    // The whole window must fit, else the update is skipped.
    bool fits = true;
    for (int64_t d = 0; d < rank && fits; ++d)
      fits = start[d] >= 0 && start[d] <= first.dims()[d] - windowSizes[d];
    if (!fits)
      continue;
    to = start;
    for (size_t w = 0; w < windowDims.size(); ++w)
      to[windowDims[w]] += index[updateWindowDims[w]];
    int64_t o = first.linearIndex(to);
    if (auto e = combine(results, o, operands, n + 1, i))
      return *e;
  }
  if (n == 1)
    return std::move(results[0]);
  return Literal::makeTuple(std::move(results));
}

} // namespace tessel::eval
