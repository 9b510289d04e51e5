//===- EvaluatorSort.cpp - sort and the TopK custom-call ------------------===//
//
// sort orders every line along `dimensions={d}` of its operands by the
// comparator (called with lhs_0, rhs_0, lhs_1, rhs_1, ...: "lhs before
// rhs") and permutes all operands alike. A merge sort keeps equal elements
// in order, so it serves is_stable=true and false alike, and it never
// leaves its arrays whatever the comparator answers (one that is not a
// strict weak order, as LT on NaNs, gives some permutation, not a crash).
//
// TopK (XLA:CPU's custom-call for lax.top_k) is the first k of a stable
// sort of (x, iota) along the last dim with its comparator.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorOps.h"
#include "RawAttributes.h"

#include <cstring>

namespace tessel::eval {
namespace {

/// Sorts `order` (positions in one line) stably by less(a, b).
Status mergeSort(std::vector<int64_t> &order,
                 const std::function<Expected<bool>(int64_t, int64_t)> &less) {
  size_t n = order.size();
  std::vector<int64_t> buffer(n);
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        Expected<bool> rightFirst = less(order[j], order[i]);
        if (!rightFirst)
          return rightFirst.takeError();
        buffer[k++] = *rightFirst ? order[j++] : order[i++];
      }
      while (i < mid)
        buffer[k++] = order[i++];
      while (j < hi)
        buffer[k++] = order[j++];
    }
    order.swap(buffer);
  }
  return {};
}

/// Sorts the lines along `dim` of same-shaped arrays; `less(i, j)` compares
/// the elements at linear indices i and j.
Expected<std::vector<Literal>>
sortLines(const std::vector<const Literal *> &arrays, int64_t dim,
          const SortComparator &less) {
  const Literal &first = *arrays[0];
  const std::vector<int64_t> &dims = first.dims();
  int64_t length = dims[dim], stride = 1;
  for (int64_t d = dim + 1; d < first.rank(); ++d)
    stride *= dims[d];
  std::vector<Literal> results;
  for (const Literal *array : arrays) {
    results.push_back(*array);
    results.back().setLayout(std::nullopt);
  }
  if (length == 0)
    return results;
  int64_t lines = first.elementCount() / length;
  std::vector<int64_t> order(length);
  for (int64_t line = 0; line < lines; ++line) {
    int64_t base = (line / stride) * stride * length + line % stride;
    for (int64_t t = 0; t < length; ++t)
      order[t] = base + t * stride;
    if (Status e = mergeSort(
            order, [&](int64_t a, int64_t b) { return less(arrays, a, b); });
        !e)
      return e.takeError();
    for (size_t k = 0; k < arrays.size(); ++k) {
      int64_t width = results[k].elementBytes();
      for (int64_t t = 0; t < length; ++t)
        std::memcpy(results[k].data() + (base + t * stride) * width,
                    arrays[k]->data() + order[t] * width, width);
    }
  }
  return results;
}

} // namespace

Expected<Literal> sort(const HloInstruction &inst,
                       const std::vector<const Literal *> &operands,
                       const SortComparator &less) {
  Expected<std::vector<int64_t>> dimensions =
      intListAttribute(inst, "dimensions", /*required=*/true);
  if (!dimensions)
    return dimensions.takeError();
  if (Expected<bool> stable = boolAttribute(inst, "is_stable"); !stable)
    return stable.takeError();
  if (operands.empty())
    return Error("sort needs an operand");
  const Literal &first = *operands[0];
  for (const Literal *operand : operands)
    if (operand->isTuple() || operand->dims() != first.dims())
      return Error("sort operands must be arrays of one shape, found " +
                   operand->shape().toStringWithoutLayout() + " and " +
                   first.shape().toStringWithoutLayout());
  if (dimensions->size() != 1 || (*dimensions)[0] < 0 ||
      (*dimensions)[0] >= first.rank())
    return Error("sort needs one dimension in 0.." +
                 std::to_string(first.rank() - 1));
  Expected<std::vector<Literal>> sorted =
      sortLines(operands, (*dimensions)[0], less);
  if (!sorted)
    return sorted.takeError();
  if (sorted->size() == 1 && !inst.shape().isTuple())
    return std::move(sorted->front());
  return Literal::makeTuple(std::move(*sorted));
}

