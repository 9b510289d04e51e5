//===- HloVerifier.cpp - Shape inference and module checks ----------------===//
#include "tessel/Hlo/HloVerifier.h"

#include "ShapeInferenceOps.h"

#include "tessel/Layout/TiledLayout.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

namespace tessel {
namespace {

std::string str(const Shape &shape) { return shape.toStringWithoutLayout(); }

std::string joinInts(const std::vector<int64_t> &values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? "," : "") + std::to_string(values[i]);
  return out + "}";
}

/// A shape without layouts (inference results carry none).
Shape arrayShape(PrimitiveType type, std::vector<int64_t> dims) {
  return Shape(type, std::move(dims));
}

Shape stripLayout(const Shape &shape) {
  if (shape.isTuple()) {
    std::vector<Shape> elements;
    for (const Shape &element : shape.tupleShapes)
      elements.push_back(stripLayout(element));
    return Shape::makeTuple(std::move(elements));
  }
  Shape result = shape;
  result.layout.reset();
  return result;
}

/// Checks that `dims` are distinct and in [0, rank).
std::optional<std::string> checkDims(const std::vector<int64_t> &dims,
                                     int64_t rank, const char *what) {
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return std::string(what) + " " + std::to_string(d) +
             " is out of range, expected 0.." + std::to_string(rank - 1);
    if (!seen.insert(d).second)
      return std::string(what) + " " + std::to_string(d) + " appears twice";
  }
  return std::nullopt;
}

bool isFloatOnlyUnary(HloOpcode op) {
  switch (op) {
  case HloOpcode::Exp:
  case HloOpcode::ExponentialMinusOne:
  case HloOpcode::Log:
  case HloOpcode::LogPlusOne:
  case HloOpcode::Tanh:
  case HloOpcode::Logistic:
  case HloOpcode::Sqrt:
  case HloOpcode::Rsqrt:
  case HloOpcode::Cbrt:
  case HloOpcode::Sine:
  case HloOpcode::Cosine:
  case HloOpcode::Tan:
  case HloOpcode::Floor:
  case HloOpcode::Ceil:
  case HloOpcode::RoundNearestAfz:
  case HloOpcode::RoundNearestEven:
  case HloOpcode::IsFinite:
  case HloOpcode::Erf:
    return true;
  default:
    return false;
  }
}

class ShapeInference {
public:
  explicit ShapeInference(const HloInstruction &inst)
      : inst(inst), a(inst.attributes()), declared(inst.shape()) {}
  Expected<Shape> run();

private:
  const Shape &operandShape(int64_t i) const {
    return inst.operand(i)->shape();
  }
  std::optional<std::string> needOperands(int64_t count) const {
    if (inst.operandCount() != count)
      return name() + " takes " + std::to_string(count) + " operand" +
             (count == 1 ? "" : "s") + ", found " +
             std::to_string(inst.operandCount());
    return std::nullopt;
  }
  std::optional<std::string> needArrays() const {
    for (HloInstruction *operand : inst.operands())
      if (!operand->shape().isArray())
        return "operand %" + operand->name() + " of shape " +
               str(operand->shape()) + " is not an array";
    return std::nullopt;
  }
  std::string name() const { return std::string(hloOpcodeName(inst.opcode())); }
  Expected<Shape> unary();
  Expected<Shape> binary();
  Expected<Shape> reduce();
  Expected<Shape> reduceWindow();
  Expected<Shape> dot();
  Expected<Shape> calls();
  Expected<Shape> sliceLike();
  Expected<Shape> pad();
  Expected<Shape> concatenate();
  Expected<Shape> bitcastConvert();
  Expected<Shape> dynamicSlice(bool update);
  Expected<Shape> select();
  Expected<Shape> map();
  /// Scalar computations: `count` scalar parameters of `types`, root
  /// scalar(s) of `results`.
  std::optional<std::string>
  checkScalarComputation(const HloComputation &computation,
                         const std::vector<PrimitiveType> &params,
                         const std::vector<PrimitiveType> &results);

  const HloInstruction &inst;
  const HloAttributes &a;
  const Shape &declared;
};

#define TRY(check)                                                             \
  if (std::optional<std::string> problem = (check))                            \
    return Error(*problem);

