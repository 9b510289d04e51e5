//===- ElementalEmitter.cpp - One HLO element as MLIR arithmetic ----------===//
#include "ElementalEmitter.h"
#include "RngBits.h"

#include "ScalarOps.h"
#include "tessel/Dialect/ErrorDiagnostics.h"
#include "tessel/Dialect/TesselDialect.h"
#include "tessel/Hlo/ConvolutionDimensions.h"
#include "tessel/Hlo/GatherDimensions.h"
#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Indexing/HloIndexing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <limits>

namespace tessel {

using llvm::SmallVector;
using mlir::Location;
using mlir::Value;
using mlir::ValueRange;

namespace {

/// The largest value folded into a kernel as a constant, and the largest
/// one evaluated on the way (an iota or a broadcast it is computed from).
constexpr int64_t kFoldedElements = 1024;
constexpr int64_t kConstantElements = int64_t(1) << 16;

/// The ops that compute new values and are folded when their operands are
/// constants: elementwise ops, reduce and dot.
bool foldsWhenConstant(HloOpcode opcode) {
  return isElementwise(opcode) || opcode == HloOpcode::Reduce ||
         opcode == HloOpcode::Dot;
}

/// The ops a constant value flows through without computing: it stays
/// constant, and is folded only where a computing op uses it.
bool movesConstants(HloOpcode opcode) {
  switch (opcode) {
  case HloOpcode::Iota:
  case HloOpcode::Broadcast:
  case HloOpcode::Reshape:
  case HloOpcode::Transpose:
  case HloOpcode::Slice:
  case HloOpcode::Copy:
  case HloOpcode::Reverse:
  case HloOpcode::Concatenate:
  case HloOpcode::Pad:
    return true;
  default:
    return false;
  }
}

} // namespace

mlir::Type getStorageType(PrimitiveType type, mlir::MLIRContext *context,
                          std::string *error) {
  mlir::Builder b(context);
  switch (type) {
  case PrimitiveType::Pred:
    return b.getI1Type();
  case PrimitiveType::S8:
  case PrimitiveType::U8:
  // The f8 types are bytes; ScalarOps decodes and encodes them.
  case PrimitiveType::F8E5M2:
  case PrimitiveType::F8E4M3FN:
  case PrimitiveType::F8E4M3FNUZ:
  case PrimitiveType::F8E4M3B11FNUZ:
  case PrimitiveType::F8E5M2FNUZ:
    return b.getI8Type();
  case PrimitiveType::S16:
  case PrimitiveType::U16:
    return b.getI16Type();
  case PrimitiveType::S32:
  case PrimitiveType::U32:
    return b.getI32Type();
  case PrimitiveType::S64:
  case PrimitiveType::U64:
    return b.getI64Type();
  case PrimitiveType::F16:
    return b.getF16Type();
  case PrimitiveType::BF16:
    return b.getBF16Type();
  case PrimitiveType::F32:
    return b.getF32Type();
  case PrimitiveType::F64:
    return b.getF64Type();
  // Interleaved (re, im) pairs; ScalarOpsComplex.cpp takes them apart.
  case PrimitiveType::C64:
    return mlir::ComplexType::get(b.getF32Type());
  case PrimitiveType::C128:
    return mlir::ComplexType::get(b.getF64Type());
  default:
    if (error)
      *error = "element type " + std::string(primitiveTypeName(type)) +
               " is not supported by the compiler (supported: pred, s8-s64, "
               "u8-u64, f16, bf16, f32, f64, c64, c128 and the f8 types)";
    return nullptr;
  }
}

mlir::RankedTensorType getTensorType(const Shape &shape,
                                     mlir::MLIRContext *context) {
  mlir::Type element = getStorageType(shape.elementType, context);
  mlir::Attribute encoding;
  if (shape.layout && !(shape.layout->hasOnlyMinorToMajor() &&
                        shape.layout->minorToMajor ==
                            Layout::rowMajor(shape.rank()).minorToMajor))
    encoding = mlir::StringAttr::get(context, shape.layout->toString());
  return mlir::RankedTensorType::get(shape.dims, element, encoding);
}

SmallVector<Value> emitApplyIndexing(mlir::OpBuilder &b, Location loc,
                                     const IndexingMap &map, ValueRange dims,
                                     ValueRange symbols) {
  SmallVector<Value> results;
  bool allConstant = true;
  for (mlir::AffineExpr expr : map.getAffineMap().getResults())
    allConstant &= llvm::isa<mlir::AffineConstantExpr>(expr);
  if (allConstant) {
    for (mlir::AffineExpr expr : map.getAffineMap().getResults())
      results.push_back(b.create<mlir::arith::ConstantIndexOp>(
          loc, llvm::cast<mlir::AffineConstantExpr>(expr).getValue()));
    return results;
  }
  auto op = b.create<ApplyIndexingOp>(loc, dims, symbols, map);
  results.append(op.getResults().begin(), op.getResults().end());
  return results;
}

static Value emitInInterval(mlir::OpBuilder &b, Location loc, Value v,
                            Interval bounds) {
  using mlir::arith::CmpIPredicate;
  Value lo = b.create<mlir::arith::ConstantIndexOp>(loc, bounds.lower);
  Value hi = b.create<mlir::arith::ConstantIndexOp>(loc, bounds.upper);
  Value geLo = b.create<mlir::arith::CmpIOp>(loc, CmpIPredicate::sge, v, lo);
  Value leHi = b.create<mlir::arith::CmpIOp>(loc, CmpIPredicate::sle, v, hi);
  return b.create<mlir::arith::AndIOp>(loc, geLo, leHi);
}

Value emitInDomain(mlir::OpBuilder &b, Location loc, const IndexingMap &map,
                   ValueRange dims, ValueRange symbols, bool dimsKnownInRange) {
  Value result = b.create<mlir::arith::ConstantIntOp>(loc, 1, 1);
  auto conjoin = [&](Value v) {
    result = b.create<mlir::arith::AndIOp>(loc, result, v);
  };
  if (!dimsKnownInRange)
    for (unsigned i = 0; i < map.getNumDims(); ++i)
      conjoin(emitInInterval(b, loc, dims[i], map.getDimVar(i).bounds));
  for (const IndexingConstraint &constraint : map.getConstraints()) {
    // The constraint's expression over the same variables, without the
    // constraints (the point may violate them: that is what is checked).
    IndexingMap exprMap(mlir::AffineMap::get(map.getNumDims(),
                                             map.getNumSymbols(),
                                             constraint.expr),
                        map.getDimVars(), map.getRangeVars(), map.getRTVars());
    Value v = emitApplyIndexing(b, loc, exprMap, dims, symbols).front();
    conjoin(emitInInterval(b, loc, v, constraint.bounds));
  }
  return result;
}

mlir::LogicalResult ElementalEmitter::fail(const HloInstruction &instruction,
                                           const std::string &what) {
  // A diagnostic at the instruction's line and column: the pipeline's
  // ErrorCapture (Dialect/ErrorDiagnostics.h) turns the first into an Error.
  mlir::emitError(locationOf(instruction, b.getUnknownLoc()))
      << "cannot compile %" << instruction.name() << " ("
      << llvm::StringRef(hloOpcodeName(instruction.opcode())) << "): " << what;
  return mlir::failure();
}

const SmallVector<Value> *
ElementalEmitter::lookup(const HloInstruction &instruction,
                         ValueRange indices) const {
  for (auto scope = scopes.rbegin(); scope != scopes.rend(); ++scope)
    for (const auto &[key, values] : *scope)
      if (key.instruction == &instruction && llvm::equal(key.indices, indices))
        return &values;
  return nullptr;
}

mlir::FailureOr<SmallVector<Value>>
ElementalEmitter::emit(const HloInstruction &instruction, ValueRange indices) {
  if (const SmallVector<Value> *cached = lookup(instruction, indices))
    return *cached;
  mlir::FailureOr<SmallVector<Value>> values;
  if (std::optional<SmallVector<Value>> provided =
          provider ? provider(instruction, indices) : std::nullopt)
    values = std::move(*provided);
  else
    values = emitUncached(instruction, indices);
  if (mlir::failed(values))
    return mlir::failure();
  scopes.back().push_back(
      {CacheKey{&instruction, SmallVector<Value>(indices)}, *values});
  return values;
}

mlir::FailureOr<Value>
ElementalEmitter::emitOperand(const HloInstruction &instruction, int64_t i,
                              ValueRange indices) {
  auto values = emit(*instruction.operand(i), indices);
  if (mlir::failed(values))
    return mlir::failure();
  if (values->size() != 1)
    return fail(instruction, "operand " + std::to_string(i) +
                                 " is a tuple; only a get-tuple-element of "
                                 "it can be read");
  return values->front();
}

mlir::FailureOr<SmallVector<Value>>
ElementalEmitter::emitScalarComputation(const HloComputation &computation,
                                        ValueRange args) {
  std::vector<HloInstruction *> params = computation.parameters();
  if (params.size() != args.size()) {
    return mlir::emitError(b.getUnknownLoc())
           << "computation " << computation.name() << " takes " << params.size()
           << " parameters, given " << args.size();
  }
  auto saved = scalarParameters;
  for (HloInstruction *param : params)
    scalarParameters[param] = args[param->parameterNumber()];
  // The reducer's values live in a scope of their own: the same
  // instructions run again with other arguments on the next call.
  Scope scope(*this);
  const HloInstruction *root = computation.root();
  mlir::FailureOr<SmallVector<Value>> result;
  if (root->opcode() == HloOpcode::Tuple) {
    SmallVector<Value> values;
    for (const HloInstruction *operand : root->operands()) {
      auto value = emit(*operand, {});
      if (mlir::failed(value))
        return mlir::failure();
      values.append(value->begin(), value->end());
    }
    result = values;
  } else {
    result = emit(*root, {});
  }
  scalarParameters = std::move(saved);
  return result;
}

mlir::FailureOr<SmallVector<Value>>
ElementalEmitter::emitUncached(const HloInstruction &instruction,
                               ValueRange indices) {
  Location loc = b.getUnknownLoc();
  const Shape &shape = instruction.shape();
  HloOpcode opcode = instruction.opcode();
  auto single =
      [](mlir::FailureOr<Value> v) -> mlir::FailureOr<SmallVector<Value>> {
    if (mlir::failed(v))
      return mlir::failure();
    return SmallVector<Value>{*v};
  };

  if (opcode == HloOpcode::Parameter) {
    auto it = scalarParameters.find(&instruction);
    if (it != scalarParameters.end())
      return SmallVector<Value>{it->second};
    auto arg = callArguments.find(&instruction);
    if (arg != callArguments.end()) {
      auto v = emitOperand(*arg->second.first, arg->second.second, indices);
      if (mlir::failed(v))
        return mlir::failure();
      return SmallVector<Value>{*v};
    }
    return fail(instruction, "parameter without a value (internal error)");
  }
  if (instruction.passesValueThrough()) // opt-barrier, Sharding
    return emit(*instruction.operand(0), indices);
  // An op computed from constants alone is folded by the evaluator when the
  // kernel is compiled, as XLA folds constants. Else LLVM folds it once the
  // loops are unrolled, in its own arithmetic: 0 / 0 of an iota gave the
  // NaN with the sign bit clear, where the CPU (and the evaluator) gives it
  // set, and a TOTALORDER compare told them apart (random fusion seed 609).
  if (foldsWhenConstant(opcode) && shape.isArray() &&
      shape.elementCount().value_or(kFoldedElements + 1) <= kFoldedElements)
    if (std::shared_ptr<const Literal> value = constantValue(instruction))
      return single(emitLiteral(*value, indices));
  if (opcode == HloOpcode::Reduce)
    return emitReduce(instruction, indices);
  if (opcode == HloOpcode::ReduceWindow)
    return emitReduceWindow(instruction, indices);
  if (opcode == HloOpcode::Call)
    return emitCall(instruction, indices);
  if (opcode == HloOpcode::GetTupleElement &&
      instruction.operand(0)->opcode() == HloOpcode::RngBitGenerator) {
    // Each result of rng-bit-generator is a function of the state at the
    // element's index (RngBits.h).
    const HloInstruction &rng = *instruction.operand(0);
    bool readFailed = false;
    std::string error;
    Value value = emitRngBitGeneratorElement(
        b, loc, rng, instruction.tupleIndex(), indices,
        [&](Value i) -> Value {
          auto v = emitOperand(rng, 0, ValueRange{i});
          if (mlir::failed(v)) {
            readFailed = true;
            return b.create<mlir::arith::ConstantIntOp>(loc, 0, 64);
          }
          return *v;
        },
        error);
    if (readFailed)
      return mlir::failure();
    if (!value)
      return fail(rng, error);
    return SmallVector<Value>{value};
  }
  if (opcode == HloOpcode::GetTupleElement) {
    auto values = emit(*instruction.operand(0), indices);
    if (mlir::failed(values))
      return mlir::failure();
    if (instruction.tupleIndex() >= static_cast<int64_t>(values->size()))
      return fail(instruction, "tuple index out of range");
    return SmallVector<Value>{(*values)[instruction.tupleIndex()]};
  }
  if (shape.isTuple())
    return fail(instruction, "tuple-shaped values inside a fusion are not "
                             "supported (only a ROOT tuple)");
  std::string typeError;
  if (!getStorageType(shape.elementType, b.getContext(), &typeError))
    return fail(instruction, typeError);
  for (const HloInstruction *operand : instruction.operands())
    if (operand->shape().isArray() &&
        !getStorageType(operand->shape().elementType, b.getContext(),
                        &typeError))
      return fail(instruction,
                  "operand %" + operand->name() + ": " + typeError);

  if ((opcode == HloOpcode::Dot || opcode == HloOpcode::Convolution) &&
      (isComplex(shape.elementType) ||
       isComplex(instruction.operand(0)->shape().elementType)))
    return fail(instruction,
                std::string(hloOpcodeName(opcode)) + " of " +
                    std::string(primitiveTypeName(
                        instruction.operand(0)->shape().elementType)) +
                    " is not supported (the evaluator does not define it)");
  switch (opcode) {
  case HloOpcode::Constant:
    return single(emitConstant(instruction, indices));
  case HloOpcode::Iota:
    return single(emitIota(instruction, indices));
  case HloOpcode::Broadcast: {
    SmallVector<Value> operandIndex;
    for (int64_t dim : instruction.dimensions())
      operandIndex.push_back(indices[dim]);
    return single(emitOperand(instruction, 0, operandIndex));
  }
  case HloOpcode::Bitcast: {
    // XLA's bitcast may change the element type to one of the same width
    // (a sort comparator's f32 -> s32): the bits are reinterpreted, as by
    // bitcast-convert.
    PrimitiveType from = instruction.operand(0)->shape().elementType;
    if (from == shape.elementType)
      return single(emitThroughMap(instruction, indices));
    auto value = emitThroughMap(instruction, indices);
    if (mlir::failed(value))
      return mlir::failure();
    mlir::Type toType = getStorageType(shape.elementType, b.getContext());
    if (value->getType() == toType)
      return SmallVector<Value>{*value};
    if (!value->getType().isIntOrFloat() || !toType.isIntOrFloat() ||
        value->getType().getIntOrFloatBitWidth() !=
            toType.getIntOrFloatBitWidth())
      return fail(instruction, "a bitcast between element types of "
                               "different widths is not supported");
    return SmallVector<Value>{
        b.create<mlir::arith::BitcastOp>(loc, toType, *value)};
  }
  case HloOpcode::Transpose:
  case HloOpcode::Reshape:
  case HloOpcode::Slice:
  case HloOpcode::Reverse:
  case HloOpcode::Copy:
    return single(emitThroughMap(instruction, indices));
  case HloOpcode::Pad:
    return single(emitPad(instruction, indices));
  case HloOpcode::Concatenate:
    return single(emitConcatenate(instruction, indices));
  case HloOpcode::Dot:
    return single(emitDot(instruction, indices));
  case HloOpcode::DynamicSlice:
    return single(emitDynamicSlice(instruction, indices));
  case HloOpcode::Gather:
    return single(emitGather(instruction, indices));
  case HloOpcode::Convolution:
    return single(emitConvolution(instruction, indices));
  case HloOpcode::BitcastConvert:
    if (instruction.operand(0)->shape().dims != shape.dims)
      return single(emitBitcastConvertWidths(instruction, indices));
    break;
  case HloOpcode::DynamicUpdateSlice:
    return single(emitDynamicUpdateSlice(instruction, indices));
  case HloOpcode::Map: {
    SmallVector<Value> args;
    for (int64_t i = 0; i < instruction.operandCount(); ++i) {
      auto v = emitOperand(instruction, i, indices);
      if (mlir::failed(v))
        return mlir::failure();
      args.push_back(*v);
    }
    return emitScalarComputation(*instruction.calledComputation(), args);
  }
  default:
    break;
  }

  if (!isElementwise(opcode) && opcode != HloOpcode::Complex &&
      opcode != HloOpcode::Real && opcode != HloOpcode::Imag)
    return fail(instruction, "this op is not supported by the compiler yet");
  // Elementwise: every operand at the same index (a rank-0 operand of select
  // or clamp is broadcast).
  SmallVector<Value> args;
  SmallVector<PrimitiveType> argTypes;
  for (int64_t i = 0; i < instruction.operandCount(); ++i) {
    const HloInstruction *operand = instruction.operand(i);
    ValueRange at = operand->shape().rank() == 0 ? ValueRange{} : indices;
    auto v = emitOperand(instruction, i, at);
    if (mlir::failed(v))
      return mlir::failure();
    args.push_back(*v);
    argTypes.push_back(operand->shape().elementType);
  }
  ScalarOpEmitter ops(b, loc);
  mlir::FailureOr<Value> result =
      ops.emit(instruction, args, argTypes, shape.elementType);
  if (mlir::failed(result))
    return fail(instruction, ops.error());
  return SmallVector<Value>{*result};
}

mlir::FailureOr<Value>
ElementalEmitter::emitBitcastConvertWidths(const HloInstruction &instruction,
                                           ValueRange indices) {
  // Dense little-endian bytes, as the evaluator: to a narrower type the
  // output's minor dim k picks bits [k w, (k + 1) w) of the operand's
  // element (w the output's width); to a wider one, operand elements
  // 0..n-1 of the minor dim fill it from the low bits up.
  Location loc = b.getUnknownLoc();
  const Shape &from = instruction.operand(0)->shape();
  const Shape &to = instruction.shape();
  int fromBits = bitWidth(from.elementType), toBits = bitWidth(to.elementType);
  if (fromBits < 8 || toBits < 8 || from.elementType == PrimitiveType::Pred ||
      to.elementType == PrimitiveType::Pred)
    return fail(instruction,
                "bitcast-convert between widths of " +
                    std::string(primitiveTypeName(from.elementType)) + " and " +
                    std::string(primitiveTypeName(to.elementType)) +
                    " is not supported by the compiler (elements "
                    "narrower than a byte)");
  mlir::Type toType = getStorageType(to.elementType, b.getContext());
  ScalarOpEmitter ops(b, loc);
  auto asInt = [&](Value v, int bits) -> Value {
    mlir::Type intType = b.getIntegerType(bits);
    if (llvm::isa<mlir::ComplexType>(v.getType()))
      return ops.complexToBits(v);
    return v.getType() == intType
               ? v
               : Value(b.create<mlir::arith::BitcastOp>(loc, intType, v));
  };
  auto fromInt = [&](Value v) -> Value {
    if (llvm::isa<mlir::ComplexType>(toType))
      return ops.complexFromBits(v, toType);
    return v.getType() == toType
               ? v
               : Value(b.create<mlir::arith::BitcastOp>(loc, toType, v));
  };
  mlir::Type wide = b.getIntegerType(std::max(fromBits, toBits));
  if (fromBits > toBits) {
    auto v = emitOperand(instruction, 0, indices.drop_back());
    if (mlir::failed(v))
      return mlir::failure();
    Value k = b.create<mlir::arith::IndexCastOp>(loc, wide, indices.back());
    Value shift = b.create<mlir::arith::MulIOp>(
        loc, k,
        b.create<mlir::arith::ConstantOp>(loc, b.getIntegerAttr(wide, toBits)));
    Value part =
        b.create<mlir::arith::ShRUIOp>(loc, asInt(*v, fromBits), shift);
    return fromInt(
        b.create<mlir::arith::TruncIOp>(loc, b.getIntegerType(toBits), part));
  }
  int64_t parts = toBits / fromBits;
  Value result =
      b.create<mlir::arith::ConstantOp>(loc, b.getIntegerAttr(wide, 0));
  SmallVector<Value> at(indices.begin(), indices.end());
  for (int64_t k = 0; k < parts; ++k) {
    at.push_back(b.create<mlir::arith::ConstantIndexOp>(loc, k));
    auto v = emitOperand(instruction, 0, at);
    at.pop_back();
    if (mlir::failed(v))
      return mlir::failure();
    Value part = b.create<mlir::arith::ExtUIOp>(loc, wide, asInt(*v, fromBits));
    if (k > 0)
      part = b.create<mlir::arith::ShLIOp>(
          loc, part,
          b.create<mlir::arith::ConstantOp>(
              loc, b.getIntegerAttr(wide, k * fromBits)));
    result = b.create<mlir::arith::OrIOp>(loc, result, part);
  }
  return fromInt(result);
}

mlir::FailureOr<Value>
ElementalEmitter::emitConstant(const HloInstruction &instruction,
                               ValueRange indices) {
  const Literal &literal = instruction.literal();
  if (literal.isElided())
    return fail(instruction, "the constant's value is elided ({...})");
  return emitLiteral(literal, indices);
}

std::shared_ptr<const Literal>
ElementalEmitter::constantValue(const HloInstruction &instruction) {
  auto known = constants.find(&instruction);
  if (known != constants.end())
    return known->second;
  constants[&instruction] = nullptr;
  const Shape &shape = instruction.shape();
  HloOpcode opcode = instruction.opcode();
  std::optional<int64_t> count =
      shape.isArray() ? shape.elementCount() : std::nullopt;
  for (bool dynamic : shape.dynamicDims)
    if (dynamic)
      count = std::nullopt;
  if (!count || *count > kConstantElements)
    return nullptr;
  std::shared_ptr<const Literal> value;
  if (opcode == HloOpcode::Constant) {
    if (instruction.literal().isElided())
      return nullptr;
    value = std::make_shared<const Literal>(instruction.literal());
  } else if (foldsWhenConstant(opcode) || movesConstants(opcode)) {
    std::vector<Literal> operands;
    for (const HloInstruction *operand : instruction.operands()) {
      std::shared_ptr<const Literal> v = constantValue(*operand);
      if (!v)
        return nullptr;
      operands.push_back(*v);
    }
    // The kernels' own reduction order (reducesInPartials), which `tessel
    // run --check` reproduces: folding changes no bit of a result.
    EvaluatorOptions options;
    options.compilerReductionOrder = true;
    Expected<Literal> result =
        evaluateInstruction(instruction, operands, options);
    if (!result)
      return nullptr;
    value = std::make_shared<const Literal>(std::move(*result));
  } else {
    return nullptr;
  }
  constants[&instruction] = value;
  return value;
}

mlir::FailureOr<Value> ElementalEmitter::emitLiteral(const Literal &literal,
                                                     ValueRange indices) {
  Location loc = b.getUnknownLoc();
  mlir::Type element = getStorageType(literal.elementType(), b.getContext());
  if (auto complex = llvm::dyn_cast<mlir::ComplexType>(element)) {
    // The parts: a (dims..., 2) constant of the part type, interleaved.
    auto part = llvm::cast<mlir::FloatType>(complex.getElementType());
    auto partAttr = [&](double v) { return b.getFloatAttr(part, v); };
    Value re, im;
    if (literal.rank() == 0 || literal.elementCount() == 1) {
      std::complex<double> z = literal.getComplex(0);
      re = b.create<mlir::arith::ConstantOp>(loc, partAttr(z.real()));
      im = b.create<mlir::arith::ConstantOp>(loc, partAttr(z.imag()));
    } else {
      SmallVector<int64_t> dims(literal.dims().begin(), literal.dims().end());
      dims.push_back(2);
      SmallVector<mlir::Attribute> values;
      values.reserve(2 * literal.elementCount());
      for (int64_t i = 0; i < literal.elementCount(); ++i) {
        std::complex<double> z = literal.getComplex(i);
        values.push_back(partAttr(z.real()));
        values.push_back(partAttr(z.imag()));
      }
      Value tensor = b.create<mlir::arith::ConstantOp>(
          loc, mlir::DenseElementsAttr::get(
                   mlir::RankedTensorType::get(dims, part), values));
      SmallVector<Value> at(indices.begin(), indices.end());
      at.push_back(b.create<mlir::arith::ConstantIndexOp>(loc, 0));
      re = b.create<mlir::tensor::ExtractOp>(loc, tensor, at);
      at.back() = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
      im = b.create<mlir::tensor::ExtractOp>(loc, tensor, at);
    }
    return b.create<mlir::complex::CreateOp>(loc, complex, re, im).getResult();
  }
  auto attrOf = [&](int64_t i) -> mlir::TypedAttr {
    uint64_t bits = literal.getBits(i);
    if (auto f = llvm::dyn_cast<mlir::FloatType>(element))
      return b.getFloatAttr(f, llvm::APFloat(f.getFloatSemantics(),
                                             llvm::APInt(f.getWidth(), bits)));
    return b.getIntegerAttr(element,
                            llvm::APInt(element.getIntOrFloatBitWidth(), bits));
  };
  if (literal.rank() == 0 || literal.elementCount() == 1) {
    // A one-element constant reads the same value at any index.
    return b.create<mlir::arith::ConstantOp>(loc, attrOf(0)).getResult();
  }
  auto type = mlir::RankedTensorType::get(literal.dims(), element);
  SmallVector<mlir::Attribute> values;
  values.reserve(literal.elementCount());
  for (int64_t i = 0; i < literal.elementCount(); ++i)
    values.push_back(attrOf(i));
  Value tensor = b.create<mlir::arith::ConstantOp>(
      loc, mlir::DenseElementsAttr::get(type, values));
  return b.create<mlir::tensor::ExtractOp>(loc, tensor, indices).getResult();
}

mlir::FailureOr<Value>
ElementalEmitter::emitIota(const HloInstruction &instruction,
                           ValueRange indices) {
  Location loc = b.getUnknownLoc();
  Value index = indices[instruction.attributes().iotaDimension];
  PrimitiveType type = instruction.shape().elementType;
  ScalarOpEmitter ops(b, loc);
  Value i64 = b.create<mlir::arith::IndexCastOp>(loc, b.getI64Type(), index);
  mlir::FailureOr<Value> v = ops.convert(i64, PrimitiveType::S64, type);
  if (mlir::failed(v))
    return fail(instruction, ops.error());
  return *v;
}

mlir::FailureOr<Value>
ElementalEmitter::emitThroughMap(const HloInstruction &instruction,
                                 ValueRange indices) {
  Expected<HloInstructionIndexing> reads =
      computeOutputToInputIndexing(instruction, 0, b.getContext());
  if (!reads)
    return fail(instruction, reads.error().message);
  if (reads->isUnknown(0))
    return fail(instruction, "no indexing maps for this op");
  if (reads->maps.empty() || reads->maps[0].size() != 1)
    return fail(instruction, "expected one indexing map for operand 0");
  const IndexingMap &map = reads->maps[0].front();
  if (map.getNumSymbols() != 0)
    return fail(instruction, "indexing map has symbols: " + map.toString());
  SmallVector<Value> operandIndex =
      emitApplyIndexing(b, b.getUnknownLoc(), map, indices, {});
  return emitOperand(instruction, 0, operandIndex);
}

mlir::FailureOr<Value>
ElementalEmitter::emitPad(const HloInstruction &instruction,
                          ValueRange indices) {
  Location loc = b.getUnknownLoc();
  Expected<HloInstructionIndexing> reads =
      computeOutputToInputIndexing(instruction, 0, b.getContext());
  if (!reads)
    return fail(instruction, reads.error().message);
  if (reads->maps.empty() || reads->maps[0].empty())
    return fail(instruction, "expected an indexing map for operand 0");
  const IndexingMap &map = reads->maps[0].front();
  auto padValue = emitOperand(instruction, 1, {});
  if (mlir::failed(padValue))
    return mlir::failure();
  if (map.isKnownEmpty())
    return *padValue;
  // The operand is read only inside the map's domain: an scf.if, so that no
  // out-of-bounds index is ever used.
  Value inDomain = emitInDomain(b, loc, map, indices, {}, false);
  auto ifOp = b.create<mlir::scf::IfOp>(loc, padValue->getType(), inDomain,
                                        /*withElseRegion=*/true);
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    Scope scope(*this);
    b.setInsertionPointToStart(ifOp.thenBlock());
    SmallVector<Value> operandIndex =
        emitApplyIndexing(b, loc, map, indices, {});
    auto v = emitOperand(instruction, 0, operandIndex);
    if (mlir::failed(v))
      return mlir::failure();
    b.create<mlir::scf::YieldOp>(loc, *v);
    b.setInsertionPointToStart(ifOp.elseBlock());
    b.create<mlir::scf::YieldOp>(loc, *padValue);
  }
  return ifOp.getResult(0);
}

