//===- EvaluatorRng.cpp - rng-bit-generator, bit-exact with XLA -----------===//
//
// `(state', bits) = rng-bit-generator(state), algorithm=...` with a u64
// state whose element 0 is the key, as XLA's expander computes it:
//
//   rng_three_fry: Threefry-2x32 (20 rounds) of the 64-bit counter
//     state[1] + i. For 32-bit (and narrower) results one block gives two
//     neighbours along the first even dim (else the largest dim); 64-bit
//     results take both words of one block. state'[1] advances by the
//     blocks used.
//   rng_philox (and rng_default, XLA:CPU's choice): Philox-4x32 (10
//     rounds) of a 128-bit counter (state[1], state[2]; or state[1] and
//     state[0] for a two-element state, of which state' keeps the low
//     half). One block gives four consecutive 32-bit values (two 64-bit
//     ones).
//
// Results narrower than 32 bits keep the low bits of the 32-bit values.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorOps.h"

#include "tessel/Hlo/HloEvaluator.h"

namespace tessel::eval {
namespace {

uint32_t rotateLeft(uint32_t v, int distance) {
  return (v << distance) | (v >> (32 - distance));
}

/// Threefry-2x32 with 20 rounds: the block of counter words (x0, x1) under
/// key words (k0, k1).
std::pair<uint32_t, uint32_t> threefry(uint32_t x0, uint32_t x1, uint32_t k0,
                                       uint32_t k1) {
  static const int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  uint32_t keys[3] = {k0, k1, 0x1BD11BDA ^ k0 ^ k1};
  x0 += keys[0];
  x1 += keys[1];
  for (int group = 0; group < 5; ++group) {
    for (int r : kRotations[group % 2]) {
      x0 += x1;
      x1 = rotateLeft(x1, r) ^ x0;
    }
    // Key injection after every four rounds.
    x0 += keys[(group + 1) % 3];
    x1 += keys[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return {x0, x1};
}

/// Philox-4x32 with 10 rounds.
void philox(uint32_t x[4], uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(x[0]) * 0xD2511F53u;
    uint64_t p1 = uint64_t(x[2]) * 0xCD9E8D57u;
    uint32_t y[4] = {
        static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ k0, static_cast<uint32_t>(p1),
        static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ k1, static_cast<uint32_t>(p0)};
    for (int i = 0; i < 4; ++i)
      x[i] = y[i];
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

/// The 128-bit counter (low, high) plus n.
std::pair<uint64_t, uint64_t> add128(uint64_t low, uint64_t high, uint64_t n) {
  uint64_t sum = low + n;
  return {sum, high + (sum < low ? 1 : 0)};
}

} // namespace

Expected<Literal> rngBitGenerator(const HloInstruction &inst,
                                  const Literal &state) {
  const std::string *algorithm = inst.rawAttribute("algorithm");
  std::string name = algorithm ? *algorithm : "rng_default";
  bool isThreefry = name == "rng_three_fry";
  if (!isThreefry && name != "rng_philox" && name != "rng_default")
    return Error("algorithm=" + name +
                 ", expected rng_default, rng_three_fry or rng_philox");
  const Shape &shape = inst.shape();
  if (!shape.isTuple() || shape.tupleShapes.size() != 2 ||
      shape.tupleShapes[1].isTuple())
    return Error("rng-bit-generator returns (state, bits)");
  if (state.isTuple() || state.elementType() != PrimitiveType::U64 ||
      state.rank() != 1 || state.elementCount() < 2 ||
      state.elementCount() > (isThreefry ? 2 : 3) ||
      shape.tupleShapes[0].dims != state.dims())
    return Error("the state is " + state.shape().toStringWithoutLayout() +
                 ", expected u64[2]" + (isThreefry ? "" : " or u64[3]") +
                 " and the same state in the result");
  const Shape &bitsShape = shape.tupleShapes[1];
  int width = bitWidth(bitsShape.elementType);
  if (width != 8 && width != 16 && width != 32 && width != 64)
    return Error("rng-bit-generator of " +
                 std::string(primitiveTypeName(bitsShape.elementType)) +
                 " is not supported by the evaluator");
  Literal bits(Shape(bitsShape.elementType, bitsShape.dims));
  Literal next = state;
  next.setLayout(std::nullopt);
  uint64_t key = state.getBits(0);
  uint32_t k0 = static_cast<uint32_t>(key),
           k1 = static_cast<uint32_t>(key >> 32);
  int64_t n = bits.elementCount();
  const std::vector<int64_t> &dims = bitsShape.dims;
  uint64_t mask = width == 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
  if (isThreefry) {
    uint64_t counter = state.getBits(1);
    if (width == 64) {
      for (int64_t i = 0; i < n; ++i) {
        auto [o0, o1] =
            threefry(static_cast<uint32_t>(counter + i),
                     static_cast<uint32_t>((counter + i) >> 32), k0, k1);
        bits.setBits(i, uint64_t(o0) | uint64_t(o1) << 32);
      }
      next.setBits(1, counter + static_cast<uint64_t>(n));
    } else {
      int64_t rank = static_cast<int64_t>(dims.size());
      auto [split, half, blocks] = threefryPairs(dims);
      std::vector<int64_t> index(rank, 0);
      for (int64_t i = 0; i < n; ++i) {
        int64_t block = 0;
        for (int64_t d = 0; d < rank; ++d)
          block = block * half[d] + (d == split ? index[d] / 2 : index[d]);
        bool second = rank > 0 && index[split] % 2 == 1;
        uint64_t c = counter + static_cast<uint64_t>(block);
        auto [o0, o1] = threefry(static_cast<uint32_t>(c),
                                 static_cast<uint32_t>(c >> 32), k0, k1);
        bits.setBits(i, (second ? o1 : o0) & mask);
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++index[d] < dims[d])
            break;
          index[d] = 0;
        }
      }
      next.setBits(1, counter + static_cast<uint64_t>(blocks));
    }
  } else {
    bool three = state.elementCount() == 3;
    uint64_t low = state.getBits(1), high = state.getBits(three ? 2 : 0);
    int64_t perBlock = width == 64 ? 2 : 4;
    int64_t blocks = (n + perBlock - 1) / perBlock;
    for (int64_t b = 0; b < blocks; ++b) {
      auto [lo, hi] = add128(low, high, static_cast<uint64_t>(b));
      uint32_t x[4] = {
          static_cast<uint32_t>(lo), static_cast<uint32_t>(lo >> 32),
          static_cast<uint32_t>(hi), static_cast<uint32_t>(hi >> 32)};
      philox(x, k0, k1);
      for (int64_t w = 0; w < perBlock && b * perBlock + w < n; ++w) {
        uint64_t value = width == 64
                             ? uint64_t(x[2 * w]) | uint64_t(x[2 * w + 1]) << 32
                             : x[w] & mask;
        bits.setBits(b * perBlock + w, value);
      }
    }
    auto [lo, hi] = add128(low, high, static_cast<uint64_t>(blocks));
    next.setBits(1, lo);
    if (three)
      next.setBits(2, hi);
  }
  std::vector<Literal> results;
  results.push_back(std::move(next));
  results.push_back(std::move(bits));
  return Literal::makeTuple(std::move(results));
}

} // namespace tessel::eval

namespace tessel {

ThreefryPairs threefryPairs(const std::vector<int64_t> &dims) {
  ThreefryPairs pairs;
  int64_t rank = static_cast<int64_t>(dims.size());
  for (int64_t d = 0; d < rank && pairs.split < 0; ++d)
    if (dims[d] % 2 == 0)
      pairs.split = d;
  if (pairs.split < 0)
    for (int64_t d = 0; d < rank; ++d)
      if (pairs.split < 0 || dims[d] > dims[pairs.split])
        pairs.split = d;
  pairs.half = dims;
  if (rank > 0)
    pairs.half[pairs.split] = (dims[pairs.split] + 1) / 2;
  for (int64_t d : pairs.half)
    pairs.blocks *= d;
  return pairs;
}

} // namespace tessel