Expected<Shape> ShapeInference::run() {
  HloOpcode op = inst.opcode();
  if (infer::hasVerbatimRules(inst))
    return infer::inferVerbatimShape(inst);
  if (op != HloOpcode::Tuple && op != HloOpcode::GetTupleElement &&
      op != HloOpcode::Fusion && op != HloOpcode::Call &&
      op != HloOpcode::Reduce && op != HloOpcode::ReduceWindow &&
      op != HloOpcode::Parameter && op != HloOpcode::Constant) {
    if (!declared.isArray())
      return Error(name() + " gives an array, found the shape " +
                   str(declared));
    TRY(needArrays());
  }
  if (isElementwiseUnary(op))
    return unary();
  if (isElementwiseBinary(op))
    return binary();
  switch (op) {
  case HloOpcode::Parameter:
  case HloOpcode::Constant:
    TRY(needOperands(0));
    return stripLayout(declared);
  case HloOpcode::Iota:
    TRY(needOperands(0));
    if (a.iotaDimension < 0 || a.iotaDimension >= declared.rank())
      return Error("iota_dimension " + std::to_string(a.iotaDimension) +
                   " is out of range for " + str(declared));
    return stripLayout(declared);
  case HloOpcode::Broadcast: {
    TRY(needOperands(1));
    const Shape &in = operandShape(0);
    if (static_cast<int64_t>(a.dimensions.size()) != in.rank())
      return Error("broadcast dimensions " + joinInts(a.dimensions) +
                   " must name one result dim per operand dim, expected " +
                   std::to_string(in.rank()));
    TRY(checkDims(a.dimensions, declared.rank(), "broadcast dimension"));
    for (int64_t i = 0; i < in.rank(); ++i)
      if (in.dims[i] != declared.dims[a.dimensions[i]])
        return Error("operand dim " + std::to_string(i) + " of size " +
                     std::to_string(in.dims[i]) + " maps to result dim " +
                     std::to_string(a.dimensions[i]) + " of size " +
                     std::to_string(declared.dims[a.dimensions[i]]) +
                     ", expected equal sizes");
    return arrayShape(in.elementType, declared.dims);
  }
  case HloOpcode::Transpose: {
    TRY(needOperands(1));
    const Shape &in = operandShape(0);
    if (static_cast<int64_t>(a.dimensions.size()) != in.rank())
      return Error("transpose dimensions " + joinInts(a.dimensions) +
                   " is not a permutation of the operand's " +
                   std::to_string(in.rank()) + " dims");
    TRY(checkDims(a.dimensions, in.rank(), "transpose dimension"));
    std::vector<int64_t> dims;
    for (int64_t d : a.dimensions)
      dims.push_back(in.dims[d]);
    return arrayShape(in.elementType, dims);
  }
  case HloOpcode::Reshape: {
    TRY(needOperands(1));
    const Shape &in = operandShape(0);
    if (in.elementCount() != declared.elementCount())
      return Error("reshape of " + str(in) + " to " + str(declared) +
                   " changes the element count");
    return arrayShape(in.elementType, declared.dims);
  }
  case HloOpcode::Bitcast: {
    TRY(needOperands(1));
    Expected<TiledLayout> from = TiledLayout::get(operandShape(0));
    Expected<TiledLayout> to = TiledLayout::get(declared);
    if (!from)
      return from.takeError();
    if (!to)
      return to.takeError();
    if (from->physicalBytes() != to->physicalBytes())
      return Error("bitcast of " + operandShape(0).toString() + " (" +
                   std::to_string(from->physicalBytes()) + " bytes) to " +
                   declared.toString() + " (" +
                   std::to_string(to->physicalBytes()) +
                   " bytes), expected the same buffer size");
    return stripLayout(declared);
  }
  case HloOpcode::Copy:
  case HloOpcode::Reverse:
    TRY(needOperands(1));
    if (op == HloOpcode::Reverse)
      TRY(checkDims(a.dimensions, operandShape(0).rank(), "reverse dimension"));
    return stripLayout(operandShape(0));
  case HloOpcode::Slice:
    return sliceLike();
  case HloOpcode::DynamicSlice:
    return dynamicSlice(false);
  case HloOpcode::DynamicUpdateSlice:
    return dynamicSlice(true);
  case HloOpcode::Pad:
    return pad();
  case HloOpcode::Concatenate:
    return concatenate();
  case HloOpcode::Reduce:
    return reduce();
  case HloOpcode::ReduceWindow:
    return reduceWindow();
  case HloOpcode::Select:
    return select();
  case HloOpcode::Clamp: {
    TRY(needOperands(3));
    const Shape &x = operandShape(1);
    for (int64_t i : {0, 2}) {
      const Shape &bound = operandShape(i);
      if (bound.elementType != x.elementType ||
          (bound.rank() != 0 && bound.dims != x.dims))
        return Error("clamp bound " + str(bound) + " must be a scalar or " +
                     "an array of " + str(x));
    }
    return stripLayout(x);
  }
  case HloOpcode::Compare: {
    TRY(needOperands(2));
    const Shape &l = operandShape(0), &r = operandShape(1);
    if (!compatibleShapes(l, r))
      return Error("compare of " + str(l) + " and " + str(r) +
                   ", expected one shape");
    ComparisonType t = a.comparisonType;
    PrimitiveType e = l.elementType;
    bool ok =
        t == ComparisonType::Default ||
        ((t == ComparisonType::Float || t == ComparisonType::TotalOrder) &&
         (isFloat(e) || isComplex(e))) ||
        (t == ComparisonType::Signed && isSignedInteger(e)) ||
        (t == ComparisonType::Unsigned &&
         (isUnsignedInteger(e) || e == PrimitiveType::Pred));
    if (!ok)
      return Error("comparison type " + std::string(comparisonTypeName(t)) +
                   " does not apply to " + std::string(primitiveTypeName(e)));
    return arrayShape(PrimitiveType::Pred, l.dims);
  }
  case HloOpcode::Convert:
    TRY(needOperands(1));
    return arrayShape(declared.elementType, operandShape(0).dims);
  case HloOpcode::BitcastConvert:
    return bitcastConvert();
  case HloOpcode::Tuple: {
    std::vector<Shape> elements;
    for (HloInstruction *operand : inst.operands())
      elements.push_back(stripLayout(operand->shape()));
    return Shape::makeTuple(std::move(elements));
  }
  case HloOpcode::GetTupleElement: {
    TRY(needOperands(1));
    const Shape &t = operandShape(0);
    if (!t.isTuple())
      return Error("get-tuple-element of " + str(t) + ", expected a tuple");
    if (a.tupleIndex < 0 ||
        a.tupleIndex >= static_cast<int64_t>(t.tupleShapes.size()))
      return Error("index " + std::to_string(a.tupleIndex) +
                   " is out of range for " + str(t));
    return stripLayout(t.tupleShapes[a.tupleIndex]);
  }
  case HloOpcode::Fusion:
  case HloOpcode::Call:
    return calls();
  case HloOpcode::Dot:
    return dot();
  case HloOpcode::Map:
    return map();
  default:
    return Error("opcode " + name() + " is not supported");
  }
}