mlir::FailureOr<Value>
ElementalEmitter::emitConcatenate(const HloInstruction &instruction,
                                  ValueRange indices) {
  Location loc = b.getUnknownLoc();
  int64_t dim = instruction.dimensions().front();
  mlir::Type type =
      getStorageType(instruction.shape().elementType, b.getContext());
  // if (i < end0) operand0 else if (i < end1) operand1 ... else operandN-1
  Value index = indices[dim];
  mlir::OpBuilder::InsertionGuard guard(b);
  Value result;
  mlir::scf::IfOp outer;
  int64_t offset = 0;
  int64_t n = instruction.operandCount();
  for (int64_t k = 0; k < n; ++k) {
    int64_t size = instruction.operand(k)->shape().dims[dim];
    SmallVector<Value> operandIndex(indices.begin(), indices.end());
    auto emitOperandAt = [&]() -> mlir::FailureOr<Value> {
      Scope scope(*this);
      if (offset != 0)
        operandIndex[dim] = b.create<mlir::arith::SubIOp>(
            loc, index, b.create<mlir::arith::ConstantIndexOp>(loc, offset));
      return emitOperand(instruction, k, operandIndex);
    };
    if (k == n - 1) {
      auto v = emitOperandAt();
      if (mlir::failed(v))
        return mlir::failure();
      if (!outer)
        return *v;
      b.create<mlir::scf::YieldOp>(loc, *v);
      break;
    }
    Value end = b.create<mlir::arith::ConstantIndexOp>(loc, offset + size);
    Value inside = b.create<mlir::arith::CmpIOp>(
        loc, mlir::arith::CmpIPredicate::slt, index, end);
    auto ifOp = b.create<mlir::scf::IfOp>(loc, type, inside, true);
    if (!outer) {
      outer = ifOp;
      result = ifOp.getResult(0);
    } else {
      b.create<mlir::scf::YieldOp>(loc, ifOp.getResult(0));
    }
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto v = emitOperandAt();
    if (mlir::failed(v))
      return mlir::failure();
    b.create<mlir::scf::YieldOp>(loc, *v);
    b.setInsertionPointToStart(ifOp.elseBlock());
    offset += size;
  }
  return result;
}

