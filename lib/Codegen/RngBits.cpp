//===- RngBits.cpp - rng-bit-generator, one element at a time -------------===//
#include "RngBits.h"

#include "ElementalEmitter.h"

#include "tessel/Hlo/HloEvaluator.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace tessel {

namespace {

using mlir::Value;
namespace arith = mlir::arith;

/// Integer arithmetic on i32 and i64 values.
struct Ints {
  mlir::OpBuilder &b;
  mlir::Location loc;

  Value c32(uint32_t v) {
    return b.create<arith::ConstantIntOp>(loc, static_cast<int32_t>(v), 32);
  }
  Value c64(uint64_t v) {
    return b.create<arith::ConstantIntOp>(loc, static_cast<int64_t>(v), 64);
  }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
  Value xor_(Value x, Value y) { return b.create<arith::XOrIOp>(loc, x, y); }
  Value or_(Value x, Value y) { return b.create<arith::OrIOp>(loc, x, y); }
  Value low(Value v64) {
    return b.create<arith::TruncIOp>(loc, b.getI32Type(), v64);
  }
  Value high(Value v64) {
    return low(b.create<arith::ShRUIOp>(loc, v64, c64(32)));
  }
  Value wide(Value v32) {
    return b.create<arith::ExtUIOp>(loc, b.getI64Type(), v32);
  }
  /// lo | hi << 32.
  Value join(Value lo, Value hi) {
    return or_(wide(lo), b.create<arith::ShLIOp>(loc, wide(hi), c64(32)));
  }
  Value rotateLeft(Value v, int distance) {
    return or_(b.create<arith::ShLIOp>(loc, v, c32(distance)),
               b.create<arith::ShRUIOp>(loc, v, c32(32 - distance)));
  }
  Value select(Value c, Value x, Value y) {
    return b.create<arith::SelectOp>(loc, c, x, y);
  }
  Value eq(Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, x, y);
  }
  Value index(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  Value fromIndex(Value v) {
    return b.create<arith::IndexCastUIOp>(loc, b.getI64Type(), v);
  }
};

/// Threefry-2x32, 20 rounds (EvaluatorRng.cpp, threefry).
std::pair<Value, Value> threefry(Ints &m, Value x0, Value x1, Value k0,
                                 Value k1) {
  static const int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  Value keys[3] = {k0, k1, m.xor_(m.xor_(m.c32(0x1BD11BDA), k0), k1)};
  x0 = m.add(x0, keys[0]);
  x1 = m.add(x1, keys[1]);
  for (int group = 0; group < 5; ++group) {
    for (int r : kRotations[group % 2]) {
      x0 = m.add(x0, x1);
      x1 = m.xor_(m.rotateLeft(x1, r), x0);
    }
    x0 = m.add(x0, keys[(group + 1) % 3]);
    x1 = m.add(m.add(x1, keys[(group + 2) % 3]), m.c32(group + 1));
  }
  return {x0, x1};
}

/// Philox-4x32, 10 rounds (EvaluatorRng.cpp, philox).
void philox(Ints &m, Value x[4], Value k0, Value k1) {
  for (int round = 0; round < 10; ++round) {
    Value p0 =
        m.b.create<arith::MulIOp>(m.loc, m.wide(x[0]), m.c64(0xD2511F53u));
    Value p1 =
        m.b.create<arith::MulIOp>(m.loc, m.wide(x[2]), m.c64(0xCD9E8D57u));
    Value y[4] = {m.xor_(m.xor_(m.high(p1), x[1]), k0), m.low(p1),
                  m.xor_(m.xor_(m.high(p0), x[3]), k1), m.low(p0)};
    for (int i = 0; i < 4; ++i)
      x[i] = y[i];
    k0 = m.add(k0, m.c32(0x9E3779B9u));
    k1 = m.add(k1, m.c32(0xBB67AE85u));
  }
}

/// (low, high) + n as a 128-bit counter.
std::pair<Value, Value> add128(Ints &m, Value low, Value high, Value n) {
  Value sum = m.add(low, n);
  Value carry =
      m.b.create<arith::CmpIOp>(m.loc, arith::CmpIPredicate::ult, sum, low);
  Value one = m.b.create<arith::ExtUIOp>(m.loc, m.b.getI64Type(), carry);
  return {sum, m.add(high, one)};
}

} // namespace