Expected<Shape> ShapeInference::unary() {
  TRY(needOperands(1));
  HloOpcode op = inst.opcode();
  const Shape &in = operandShape(0);
  PrimitiveType e = in.elementType;
  bool ok;
  if (isFloatOnlyUnary(op))
    ok = isFloat(e) || (isComplex(e) && op != HloOpcode::IsFinite &&
                        op != HloOpcode::Floor && op != HloOpcode::Ceil);
  else if (op == HloOpcode::Not)
    ok = isInteger(e) || e == PrimitiveType::Pred;
  else if (op == HloOpcode::PopulationCount ||
           op == HloOpcode::CountLeadingZeros)
    ok = isInteger(e);
  else // abs, negate, sign
    ok = isInteger(e) || isFloat(e) || isComplex(e);
  if (!ok)
    return Error(name() + " does not apply to " +
                 std::string(primitiveTypeName(e)));
  if (op == HloOpcode::IsFinite)
    return arrayShape(PrimitiveType::Pred, in.dims);
  if (op == HloOpcode::Abs && isComplex(e))
    return arrayShape(e == PrimitiveType::C64 ? PrimitiveType::F32
                                              : PrimitiveType::F64,
                      in.dims);
  return stripLayout(in);
}

Expected<Shape> ShapeInference::binary() {
  TRY(needOperands(2));
  HloOpcode op = inst.opcode();
  const Shape &l = operandShape(0), &r = operandShape(1);
  if (!compatibleShapes(l, r))
    return Error(name() + " of " + str(l) + " and " + str(r) +
                 ", expected one shape");
  PrimitiveType e = l.elementType;
  bool ok = true;
  switch (op) {
  case HloOpcode::And:
  case HloOpcode::Or:
  case HloOpcode::Xor:
    ok = isInteger(e) || e == PrimitiveType::Pred;
    break;
  case HloOpcode::ShiftLeft:
  case HloOpcode::ShiftRightLogical:
  case HloOpcode::ShiftRightArithmetic:
    ok = isInteger(e);
    break;
  case HloOpcode::Atan2:
    ok = isFloat(e) || isComplex(e);
    break;
  default:
    ok = e != PrimitiveType::Pred;
    break;
  }
  if (!ok)
    return Error(name() + " does not apply to " +
                 std::string(primitiveTypeName(e)));
  return stripLayout(l);
}

Expected<Shape> ShapeInference::select() {
  TRY(needOperands(3));
  const Shape &p = operandShape(0), &t = operandShape(1), &f = operandShape(2);
  if (p.elementType != PrimitiveType::Pred)
    return Error("select predicate " + str(p) + " must be pred");
  if (!compatibleShapes(t, f))
    return Error("select of " + str(t) + " and " + str(f) +
                 ", expected one shape");
  if (p.rank() != 0 && p.dims != t.dims)
    return Error("select predicate " + str(p) + " must be a scalar or have " +
                 "the dims of " + str(t));
  return stripLayout(t);
}

Expected<Shape> ShapeInference::sliceLike() {
  TRY(needOperands(1));
  const Shape &in = operandShape(0);
  if (static_cast<int64_t>(a.slice.size()) != in.rank())
    return Error("slice has " + std::to_string(a.slice.size()) +
                 " dims, expected " + std::to_string(in.rank()));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < in.rank(); ++d) {
    const SliceDim &s = a.slice[d];
    if (s.start < 0 || s.start > s.limit || s.limit > in.dims[d] ||
        s.stride < 1)
      return Error("slice [" + std::to_string(s.start) + ":" +
                   std::to_string(s.limit) + ":" + std::to_string(s.stride) +
                   "] of dim " + std::to_string(d) + " (size " +
                   std::to_string(in.dims[d]) +
                   "), expected 0 <= start <= limit <= size and stride >= 1");
    dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
  }
  return arrayShape(in.elementType, dims);
}