/// Loops over `bounds` (row-major, the last one innermost) with
/// accumulators; `body` gets the induction variables and the accumulators
/// and returns the next accumulators.
static mlir::FailureOr<SmallVector<Value>>
emitLoopNest(mlir::OpBuilder &b, Location loc, llvm::ArrayRef<int64_t> bounds,
             ValueRange inits,
             llvm::function_ref<mlir::FailureOr<SmallVector<Value>>(ValueRange,
                                                                    ValueRange)>
                 body) {
  SmallVector<Value> ivs;
  std::function<mlir::FailureOr<SmallVector<Value>>(size_t, ValueRange)> nest =
      [&](size_t level,
          ValueRange accs) -> mlir::FailureOr<SmallVector<Value>> {
    if (level == bounds.size())
      return body(ivs, accs);
    Value lo = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
    Value hi = b.create<mlir::arith::ConstantIndexOp>(loc, bounds[level]);
    Value step = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
    auto forOp = b.create<mlir::scf::ForOp>(loc, lo, hi, step, accs);
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    ivs.push_back(forOp.getInductionVar());
    auto next = nest(level + 1, forOp.getRegionIterArgs());
    ivs.pop_back();
    if (mlir::failed(next))
      return mlir::failure();
    b.create<mlir::scf::YieldOp>(loc, *next);
    return SmallVector<Value>(forOp.getResults());
  };
  return nest(0, inits);
}