Value emitRngBitGeneratorElement(mlir::OpBuilder &b, mlir::Location loc,
                                 const HloInstruction &rng, int64_t element,
                                 mlir::ValueRange indices,
                                 const std::function<Value(Value)> &readState,
                                 std::string &error) {
  // The evaluator's checks (EvaluatorRng.cpp).
  const std::string *algorithm = rng.rawAttribute("algorithm");
  std::string name = algorithm ? *algorithm : "rng_default";
  bool isThreefry = name == "rng_three_fry";
  if (!isThreefry && name != "rng_philox" && name != "rng_default") {
    error = "algorithm=" + name +
            ", expected rng_default, rng_three_fry or rng_philox";
    return nullptr;
  }
  const Shape &shape = rng.shape();
  const Shape &state = rng.operand(0)->shape();
  if (!shape.isTuple() || shape.tupleShapes.size() != 2 ||
      !shape.tupleShapes[1].isArray() || !state.isArray() ||
      state.elementType != PrimitiveType::U64 || state.rank() != 1 ||
      state.dims[0] < 2 || state.dims[0] > (isThreefry ? 2 : 3) ||
      shape.tupleShapes[0].dims != state.dims) {
    error = "the state is " + state.toStringWithoutLayout() +
            ", expected u64[2]" + (isThreefry ? "" : " or u64[3]") +
            " and the same state in the result";
    return nullptr;
  }
  const Shape &bitsShape = shape.tupleShapes[1];
  int width = bitWidth(bitsShape.elementType);
  mlir::Type storage =
      getStorageType(bitsShape.elementType, b.getContext(), &error);
  if (width != 8 && width != 16 && width != 32 && width != 64) {
    error = "rng-bit-generator of " +
            std::string(primitiveTypeName(bitsShape.elementType)) +
            " is not supported";
    return nullptr;
  }
  if (!storage)
    return nullptr;
  const std::vector<int64_t> &dims = bitsShape.dims;
  int64_t rank = static_cast<int64_t>(dims.size()), n = 1;
  for (int64_t d : dims)
    n *= d;
  Ints m{b, loc};
  Value key = readState(m.index(0));
  Value k0 = m.low(key), k1 = m.high(key);
  Value counter = readState(m.index(1));
  bool three = state.dims[0] == 3;
  Value high = isThreefry ? nullptr : readState(m.index(three ? 2 : 0));

  // Threefry's blocks of narrow results pair neighbours along a split dim
  // (the evaluator's rule).
  auto [split, half, threefryBlocks] = threefryPairs(dims);
  int64_t perBlock = width == 64 ? 2 : 4;

  if (element == 0) {
    // The new state: the counter advanced by the blocks used.
    Value i = indices.front();
    Value old = readState(i);
    if (isThreefry) {
      uint64_t blocks = width == 64 ? n : threefryBlocks;
      return m.select(m.eq(i, m.index(1)), m.add(counter, m.c64(blocks)), old);
    }
    auto [lo, hi] =
        add128(m, counter, high, m.c64((n + perBlock - 1) / perBlock));
    Value result = m.select(m.eq(i, m.index(1)), lo, old);
    if (three)
      result = m.select(m.eq(i, m.index(2)), hi, result);
    return result;
  }

  // The element's row-major index and the word it takes.
  Value bits;
  if (isThreefry) {
    Value block = m.c64(0), second = nullptr;
    if (width == 64) {
      for (int64_t d = 0; d < rank; ++d)
        block = m.add(b.create<arith::MulIOp>(loc, block, m.c64(dims[d])),
                      m.fromIndex(indices[d]));
    } else {
      for (int64_t d = 0; d < rank; ++d) {
        Value at = m.fromIndex(indices[d]);
        if (d == split) {
          second = m.eq(b.create<arith::AndIOp>(loc, at, m.c64(1)), m.c64(1));
          at = b.create<arith::ShRUIOp>(loc, at, m.c64(1));
        }
        block = m.add(b.create<arith::MulIOp>(loc, block, m.c64(half[d])), at);
      }
    }
    Value c = m.add(counter, block);
    auto [o0, o1] = threefry(m, m.low(c), m.high(c), k0, k1);
    if (width == 64)
      bits = m.join(o0, o1);
    else
      bits = second ? m.select(second, o1, o0) : o0;
  } else {
    Value linear = m.c64(0);
    for (int64_t d = 0; d < rank; ++d)
      linear = m.add(b.create<arith::MulIOp>(loc, linear, m.c64(dims[d])),
                     m.fromIndex(indices[d]));
    Value blockNumber = b.create<arith::DivUIOp>(loc, linear, m.c64(perBlock));
    Value word = b.create<arith::RemUIOp>(loc, linear, m.c64(perBlock));
    auto [lo, hi] = add128(m, counter, high, blockNumber);
    Value x[4] = {m.low(lo), m.high(lo), m.low(hi), m.high(hi)};
    philox(m, x, k0, k1);
    if (width == 64) {
      Value first = m.eq(word, m.c64(0));
      bits = m.select(first, m.join(x[0], x[1]), m.join(x[2], x[3]));
    } else {
      bits = x[3];
      for (int w = 2; w >= 0; --w)
        bits = m.select(m.eq(word, m.c64(w)), x[w], bits);
    }
  }
  // The low `width` bits, as the result's element type.
  mlir::Type integer = b.getIntegerType(width);
  if (bits.getType() != integer)
    bits = b.create<arith::TruncIOp>(loc, integer, bits);
  if (storage != integer)
    bits = b.create<arith::BitcastOp>(loc, storage, bits);
  return bits;
}

} // namespace tessel