Expected<Shape> ShapeInference::dynamicSlice(bool update) {
  int64_t fixed = update ? 2 : 1;
  if (inst.operandCount() < fixed)
    return Error(name() + " needs at least " + std::to_string(fixed) +
                 " operands");
  const Shape &in = operandShape(0);
  if (inst.operandCount() != fixed + in.rank())
    return Error(name() + " of a rank-" + std::to_string(in.rank()) +
                 " array takes " + std::to_string(in.rank()) +
                 " scalar start indices, found " +
                 std::to_string(inst.operandCount() - fixed));
  for (int64_t i = fixed; i < inst.operandCount(); ++i) {
    const Shape &s = operandShape(i);
    if (s.rank() != 0 || !isInteger(s.elementType))
      return Error("start index " + std::to_string(i - fixed) + " is " +
                   str(s) + ", expected an integer scalar");
  }
  if (update) {
    const Shape &u = operandShape(1);
    if (u.elementType != in.elementType || u.rank() != in.rank())
      return Error("update " + str(u) + " does not fit into " + str(in));
    for (int64_t d = 0; d < in.rank(); ++d)
      if (u.dims[d] > in.dims[d])
        return Error("update " + str(u) + " is larger than " + str(in) +
                     " in dim " + std::to_string(d));
    return stripLayout(in);
  }
  if (static_cast<int64_t>(a.dynamicSliceSizes.size()) != in.rank())
    return Error("dynamic_slice_sizes has " +
                 std::to_string(a.dynamicSliceSizes.size()) +
                 " entries, expected " + std::to_string(in.rank()));
  for (int64_t d = 0; d < in.rank(); ++d)
    if (a.dynamicSliceSizes[d] < 0 || a.dynamicSliceSizes[d] > in.dims[d])
      return Error("slice size " + std::to_string(a.dynamicSliceSizes[d]) +
                   " of dim " + std::to_string(d) + " is out of range 0.." +
                   std::to_string(in.dims[d]));
  return arrayShape(in.elementType, a.dynamicSliceSizes);
}

Expected<Shape> ShapeInference::pad() {
  TRY(needOperands(2));
  const Shape &in = operandShape(0), &value = operandShape(1);
  if (value.rank() != 0 || value.elementType != in.elementType)
    return Error("padding value " + str(value) + " must be a scalar of " +
                 std::string(primitiveTypeName(in.elementType)));
  if (static_cast<int64_t>(a.padding.size()) != in.rank())
    return Error("padding has " + std::to_string(a.padding.size()) +
                 " dims, expected " + std::to_string(in.rank()));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < in.rank(); ++d) {
    const PadDim &p = a.padding[d];
    if (p.interior < 0)
      return Error("interior padding " + std::to_string(p.interior) +
                   " of dim " + std::to_string(d) + " is negative");
    __int128 size =
        static_cast<__int128>(in.dims[d]) + p.low + p.high +
        static_cast<__int128>(std::max<int64_t>(in.dims[d] - 1, 0)) *
            p.interior;
    if (size < 0 || size > INT64_MAX)
      return Error("padding " + std::to_string(p.low) + "_" +
                   std::to_string(p.high) + "_" + std::to_string(p.interior) +
                   " gives dim " + std::to_string(d) +
                   " a size out of range, expected a size >= 0");
    dims.push_back(static_cast<int64_t>(size));
  }
  return arrayShape(in.elementType, dims);
}

Expected<Shape> ShapeInference::concatenate() {
  if (inst.operandCount() == 0)
    return Error("concatenate needs at least one operand");
  if (a.dimensions.size() != 1)
    return Error("concatenate takes one dimension, found " +
                 joinInts(a.dimensions));
  const Shape &first = operandShape(0);
  int64_t dim = a.dimensions[0];
  if (dim < 0 || dim >= first.rank())
    return Error("concatenate dimension " + std::to_string(dim) +
                 " is out of range for " + str(first));
  std::vector<int64_t> dims = first.dims;
  for (int64_t i = 1; i < inst.operandCount(); ++i) {
    const Shape &s = operandShape(i);
    bool ok = s.elementType == first.elementType && s.rank() == first.rank();
    for (int64_t d = 0; ok && d < s.rank(); ++d)
      ok = d == dim || s.dims[d] == first.dims[d];
    if (!ok)
      return Error("concatenate of " + str(first) + " and " + str(s) +
                   " along dim " + std::to_string(dim) +
                   ", expected equal types and other dims");
    dims[dim] += s.dims[dim];
  }
  return arrayShape(first.elementType, dims);
}

std::optional<std::string> ShapeInference::checkScalarComputation(
    const HloComputation &computation, const std::vector<PrimitiveType> &params,
    const std::vector<PrimitiveType> &results) {
  std::vector<HloInstruction *> ps = computation.parameters();
  if (ps.size() != params.size())
    return "%" + computation.name() + " takes " + std::to_string(ps.size()) +
           " parameters, expected " + std::to_string(params.size());
  for (size_t i = 0; i < ps.size(); ++i)
    if (!ps[i] || !compatibleShapes(ps[i]->shape(), Shape(params[i], {})))
      return "parameter " + std::to_string(i) + " of %" + computation.name() +
             " must be " + std::string(primitiveTypeName(params[i])) + "[]";
  std::vector<Shape> scalars;
  for (PrimitiveType t : results)
    scalars.push_back(Shape(t, {}));
  Shape expected =
      scalars.size() == 1 ? scalars[0] : Shape::makeTuple(std::move(scalars));
  if (!compatibleShapes(computation.root()->shape(), expected))
    return "%" + computation.name() + " returns " +
           str(computation.root()->shape()) + ", expected " + str(expected);
  return std::nullopt;
}