/// Lanes of emitPartialReduce (reducesInPartials, HloEvaluator.h): one
/// 512-bit vector of f32 or two of 16-bit values, or four 256-bit ones of
/// f64 after LLVM's SLP vectorizer. f32/f64 max/min (llvm.maximum) and
/// integer reductions are not among them: LLVM's loop vectorizer takes them
/// as they are, across the threads (a row max of f32[4096,4099] runs near
/// copy speed; on the CPU -tessel-min-max-on-bits first makes an f32 one
/// a maximum that may drop NaNs and a sum that shows them).
static constexpr int64_t kPartialLanes = kReductionPartials;

mlir::FailureOr<SmallVector<Value>> ElementalEmitter::emitPartialReduce(
    const HloInstruction &instruction, ValueRange indices,
    llvm::ArrayRef<int64_t> bounds, const std::vector<bool> &isReduced,
    Value init) {
  // The compiler's reduction order (reducesInPartials, which the evaluator
  // reproduces with compilerReductionOrder): the minor reduced dim runs as
  // kPartialLanes independent partial results over consecutive elements,
  // which LLVM turns into one vector operation per chunk, then they are
  // folded into the accumulator in order, then the tail.
  Location loc = b.getUnknownLoc();
  const Shape &inputShape = instruction.operand(0)->shape();
  const HloComputation &reducer = *instruction.calledComputation();
  int64_t size = bounds.back();
  int64_t chunks = size / kPartialLanes;
  auto element = [&](ValueRange outer, Value minor) -> mlir::FailureOr<Value> {
    SmallVector<Value> inputIndex;
    size_t kept = 0, red = 0;
    for (int64_t dim = 0; dim < inputShape.rank(); ++dim) {
      if (!isReduced[dim])
        inputIndex.push_back(indices[kept++]);
      else if (red < outer.size())
        inputIndex.push_back(outer[red++]);
      else
        inputIndex.push_back(minor);
    }
    return emitOperand(instruction, 0, inputIndex);
  };
  auto combine = [&](Value acc, Value x) -> mlir::FailureOr<Value> {
    auto r = emitScalarComputation(reducer, {acc, x});
    if (mlir::failed(r))
      return mlir::failure();
    return r->front();
  };
  return emitLoopNest(
      b, loc, bounds.drop_back(), {init},
      [&](ValueRange outer,
          ValueRange accs) -> mlir::FailureOr<SmallVector<Value>> {
        SmallVector<Value> partials;
        {
          Scope scope(*this);
          for (int64_t j = 0; j < kPartialLanes; ++j) {
            auto x =
                element(outer, b.create<mlir::arith::ConstantIndexOp>(loc, j));
            if (mlir::failed(x))
              return mlir::failure();
            partials.push_back(*x);
          }
        }
        Value one = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
        Value end = b.create<mlir::arith::ConstantIndexOp>(loc, chunks);
        auto loop = b.create<mlir::scf::ForOp>(loc, one, end, one, partials);
        {
          mlir::OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(loop.getBody());
          Scope scope(*this);
          Value first = b.create<mlir::arith::MulIOp>(
              loc, loop.getInductionVar(),
              b.create<mlir::arith::ConstantIndexOp>(loc, kPartialLanes));
          SmallVector<Value> next;
          for (int64_t j = 0; j < kPartialLanes; ++j) {
            Value at = b.create<mlir::arith::AddIOp>(
                loc, first, b.create<mlir::arith::ConstantIndexOp>(loc, j));
            auto x = element(outer, at);
            if (mlir::failed(x))
              return mlir::failure();
            auto r = combine(loop.getRegionIterArgs()[j], *x);
            if (mlir::failed(r))
              return mlir::failure();
            next.push_back(*r);
          }
          b.create<mlir::scf::YieldOp>(loc, next);
        }
        Value acc = accs.front();
        for (Value partial : loop.getResults()) {
          auto r = combine(acc, partial);
          if (mlir::failed(r))
            return mlir::failure();
          acc = *r;
        }
        // The elements past the last whole chunk.
        for (int64_t t = chunks * kPartialLanes; t < size; ++t) {
          Scope scope(*this);
          auto x =
              element(outer, b.create<mlir::arith::ConstantIndexOp>(loc, t));
          if (mlir::failed(x))
            return mlir::failure();
          auto r = combine(acc, *x);
          if (mlir::failed(r))
            return mlir::failure();
          acc = *r;
        }
        return SmallVector<Value>{acc};
      });
}