Expected<Literal> topK(const HloInstruction &inst, const Literal &operand,
                       const SortComparator &less) {
  const Shape &shape = inst.shape();
  if (operand.isTuple() || operand.rank() == 0 || !shape.isTuple() ||
      shape.tupleShapes.size() != 2 ||
      shape.tupleShapes[1].elementType != PrimitiveType::S32 ||
      shape.tupleShapes[0].dims != shape.tupleShapes[1].dims ||
      shape.tupleShapes[0].elementType != operand.elementType())
    return Error("TopK returns (values, s32 indices) of the operand's type");
  std::vector<int64_t> outDims = shape.tupleShapes[0].dims;
  int64_t last = operand.rank() - 1;
  int64_t k = outDims.empty() ? -1 : outDims.back();
  std::vector<int64_t> expected = operand.dims();
  expected.back() = k;
  if (outDims != expected || k > operand.dims()[last])
    return Error("TopK's result " + shape.toStringWithoutLayout() +
                 " must keep the operand's dims but the last, at most " +
                 std::to_string(operand.dims()[last]));
  Literal iota(Shape(PrimitiveType::S32, operand.dims()));
  int64_t length = operand.dims()[last];
  for (int64_t i = 0; i < iota.elementCount(); ++i)
    iota.setInt(i, length ? i % length : 0);
  Expected<std::vector<Literal>> sorted =
      sortLines({&operand, &iota}, last, less);
  if (!sorted)
    return sorted.takeError();
  std::vector<Literal> results;
  for (size_t r = 0; r < 2; ++r) {
    const Literal &all = (*sorted)[r];
    Literal out(Shape(all.elementType(), outDims));
    int64_t width = out.elementBytes();
    for (int64_t i = 0; i < out.elementCount(); ++i) {
      int64_t line = i / k, t = i % k;
      std::memcpy(out.data() + i * width,
                  all.data() + (line * length + t) * width, width);
    }
    results.push_back(std::move(out));
  }
  return Literal::makeTuple(std::move(results));
}

Expected<Literal> topKOp(const HloInstruction &inst, const Literal &operand) {
  Expected<int64_t> k = intAttribute(inst, "k");
  if (!k)
    return k.takeError();
  Expected<bool> largest = boolAttribute(inst, "largest");
  if (!largest)
    return largest.takeError();
  if (!inst.rawAttribute("largest"))
    *largest = true;
  Kind kind = kindOf(operand.elementType());
  if (kind == Kind::Complex || kind == Kind::Other)
    return Error("topk of " +
                 std::string(primitiveTypeName(operand.elementType())) +
                 " is not supported by the evaluator");
  auto key = [&](const Literal &x, int64_t i) -> std::pair<int64_t, uint64_t> {
    if (kind == Kind::Narrow || kind == Kind::F64)
      return {totalOrderKeyAt(x, i), 0};
    if (kind == Kind::Signed)
      return {x.getInt(i), 0};
    return {0, x.getBits(i)};
  };
  SortComparator less = [&](const std::vector<const Literal *> &arrays,
                            int64_t i, int64_t j) -> Expected<bool> {
    auto a = key(*arrays[0], i), b = key(*arrays[0], j);
    return *largest ? a > b : a < b;
  };
  const Shape &shape = inst.shape();
  if (!shape.isTuple() || shape.tupleShapes.empty() ||
      shape.tupleShapes[0].dims.empty() ||
      shape.tupleShapes[0].dims.back() != *k)
    return Error("topk's result " + shape.toStringWithoutLayout() +
                 " must end in k=" + std::to_string(*k));
  return topK(inst, operand, less);
}

} // namespace tessel::eval