Expected<Shape> ShapeInference::reduce() {
  int64_t n = inst.operandCount() / 2;
  if (n == 0 || inst.operandCount() % 2 != 0)
    return Error(name() + " takes inputs and as many init values, found " +
                 std::to_string(inst.operandCount()) + " operands");
  TRY(needArrays());
  const Shape &first = operandShape(0);
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < n; ++i) {
    const Shape &in = operandShape(i), &init = operandShape(n + i);
    if (in.dims != first.dims)
      return Error("reduce inputs " + str(first) + " and " + str(in) +
                   " differ in dims");
    if (init.rank() != 0 || init.elementType != in.elementType)
      return Error("init value " + str(init) + " must be a scalar of " +
                   std::string(primitiveTypeName(in.elementType)));
    types.push_back(in.elementType);
  }
  std::vector<PrimitiveType> params = types;
  params.insert(params.end(), types.begin(), types.end());
  TRY(checkScalarComputation(*inst.calledComputation(), params, types));
  std::vector<Shape> results;
  if (inst.opcode() == HloOpcode::Reduce) {
    TRY(checkDims(a.dimensions, first.rank(), "reduce dimension"));
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < first.rank(); ++d)
      if (std::find(a.dimensions.begin(), a.dimensions.end(), d) ==
          a.dimensions.end())
        dims.push_back(first.dims[d]);
    for (PrimitiveType t : types)
      results.push_back(arrayShape(t, dims));
  } else {
    if (static_cast<int64_t>(a.window.size()) != first.rank())
      return Error("window has " + std::to_string(a.window.size()) +
                   " dims, expected " + std::to_string(first.rank()));
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < first.rank(); ++d) {
      const WindowDim &w = a.window[d];
      if (w.size < 1 || w.stride < 1 || w.windowDilation < 1 ||
          w.baseDilation < 1 || w.size > (int64_t(1) << 40) ||
          w.windowDilation > (int64_t(1) << 20) ||
          w.baseDilation > (int64_t(1) << 20) ||
          std::abs(w.paddingLow) > (int64_t(1) << 40) ||
          std::abs(w.paddingHigh) > (int64_t(1) << 40))
        return Error("window dim " + std::to_string(d) +
                     " needs size, stride and dilations >= 1 (and sizes "
                     "below 2^40)");
      __int128 base =
          first.dims[d] == 0
              ? 0
              : static_cast<__int128>(first.dims[d] - 1) * w.baseDilation + 1;
      __int128 padded = base + w.paddingLow + w.paddingHigh;
      __int128 span = static_cast<__int128>(w.size - 1) * w.windowDilation + 1;
      __int128 out = padded < span ? 0 : (padded - span) / w.stride + 1;
      if (out > INT64_MAX)
        return Error("window dim " + std::to_string(d) +
                     " gives a result too large for 64 bits");
      dims.push_back(static_cast<int64_t>(out));
    }
    for (PrimitiveType t : types)
      results.push_back(arrayShape(t, dims));
  }
  return results.size() == 1 ? results[0] : Shape::makeTuple(results);
}

Expected<Shape> ShapeInference::reduceWindow() { return reduce(); }