mlir::FailureOr<SmallVector<Value>>
ElementalEmitter::emitReduce(const HloInstruction &instruction,
                             ValueRange indices) {
  Location loc = b.getUnknownLoc();
  int64_t n = instruction.operandCount() / 2;
  const Shape &inputShape = instruction.operand(0)->shape();
  const std::vector<int64_t> &reduced = instruction.dimensions();
  SmallVector<int64_t> bounds;
  std::vector<bool> isReduced(inputShape.rank(), false);
  for (int64_t dim : reduced)
    isReduced[dim] = true;
  // Reduced dims in increasing order: the evaluator's row-major order.
  for (int64_t dim = 0; dim < inputShape.rank(); ++dim)
    if (isReduced[dim])
      bounds.push_back(inputShape.dims[dim]);
  SmallVector<Value> inits;
  for (int64_t i = 0; i < n; ++i) {
    auto v = emitOperand(instruction, n + i, {});
    if (mlir::failed(v))
      return mlir::failure();
    inits.push_back(*v);
  }
  if (reducesInPartials(instruction))
    return emitPartialReduce(instruction, indices, bounds, isReduced,
                             inits.front());
  return emitLoopNest(
      b, loc, bounds, inits,
      [&](ValueRange ivs,
          ValueRange accs) -> mlir::FailureOr<SmallVector<Value>> {
        Scope scope(*this);
        SmallVector<Value> inputIndex;
        size_t kept = 0, red = 0;
        for (int64_t dim = 0; dim < inputShape.rank(); ++dim)
          inputIndex.push_back(isReduced[dim] ? ivs[red++] : indices[kept++]);
        SmallVector<Value> args(accs.begin(), accs.end());
        for (int64_t i = 0; i < n; ++i) {
          auto v = emitOperand(instruction, i, inputIndex);
          if (mlir::failed(v))
            return mlir::failure();
          args.push_back(*v);
        }
        return emitScalarComputation(*instruction.calledComputation(), args);
      });
}

mlir::FailureOr<SmallVector<Value>>
ElementalEmitter::emitCall(const HloInstruction &instruction,
                           ValueRange indices) {
  // The called computation's ROOT at the same index, its parameters
  // standing for the call's operands.
  const HloComputation &callee = *instruction.calledComputation();
  auto saved = callArguments;
  for (HloInstruction *param : callee.parameters())
    callArguments[param] = {&instruction, param->parameterNumber()};
  mlir::FailureOr<SmallVector<Value>> result = SmallVector<Value>{};
  {
    // The callee's instructions may be emitted again for another call.
    Scope scope(*this);
    const HloInstruction *root = callee.root();
    std::vector<const HloInstruction *> values;
    if (root->opcode() == HloOpcode::Tuple)
      values.assign(root->operands().begin(), root->operands().end());
    else
      values.push_back(root);
    for (const HloInstruction *value : values) {
      auto emitted = emit(*value, indices);
      if (mlir::failed(emitted)) {
        result = mlir::failure();
        break;
      }
      result->append(emitted->begin(), emitted->end());
    }
  }
  callArguments = std::move(saved);
  return result;
}

mlir::FailureOr<SmallVector<Value>>
ElementalEmitter::emitReduceWindow(const HloInstruction &instruction,
                                   ValueRange indices) {
  Location loc = b.getUnknownLoc();
  int64_t n = instruction.operandCount() / 2;
  const Shape &inputShape = instruction.operand(0)->shape();
  const std::vector<WindowDim> &window = instruction.attributes().window;
  if (static_cast<int64_t>(window.size()) != inputShape.rank())
    return fail(instruction, "the window has " + std::to_string(window.size()) +
                                 " dims, the operand " +
                                 std::to_string(inputShape.rank()));
  SmallVector<int64_t> bounds;
  for (const WindowDim &w : window)
    bounds.push_back(w.size);
  SmallVector<Value> inits;
  for (int64_t i = 0; i < n; ++i) {
    auto v = emitOperand(instruction, n + i, {});
    if (mlir::failed(v))
      return mlir::failure();
    inits.push_back(*v);
  }
  using mlir::arith::CmpIPredicate;
  SmallVector<mlir::Type> types;
  for (Value init : inits)
    types.push_back(init.getType());
  auto c = [&](int64_t v) -> Value {
    return b.create<mlir::arith::ConstantIndexOp>(loc, v);
  };
  // Window positions in row-major order (the evaluator's); a position in
  // the padding or in a hole of the base dilation adds nothing.
  return emitLoopNest(
      b, loc, bounds, inits,
      [&](ValueRange ivs,
          ValueRange accs) -> mlir::FailureOr<SmallVector<Value>> {
        Value inside = b.create<mlir::arith::ConstantIntOp>(loc, 1, 1);
        SmallVector<Value> inputIndex;
        for (size_t d = 0; d < window.size(); ++d) {
          const WindowDim &w = window[d];
          Value k = ivs[d];
          if (w.reversal)
            k = b.create<mlir::arith::SubIOp>(loc, c(w.size - 1), k);
          // Position in the padded, dilated base.
          Value pos = b.create<mlir::arith::AddIOp>(
              loc, b.create<mlir::arith::MulIOp>(loc, indices[d], c(w.stride)),
              b.create<mlir::arith::MulIOp>(loc, k, c(w.windowDilation)));
          pos = b.create<mlir::arith::SubIOp>(loc, pos, c(w.paddingLow));
          int64_t extent = (inputShape.dims[d] - 1) * w.baseDilation + 1;
          inside = b.create<mlir::arith::AndIOp>(
              loc, inside,
              b.create<mlir::arith::CmpIOp>(loc, CmpIPredicate::sge, pos,
                                            c(0)));
          inside = b.create<mlir::arith::AndIOp>(
              loc, inside,
              b.create<mlir::arith::CmpIOp>(loc, CmpIPredicate::slt, pos,
                                            c(extent)));
          if (w.baseDilation > 1) {
            Value rem =
                b.create<mlir::arith::RemSIOp>(loc, pos, c(w.baseDilation));
            inside = b.create<mlir::arith::AndIOp>(
                loc, inside,
                b.create<mlir::arith::CmpIOp>(loc, CmpIPredicate::eq, rem,
                                              c(0)));
            pos = b.create<mlir::arith::DivSIOp>(loc, pos, c(w.baseDilation));
          }
          inputIndex.push_back(pos);
        }
        auto ifOp = b.create<mlir::scf::IfOp>(loc, types, inside, true);
        mlir::OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        {
          Scope scope(*this);
          SmallVector<Value> args(accs.begin(), accs.end());
          for (int64_t i = 0; i < n; ++i) {
            auto v = emitOperand(instruction, i, inputIndex);
            if (mlir::failed(v))
              return mlir::failure();
            args.push_back(*v);
          }
          auto next =
              emitScalarComputation(*instruction.calledComputation(), args);
          if (mlir::failed(next))
            return mlir::failure();
          b.create<mlir::scf::YieldOp>(loc, *next);
        }
        b.setInsertionPointToStart(ifOp.elseBlock());
        b.create<mlir::scf::YieldOp>(loc, accs);
        return SmallVector<Value>(ifOp.getResults());
      });
}

mlir::FailureOr<Value>
ElementalEmitter::emitDot(const HloInstruction &instruction,
                          ValueRange indices) {
  Location loc = b.getUnknownLoc();
  const DotDimensionNumbers &dnums =
      instruction.attributes().dotDimensionNumbers;
  const Shape &lhs = instruction.operand(0)->shape();
  const Shape &rhs = instruction.operand(1)->shape();
  PrimitiveType resultType = instruction.shape().elementType;
  bool isFloatDot = isFloat(resultType);
  // Result dims: batch, lhs free, rhs free.
  auto freeDims = [](const Shape &s, const std::vector<int64_t> &batch,
                     const std::vector<int64_t> &contracting) {
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < s.rank(); ++d)
      if (!llvm::is_contained(batch, d) && !llvm::is_contained(contracting, d))
        dims.push_back(d);
    return dims;
  };
  SmallVector<int64_t> lhsFree =
      freeDims(lhs, dnums.lhsBatchDims, dnums.lhsContractingDims);
  SmallVector<int64_t> rhsFree =
      freeDims(rhs, dnums.rhsBatchDims, dnums.rhsContractingDims);
  SmallVector<int64_t> bounds;
  for (int64_t d : dnums.lhsContractingDims)
    bounds.push_back(lhs.dims[d]);
  ScalarOpEmitter ops(b, loc);
  // The evaluator accumulates float products in f64 and rounds once;
  // integers wrap in the result type.
  mlir::Type accType = isFloatDot ? mlir::Type(b.getF64Type())
                                  : getStorageType(resultType, b.getContext());
  Value zero = isFloatDot ? Value(b.create<mlir::arith::ConstantOp>(
                                loc, b.getF64FloatAttr(0.0)))
                          : Value(b.create<mlir::arith::ConstantOp>(
                                loc, b.getIntegerAttr(accType, 0)));
  PrimitiveType accPrim = isFloatDot ? PrimitiveType::F64 : resultType;
  auto sum = emitLoopNest(
      b, loc, bounds, {zero},
      [&](ValueRange ivs,
          ValueRange accs) -> mlir::FailureOr<SmallVector<Value>> {
        Scope scope(*this);
        SmallVector<Value> lhsIndex(lhs.rank()), rhsIndex(rhs.rank());
        size_t pos = 0;
        for (size_t i = 0; i < dnums.lhsBatchDims.size(); ++i, ++pos) {
          lhsIndex[dnums.lhsBatchDims[i]] = indices[pos];
          rhsIndex[dnums.rhsBatchDims[i]] = indices[pos];
        }
        for (int64_t d : lhsFree)
          lhsIndex[d] = indices[pos++];
        for (int64_t d : rhsFree)
          rhsIndex[d] = indices[pos++];
        for (size_t i = 0; i < dnums.lhsContractingDims.size(); ++i) {
          lhsIndex[dnums.lhsContractingDims[i]] = ivs[i];
          rhsIndex[dnums.rhsContractingDims[i]] = ivs[i];
        }
        return emitMultiplyAdd(instruction, lhsIndex, rhsIndex, accs[0],
                               accPrim);
      });
  if (mlir::failed(sum))
    return mlir::failure();
  auto result = ops.convert(sum->front(), accPrim, resultType);
  if (mlir::failed(result))
    return fail(instruction, ops.error());
  return *result;
}