Expected<Shape> ShapeInference::dot() {
  TRY(needOperands(2));
  const Shape &l = operandShape(0), &r = operandShape(1);
  const DotDimensionNumbers &d = a.dotDimensionNumbers;
  TRY(checkDims(d.lhsBatchDims, l.rank(), "lhs batch dim"));
  TRY(checkDims(d.rhsBatchDims, r.rank(), "rhs batch dim"));
  TRY(checkDims(d.lhsContractingDims, l.rank(), "lhs contracting dim"));
  TRY(checkDims(d.rhsContractingDims, r.rank(), "rhs contracting dim"));
  if (d.lhsBatchDims.size() != d.rhsBatchDims.size() ||
      d.lhsContractingDims.size() != d.rhsContractingDims.size())
    return Error("dot has unequal numbers of lhs and rhs batch or "
                 "contracting dims");
  for (size_t i = 0; i < d.lhsBatchDims.size(); ++i)
    if (l.dims[d.lhsBatchDims[i]] != r.dims[d.rhsBatchDims[i]])
      return Error("batch dims of sizes " +
                   std::to_string(l.dims[d.lhsBatchDims[i]]) + " and " +
                   std::to_string(r.dims[d.rhsBatchDims[i]]) + " differ");
  for (size_t i = 0; i < d.lhsContractingDims.size(); ++i)
    if (l.dims[d.lhsContractingDims[i]] != r.dims[d.rhsContractingDims[i]])
      return Error("contracting dims of sizes " +
                   std::to_string(l.dims[d.lhsContractingDims[i]]) + " and " +
                   std::to_string(r.dims[d.rhsContractingDims[i]]) + " differ");
  auto used = [](const std::vector<int64_t> &a, const std::vector<int64_t> &b,
                 int64_t dim) {
    return std::find(a.begin(), a.end(), dim) != a.end() ||
           std::find(b.begin(), b.end(), dim) != b.end();
  };
  for (int64_t dim : d.lhsBatchDims)
    if (std::find(d.lhsContractingDims.begin(), d.lhsContractingDims.end(),
                  dim) != d.lhsContractingDims.end())
      return Error("lhs dim " + std::to_string(dim) +
                   " is both batch and contracting");
  for (int64_t dim : d.rhsBatchDims)
    if (std::find(d.rhsContractingDims.begin(), d.rhsContractingDims.end(),
                  dim) != d.rhsContractingDims.end())
      return Error("rhs dim " + std::to_string(dim) +
                   " is both batch and contracting");
  if (l.elementType == PrimitiveType::Pred ||
      r.elementType == PrimitiveType::Pred)
    return Error("dot does not apply to pred");
  std::vector<int64_t> dims;
  for (int64_t dim : d.lhsBatchDims)
    dims.push_back(l.dims[dim]);
  for (int64_t dim = 0; dim < l.rank(); ++dim)
    if (!used(d.lhsBatchDims, d.lhsContractingDims, dim))
      dims.push_back(l.dims[dim]);
  for (int64_t dim = 0; dim < r.rank(); ++dim)
    if (!used(d.rhsBatchDims, d.rhsContractingDims, dim))
      dims.push_back(r.dims[dim]);
  // The result type may differ from the operands' (preferred_element_type).
  return arrayShape(declared.elementType, dims);
}

Expected<Shape> ShapeInference::calls() {
  const HloComputation &callee = *inst.calledComputation();
  std::vector<HloInstruction *> params = callee.parameters();
  if (static_cast<int64_t>(params.size()) != inst.operandCount())
    return Error("%" + callee.name() + " takes " +
                 std::to_string(params.size()) + " parameters, given " +
                 std::to_string(inst.operandCount()) + " operands");
  for (int64_t i = 0; i < inst.operandCount(); ++i)
    if (!params[i] || !compatibleShapes(params[i]->shape(), operandShape(i)))
      return Error("operand " + std::to_string(i) + " " + str(operandShape(i)) +
                   " does not match parameter " + std::to_string(i) + " of %" +
                   callee.name() +
                   (params[i] ? " (" + str(params[i]->shape()) + ")" : ""));
  return stripLayout(callee.root()->shape());
}

Expected<Shape> ShapeInference::map() {
  if (inst.operandCount() == 0)
    return Error("map needs at least one operand");
  const Shape &first = operandShape(0);
  std::vector<PrimitiveType> types;
  for (HloInstruction *operand : inst.operands()) {
    if (operand->shape().dims != first.dims)
      return Error("map operands " + str(first) + " and " +
                   str(operand->shape()) + " differ in dims");
    types.push_back(operand->shape().elementType);
  }
  const HloComputation &callee = *inst.calledComputation();
  const Shape &root = callee.root()->shape();
  if (!root.isArray() || root.rank() != 0)
    return Error("%" + callee.name() + " returns " + str(root) +
                 ", expected a scalar");
  TRY(checkScalarComputation(callee, types, {root.elementType}));
  return arrayShape(root.elementType, first.dims);
}

Expected<Shape> ShapeInference::bitcastConvert() {
  TRY(needOperands(1));
  const Shape &in = operandShape(0);
  int from = bitWidth(in.elementType), to = bitWidth(declared.elementType);
  if (from == to)
    return arrayShape(declared.elementType, in.dims);
  if (from % 8 != 0 || to % 8 != 0)
    return Error("bitcast-convert between " +
                 std::string(primitiveTypeName(in.elementType)) + " and " +
                 std::string(primitiveTypeName(declared.elementType)) +
                 " needs whole bytes");
  std::vector<int64_t> dims = in.dims;
  if (from > to) {
    dims.push_back(from / to);
  } else {
    if (dims.empty() || dims.back() != to / from)
      return Error("bitcast-convert from " + str(in) + " to " +
                   std::string(primitiveTypeName(declared.elementType)) +
                   " needs a last dim of " + std::to_string(to / from));
    dims.pop_back();
  }
  return arrayShape(declared.elementType, dims);
}

#undef TRY

Status verifyComputation(const HloComputation &computation) {
  std::vector<HloInstruction *> params = computation.parameters();
  int64_t count = 0;
  for (const auto &inst : computation.instructions()) {
    if (inst->opcode() != HloOpcode::Parameter)
      continue;
    ++count;
    int64_t n = inst->parameterNumber();
    if (n < 0 || n >= static_cast<int64_t>(params.size()) ||
        params[n] != inst.get())
      return errorAt(
          inst->location(),
          "%" + inst->name() + ": parameter number " + std::to_string(n) +
              " is used twice or out of range in %" + computation.name());
  }
  if (count != static_cast<int64_t>(params.size()))
    return errorAt(computation.location(),
                   "%" + computation.name() +
                       ": parameter numbers must be 0.." +
                       std::to_string(count - 1) + " with none missing");
  for (const auto &inst : computation.instructions()) {
    if (inst->passesValueThrough()) {
      const Shape &operand = inst->operand(0)->shape();
      if (!compatibleShapes(operand, inst->shape()))
        return errorAt(
            inst->location(),
            "%" + inst->name() + ": declared shape " + str(inst->shape()) +
                " does not match its operand's " + str(operand) +
                ", expected the same (the op passes its operand through)");
      continue;
    }
    if (!isSupportedOpcode(inst->opcode()) && !infer::hasVerbatimRules(*inst))
      continue;
    Expected<Shape> inferred = inferShape(*inst);
    if (!inferred)
      return errorAt(inst->location(),
                     "%" + inst->name() + ": " + inferred.error().message);
    if (!compatibleShapes(*inferred, inst->shape()))
      return errorAt(inst->location(),
                     "%" + inst->name() + ": declared shape " +
                         str(inst->shape()) + " does not match the inferred " +
                         str(*inferred));
  }
  return {};
}

} // namespace

Expected<Shape> inferShape(const HloInstruction &inst) {
  size_t calls = inst.calledComputations().size();
  switch (inst.opcode()) {
  case HloOpcode::Fusion:
  case HloOpcode::Call:
  case HloOpcode::Reduce:
  case HloOpcode::ReduceWindow:
  case HloOpcode::Map:
    if (calls != 1)
      return Error(std::string(hloOpcodeName(inst.opcode())) +
                   " calls one computation, found " + std::to_string(calls));
    break;
  default:
    break;
  }
  return ShapeInference(inst).run();
}

bool compatibleShapes(const Shape &a, const Shape &b) {
  if (a.isTuple() || b.isTuple()) {
    if (a.isTuple() != b.isTuple() ||
        a.tupleShapes.size() != b.tupleShapes.size())
      return false;
    for (size_t i = 0; i < a.tupleShapes.size(); ++i)
      if (!compatibleShapes(a.tupleShapes[i], b.tupleShapes[i]))
        return false;
    return true;
  }
  return a.elementType == b.elementType && a.dims == b.dims &&
         a.dynamicDims == b.dynamicDims;
}

/// Whether `a` and `b` are the same shape with the same layout, a missing
/// layout read as the default one.
static bool sameShapeAndLayout(const Shape &a, const Shape &b) {
  if (a.isTuple() || b.isTuple()) {
    if (a.isTuple() != b.isTuple() ||
        a.tupleShapes.size() != b.tupleShapes.size())
      return false;
    for (size_t i = 0; i < a.tupleShapes.size(); ++i)
      if (!sameShapeAndLayout(a.tupleShapes[i], b.tupleShapes[i]))
        return false;
    return true;
  }
  return compatibleShapes(a, b) && a.layoutOrDefault() == b.layoutOrDefault();
}

/// The subshape of `shape` at `index`, or nullptr when the index leaves it.
static const Shape *subshapeAt(const Shape &shape,
                               const std::vector<int64_t> &index) {
  const Shape *at = &shape;
  for (int64_t i : index) {
    if (!at->isTuple() || i < 0 ||
        i >= static_cast<int64_t>(at->tupleShapes.size()))
      return nullptr;
    at = &at->tupleShapes[i];
  }
  return at;
}

/// input_output_alias against the entry (HloModule.h): each parameter in
/// range, both shape indices inside their shapes, the aliased shapes equal
/// with their layouts, no output and no parameter buffer named twice.
static Status verifyInputOutputAliases(const HloModule &module) {
  ProgramShape program = module.entryProgramShape();
  const std::vector<HloInputOutputAlias> &aliases = module.inputOutputAliases();
  auto indexText = [](const std::vector<int64_t> &index) {
    std::string out = "{";
    for (size_t i = 0; i < index.size(); ++i)
      out += (i ? "," : "") + std::to_string(index[i]);
    return out + "}";
  };
  for (size_t a = 0; a < aliases.size(); ++a) {
    const HloInputOutputAlias &alias = aliases[a];
    auto fail = [&](const std::string &why) {
      return errorAt(alias.location,
                     "input_output_alias " + alias.toString() + ": " + why);
    };
    int64_t count = static_cast<int64_t>(program.parameters.size());
    if (alias.parameterNumber >= count)
      return fail("the entry has no parameter " +
                  std::to_string(alias.parameterNumber) + " (it has " +
                  std::to_string(count) + ")");
    const Shape *output = subshapeAt(program.result, alias.outputIndex);
    if (!output)
      return fail("output index " + indexText(alias.outputIndex) +
                  " is not in the result " + program.result.toString());
    const Shape &parameterShape = program.parameters[alias.parameterNumber];
    const Shape *parameter = subshapeAt(parameterShape, alias.parameterIndex);
    if (!parameter)
      return fail("parameter index " + indexText(alias.parameterIndex) +
                  " is not in parameter " +
                  std::to_string(alias.parameterNumber) + ", " +
                  parameterShape.toString());
    if (!sameShapeAndLayout(*output, *parameter))
      return fail("the output is " + output->toString() + ", the parameter " +
                  parameter->toString() +
                  "; aliased buffers must have the same shape and layout");
    for (size_t b = 0; b < a; ++b) {
      if (aliases[b].outputIndex == alias.outputIndex)
        return fail("output " + indexText(alias.outputIndex) +
                    " is aliased twice");
      if (aliases[b].parameterNumber == alias.parameterNumber &&
          aliases[b].parameterIndex == alias.parameterIndex)
        return fail("parameter " + std::to_string(alias.parameterNumber) + " " +
                    indexText(alias.parameterIndex) +
                    " is aliased to two outputs");
    }
  }
  return {};
}