mlir::FailureOr<SmallVector<Value>>
ElementalEmitter::emitMultiplyAdd(const HloInstruction &instruction,
                                  ValueRange lhsIndex, ValueRange rhsIndex,
                                  Value acc, PrimitiveType accType) {
  ScalarOpEmitter ops(b, b.getUnknownLoc());
  auto x = emitOperand(instruction, 0, lhsIndex);
  auto y = emitOperand(instruction, 1, rhsIndex);
  if (mlir::failed(x) || mlir::failed(y))
    return mlir::failure();
  auto xa =
      ops.convert(*x, instruction.operand(0)->shape().elementType, accType);
  auto ya =
      ops.convert(*y, instruction.operand(1)->shape().elementType, accType);
  if (mlir::failed(xa) || mlir::failed(ya))
    return fail(instruction, ops.error());
  auto product = ops.binary(HloOpcode::Multiply, *xa, *ya, accType);
  if (mlir::failed(product))
    return fail(instruction, ops.error());
  auto next = ops.binary(HloOpcode::Add, acc, *product, accType);
  if (mlir::failed(next))
    return fail(instruction, ops.error());
  return SmallVector<Value>{*next};
}

mlir::FailureOr<Value>
ElementalEmitter::emitConvolution(const HloInstruction &instruction,
                                  ValueRange indices) {
  // The evaluator's sum (EvaluatorConvolution.cpp) at one output index:
  // kernel positions in row-major order, input features inside; floats
  // accumulate in f64 and round once, integers wrap.
  Expected<ConvolutionDimensions> c = getConvolutionDimensions(instruction);
  if (!c)
    return fail(instruction, c.error().message);
  Location loc = b.getUnknownLoc();
  const Shape &lhs = instruction.operand(0)->shape();
  const Shape &rhs = instruction.operand(1)->shape();
  PrimitiveType resultType = instruction.shape().elementType;
  bool isFloatResult = isFloat(resultType);
  for (PrimitiveType t : {lhs.elementType, rhs.elementType, resultType})
    if (t == PrimitiveType::Pred || isFloat(t) != isFloatResult)
      return fail(instruction,
                  "a convolution of " +
                      std::string(primitiveTypeName(lhs.elementType)) +
                      " and " +
                      std::string(primitiveTypeName(rhs.elementType)) +
                      " into " + std::string(primitiveTypeName(resultType)) +
                      " is not supported by the compiler (all float or all "
                      "integer)");
  size_t spatial = c->lhs.spatial.size();
  int64_t batch = lhs.dims[c->lhs.first];
  int64_t kernelIn = rhs.dims[c->rhs.first],
          kernelOut = rhs.dims[c->rhs.second];
  int64_t outGroupSize = kernelOut / c->featureGroups;
  int64_t batchGroupOut = kernelOut / c->batchGroups;
  int64_t batchGroupSize = batch / c->batchGroups;
  auto index = [&](int64_t v) -> Value {
    return b.create<mlir::arith::ConstantIndexOp>(loc, v);
  };
  Value n = indices[c->out.first], f = indices[c->out.second];
  // The lhs batch (batch groups) and first input feature (feature groups).
  Value lhsBatch = b.create<mlir::arith::AddIOp>(
      loc, n,
      b.create<mlir::arith::MulIOp>(
          loc, b.create<mlir::arith::DivUIOp>(loc, f, index(batchGroupOut)),
          index(batchGroupSize)));
  Value firstFeature = b.create<mlir::arith::MulIOp>(
      loc, b.create<mlir::arith::DivUIOp>(loc, f, index(outGroupSize)),
      index(kernelIn));
  ScalarOpEmitter ops(b, loc);
  PrimitiveType accPrim = isFloatResult ? PrimitiveType::F64 : resultType;
  mlir::Type accType = getStorageType(accPrim, b.getContext());
  Value zero = isFloatResult ? Value(b.create<mlir::arith::ConstantOp>(
                                   loc, b.getF64FloatAttr(0.0)))
                             : Value(b.create<mlir::arith::ConstantOp>(
                                   loc, b.getIntegerAttr(accType, 0)));
  SmallVector<int64_t> kernelDims;
  for (int64_t d : c->rhs.spatial)
    kernelDims.push_back(rhs.dims[d]);
  using mlir::arith::CmpIPredicate;
  auto sum = emitLoopNest(
      b, loc, kernelDims, {zero},
      [&](ValueRange k,
          ValueRange accs) -> mlir::FailureOr<SmallVector<Value>> {
        Scope scope(*this);
        SmallVector<Value> lhsIndex(lhs.rank()), rhsIndex(rhs.rank());
        lhsIndex[c->lhs.first] = lhsBatch;
        rhsIndex[c->rhs.second] = f;
        Value inside = b.create<mlir::arith::ConstantIntOp>(loc, 1, 1);
        for (size_t s = 0; s < spatial; ++s) {
          const WindowDim &w = c->window[s];
          // p = y * stride + k * rhs_dilate - pad_low in the dilated input.
          Value p = b.create<mlir::arith::SubIOp>(
              loc,
              b.create<mlir::arith::AddIOp>(
                  loc,
                  b.create<mlir::arith::MulIOp>(loc, indices[c->out.spatial[s]],
                                                index(w.stride)),
                  b.create<mlir::arith::MulIOp>(loc, k[s],
                                                index(w.windowDilation))),
              index(w.paddingLow));
          Value q =
              b.create<mlir::arith::DivSIOp>(loc, p, index(w.baseDilation));
          Value ok = b.create<mlir::arith::AndIOp>(
              loc,
              b.create<mlir::arith::CmpIOp>(loc, CmpIPredicate::sge, p,
                                            index(0)),
              b.create<mlir::arith::CmpIOp>(
                  loc, CmpIPredicate::eq,
                  b.create<mlir::arith::RemSIOp>(loc, p, index(w.baseDilation)),
                  index(0)));
          ok = b.create<mlir::arith::AndIOp>(
              loc, ok,
              b.create<mlir::arith::CmpIOp>(
                  loc, CmpIPredicate::slt, q,
                  index(lhs.dims[c->lhs.spatial[s]])));
          inside = b.create<mlir::arith::AndIOp>(loc, inside, ok);
          lhsIndex[c->lhs.spatial[s]] = q;
          rhsIndex[c->rhs.spatial[s]] =
              w.reversal ? Value(b.create<mlir::arith::SubIOp>(
                               loc, index(kernelDims[s] - 1), k[s]))
                         : k[s];
        }
        // Outside the input (padding, between dilated elements) the
        // position adds nothing and nothing is read.
        auto ifOp = b.create<mlir::scf::IfOp>(loc, accType, inside, true);
        mlir::OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.elseBlock());
        b.create<mlir::scf::YieldOp>(loc, accs[0]);
        b.setInsertionPointToStart(ifOp.thenBlock());
        Scope thenScope(*this);
        auto features = emitLoopNest(
            b, loc, {kernelIn}, {accs[0]},
            [&](ValueRange cs,
                ValueRange inner) -> mlir::FailureOr<SmallVector<Value>> {
              Scope innerScope(*this);
              SmallVector<Value> li = lhsIndex, ri = rhsIndex;
              li[c->lhs.second] =
                  b.create<mlir::arith::AddIOp>(loc, firstFeature, cs[0]);
              ri[c->rhs.first] = cs[0];
              return emitMultiplyAdd(instruction, li, ri, inner[0], accPrim);
            });
        if (mlir::failed(features))
          return mlir::failure();
        b.create<mlir::scf::YieldOp>(loc, features->front());
        return SmallVector<Value>{ifOp.getResult(0)};
      });
  if (mlir::failed(sum))
    return mlir::failure();
  auto result = ops.convert(sum->front(), accPrim, resultType);
  if (mlir::failed(result))
    return fail(instruction, ops.error());
  return *result;
}