/// The most levels of calls (call, fusion, reduce, map, ...) a module may
/// nest; the evaluator and the indexing analysis have the same limit.
constexpr int kMaxCallNesting = 256;

Status verifyHloModule(const HloModule &module) {
  if (!module.entry())
    return Error("the module has no ENTRY computation");
  // Calls must form no cycle (the evaluator recurses along them). A
  // depth-first search with an explicit stack: a chain of many calls must
  // not exhaust the machine's stack.
  std::unordered_map<const HloComputation *, int> state; // 1 visiting, 2 done
  // How deep calls nest below each computation.
  std::unordered_map<const HloComputation *, int> nesting;
  struct Frame {
    const HloComputation *computation;
    size_t instruction;
    size_t callee;
  };
  for (const auto &start : module.computations()) {
    if (state[start.get()] != 0)
      continue;
    std::vector<Frame> stack{{start.get(), 0, 0}};
    state[start.get()] = 1;
    while (!stack.empty()) {
      Frame &top = stack.back();
      const auto &instructions = top.computation->instructions();
      if (top.instruction == instructions.size()) {
        // Every callee is done: this computation's nesting is known.
        int deepest = 0;
        for (const auto &inst : instructions)
          for (const HloComputation *callee : inst->calledComputations())
            if (callee)
              deepest = std::max(deepest, nesting[callee] + 1);
        nesting[top.computation] = deepest;
        state[top.computation] = 2;
        stack.pop_back();
        continue;
      }
      const HloInstruction &inst = *instructions[top.instruction];
      const auto &callees = inst.calledComputations();
      if (top.callee == callees.size()) {
        ++top.instruction;
        top.callee = 0;
        continue;
      }
      const HloComputation *callee = callees[top.callee++];
      if (!callee)
        continue;
      if (state[callee] == 1)
        return errorAt(inst.location(), "%" + inst.name() + ": calling %" +
                                            callee->name() + " forms a cycle");
      if (state[callee] == 0) {
        state[callee] = 1;
        stack.push_back({callee, 0, 0});
      }
    }
  }
  // The evaluator, the indexing analysis and the emitters recurse once per
  // level of calls: refuse what would exhaust their stack, at the call
  // where the deepest chain starts.
  const HloComputation *deepest = nullptr;
  for (const auto &computation : module.computations())
    if (!deepest || nesting[computation.get()] > nesting[deepest])
      deepest = computation.get();
  if (deepest && nesting[deepest] > kMaxCallNesting)
    for (const auto &inst : deepest->instructions())
      for (const HloComputation *callee : inst->calledComputations())
        if (callee && nesting[callee] + 1 == nesting[deepest])
          return errorAt(inst->location(),
                         "%" + inst->name() + ": calls nest " +
                             std::to_string(nesting[deepest]) +
                             " deep from here, more than the " +
                             std::to_string(kMaxCallNesting) +
                             " levels tessel evaluates, analyses and compiles");
  for (const auto &computation : module.computations())
    if (Status e = verifyComputation(*computation); !e)
      return e;
  if (const std::optional<ProgramShape> &layout =
          module.entryComputationLayout()) {
    std::vector<HloInstruction *> params = module.entry()->parameters();
    std::string why;
    if (layout->parameters.size() != params.size())
      why = "it has " + std::to_string(layout->parameters.size()) +
            " parameters, the entry " + std::to_string(params.size());
    for (size_t i = 0; why.empty() && i < params.size(); ++i)
      if (!params[i] ||
          !compatibleShapes(layout->parameters[i], params[i]->shape()))
        why = "parameter " + std::to_string(i) + " is " +
              layout->parameters[i].toString() + ", the entry's " +
              (params[i] ? params[i]->shape().toString() : "is missing");
    if (why.empty() &&
        !compatibleShapes(layout->result, module.entry()->root()->shape()))
      why = "the result is " + layout->result.toString() + ", the entry's " +
            module.entry()->root()->shape().toString();
    if (!why.empty()) {
      SourceLocation loc = module.entryComputationLayoutLocation();
      return errorAt(loc, "entry_computation_layout does not match the entry "
                          "computation %" +
                              module.entry()->name() + ": " + why);
    }
  }
  return verifyInputOutputAliases(module);
}

} // namespace tessel