Value ElementalEmitter::emitClampedStart(Value value, PrimitiveType type,
                                         int64_t max) {
  // As the evaluator: a u64 past INT64_MAX is out of range, the largest
  // start; then XLA's clamp into [0, max].
  Location loc = b.getUnknownLoc();
  Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
  Value start;
  if (isUnsignedInteger(type)) {
    start = b.create<mlir::arith::IndexCastUIOp>(loc, b.getIndexType(), value);
    if (bitWidth(type) == 64) {
      Value negative = b.create<mlir::arith::CmpIOp>(
          loc, mlir::arith::CmpIPredicate::slt, start, zero);
      start = b.create<mlir::arith::SelectOp>(
          loc, negative,
          b.create<mlir::arith::ConstantIndexOp>(
              loc, std::numeric_limits<int64_t>::max()),
          start);
    }
  } else {
    start = b.create<mlir::arith::IndexCastOp>(loc, b.getIndexType(), value);
  }
  start = b.create<mlir::arith::MaxSIOp>(loc, start, zero);
  return b.create<mlir::arith::MinSIOp>(
      loc, start, b.create<mlir::arith::ConstantIndexOp>(loc, max));
}

mlir::FailureOr<SmallVector<Value>> ElementalEmitter::emitStartIndices(
    const HloInstruction &instruction, int64_t firstOperand,
    llvm::ArrayRef<int64_t> operandDims, llvm::ArrayRef<int64_t> sliceDims) {
  SmallVector<Value> starts;
  for (size_t d = 0; d < operandDims.size(); ++d) {
    const HloInstruction *operand = instruction.operand(firstOperand + d);
    auto v = emitOperand(instruction, firstOperand + d, {});
    if (mlir::failed(v))
      return mlir::failure();
    starts.push_back(emitClampedStart(*v, operand->shape().elementType,
                                      operandDims[d] - sliceDims[d]));
  }
  return starts;
}

mlir::FailureOr<Value>
ElementalEmitter::emitGather(const HloInstruction &instruction,
                             ValueRange indices) {
  // The evaluator's walk (EvaluatorGather.cpp) at one output index.
  Expected<GatherDimensions> g = getGatherDimensions(instruction);
  if (!g)
    return fail(instruction, g.error().message);
  Location loc = b.getUnknownLoc();
  const Shape &operand = instruction.operand(0)->shape();
  const Shape &startIndices = instruction.operand(1)->shape();
  PrimitiveType indexType = startIndices.elementType;
  SmallVector<Value> batch;
  for (int64_t p : g->batchPositions)
    batch.push_back(indices[p]);
  Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
  SmallVector<Value> from(operand.rank(), zero);
  for (size_t k = 0; k < g->startIndexMap.size(); ++k) {
    SmallVector<Value> at;
    for (int64_t d = 0, next = 0; d < startIndices.rank(); ++d)
      at.push_back(d == g->indexVectorDim
                       ? Value(b.create<mlir::arith::ConstantIndexOp>(loc, k))
                       : batch[next++]);
    auto v = emitOperand(instruction, 1, at);
    if (mlir::failed(v))
      return mlir::failure();
    int64_t d = g->startIndexMap[k];
    from[d] =
        emitClampedStart(*v, indexType, operand.dims[d] - g->sliceSizes[d]);
  }
  for (size_t k = 0; k < g->operandBatchingDims.size(); ++k) {
    int64_t dim = g->startIndicesBatchingDims[k];
    from[g->operandBatchingDims[k]] =
        batch[dim < g->indexVectorDim ? dim : dim - 1];
  }
  for (size_t w = 0; w < g->windowDims.size(); ++w)
    from[g->windowDims[w]] = b.create<mlir::arith::AddIOp>(
        loc, from[g->windowDims[w]], indices[g->offsetDims[w]]);
  return emitOperand(instruction, 0, from);
}

mlir::FailureOr<Value>
ElementalEmitter::emitDynamicSlice(const HloInstruction &instruction,
                                   ValueRange indices) {
  Location loc = b.getUnknownLoc();
  const Shape &operand = instruction.operand(0)->shape();
  auto starts =
      emitStartIndices(instruction, 1, operand.dims, instruction.shape().dims);
  if (mlir::failed(starts))
    return mlir::failure();
  SmallVector<Value> operandIndex;
  for (size_t d = 0; d < indices.size(); ++d)
    operandIndex.push_back(
        b.create<mlir::arith::AddIOp>(loc, (*starts)[d], indices[d]));
  return emitOperand(instruction, 0, operandIndex);
}

mlir::FailureOr<Value>
ElementalEmitter::emitDynamicUpdateSlice(const HloInstruction &instruction,
                                         ValueRange indices) {
  Location loc = b.getUnknownLoc();
  const Shape &update = instruction.operand(1)->shape();
  auto starts =
      emitStartIndices(instruction, 2, instruction.shape().dims, update.dims);
  if (mlir::failed(starts))
    return mlir::failure();
  using mlir::arith::CmpIPredicate;
  Value inside = b.create<mlir::arith::ConstantIntOp>(loc, 1, 1);
  SmallVector<Value> updateIndex;
  for (size_t d = 0; d < indices.size(); ++d) {
    Value rel = b.create<mlir::arith::SubIOp>(loc, indices[d], (*starts)[d]);
    Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
    Value size = b.create<mlir::arith::ConstantIndexOp>(loc, update.dims[d]);
    inside = b.create<mlir::arith::AndIOp>(
        loc, inside,
        b.create<mlir::arith::CmpIOp>(loc, CmpIPredicate::sge, rel, zero));
    inside = b.create<mlir::arith::AndIOp>(
        loc, inside,
        b.create<mlir::arith::CmpIOp>(loc, CmpIPredicate::slt, rel, size));
    updateIndex.push_back(rel);
  }
  mlir::Type type =
      getStorageType(instruction.shape().elementType, b.getContext());
  auto ifOp = b.create<mlir::scf::IfOp>(loc, type, inside, true);
  mlir::OpBuilder::InsertionGuard guard(b);
  {
    Scope scope(*this);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto v = emitOperand(instruction, 1, updateIndex);
    if (mlir::failed(v))
      return mlir::failure();
    b.create<mlir::scf::YieldOp>(loc, *v);
  }
  {
    Scope scope(*this);
    b.setInsertionPointToStart(ifOp.elseBlock());
    auto v = emitOperand(instruction, 0, indices);
    if (mlir::failed(v))
      return mlir::failure();
    b.create<mlir::scf::YieldOp>(loc, *v);
  }
  return ifOp.getResult(0);
}

} // namespace tessel
