//===- RandomFusion.cpp - Random HLO fusions for differential tests -------===//
#include "RandomFusion.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace tessel {

namespace {

std::string shapeText(PrimitiveType type, const std::vector<int64_t> &dims) {
  std::string text(primitiveTypeName(type));
  text += "[";
  for (size_t d = 0; d < dims.size(); ++d)
    text += (d ? "," : "") + std::to_string(dims[d]);
  return text + "]";
}

int64_t product(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

std::string list(const std::vector<int64_t> &values) {
  std::string text = "{";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? "," : "") + std::to_string(values[i]);
  return text + "}";
}

bool isFloatType(PrimitiveType t) { return isFloat(t); }

/// The integer type of the same width, for bitcast-convert.
std::vector<PrimitiveType> sameWidth(PrimitiveType t) {
  using P = PrimitiveType;
  switch (t) {
  case P::F32:
  case P::S32:
  case P::U32:
    return {P::F32, P::S32, P::U32};
  case P::F16:
  case P::BF16:
  case P::S16:
  case P::U16:
    return {P::F16, P::BF16, P::S16, P::U16};
  case P::S8:
  case P::U8:
  case P::F8E5M2:
  case P::F8E4M3FN:
  case P::F8E4M3FNUZ:
  case P::F8E4M3B11FNUZ:
  case P::F8E5M2FNUZ:
    return {P::S8,        P::U8,         P::F8E5M2,
            P::F8E4M3FN,  P::F8E4M3FNUZ, P::F8E4M3B11FNUZ,
            P::F8E5M2FNUZ};
  case P::F64:
  case P::S64:
  case P::U64:
    return {P::F64, P::S64, P::U64};
  default:
    return {};
  }
}

template <typename T>
const T &oneOf(std::mt19937_64 &rng, const std::vector<T> &v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

} // namespace

PrimitiveType RandomFusionGenerator::randomType() {
  using P = PrimitiveType;
  static const std::vector<P> common = {P::F32, P::F32, P::BF16, P::BF16,
                                        P::F16, P::S32, P::S32,  P::S8,
                                        P::U8,  P::Pred};
  static const std::vector<P> rare = {
      P::F64,        P::S16,           P::U16,       P::U32,
      P::S64,        P::U64,           P::F8E5M2,    P::F8E4M3FN,
      P::F8E4M3FNUZ, P::F8E4M3B11FNUZ, P::F8E5M2FNUZ};
  return chance(85) ? oneOf(rng, common) : oneOf(rng, rare);
}

std::vector<int64_t> RandomFusionGenerator::randomDims() {
  int rank = static_cast<int>(uniform(0, 4));
  std::vector<int64_t> dims;
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    int64_t size = chance(25) ? uniform(1, 70) : uniform(1, 9);
    if (n * size > elementBudget)
      size = std::max<int64_t>(1, elementBudget / n);
    dims.push_back(size);
    n *= size;
  }
  return dims;
}

const RandomFusionGenerator::Value &
RandomFusionGenerator::add(PrimitiveType type, std::vector<int64_t> dims,
                           const std::string &rhs) {
  Value v{"v" + std::to_string(counter++), type, std::move(dims)};
  // Mark the operands as used: names in rhs end at a non-digit.
  for (size_t start = rhs.find_first_of("vp"); start != std::string::npos;
       start = rhs.find_first_of("vp", start + 1)) {
    size_t end = start + 1;
    while (end < rhs.size() &&
           std::isdigit(static_cast<unsigned char>(rhs[end])))
      ++end;
    if (end > start + 1 &&
        (start == 0 ||
         !std::isalnum(static_cast<unsigned char>(rhs[start - 1]))))
      used.insert(rhs.substr(start, end - start));
  }
  body += "  " + v.name + " = " + shapeText(v.type, v.dims) + " " + rhs + "\n";
  pool.push_back(v);
  return pool.back();
}

RandomFusionGenerator::Value
RandomFusionGenerator::newParameter(PrimitiveType type,
                                    std::vector<int64_t> dims) {
  Value v{"p" + std::to_string(params.size()), type, std::move(dims)};
  body += "  " + v.name + " = " + shapeText(v.type, v.dims) + " parameter(" +
          std::to_string(params.size()) + ")\n";
  params.push_back(v);
  pool.push_back(v);
  return v;
}

RandomFusionGenerator::Value
RandomFusionGenerator::scalarConstant(PrimitiveType type) {
  std::string literal;
  if (type == PrimitiveType::Pred)
    literal = chance(50) ? "true" : "false";
  else if (isFloatType(type)) {
    static const std::vector<std::string> floats = {
        "0",  "-0",  "1",    "-1.5", "0.25", "3",  "2.75",
        "-7", "inf", "-inf", "nan",  "1e-3", "0.1"};
    literal = oneOf(rng, floats);
  } else if (isUnsignedInteger(type))
    literal = std::to_string(uniform(0, 20));
  else
    literal = std::to_string(uniform(-20, 20));
  return add(type, {}, "constant(" + literal + ")");
}

RandomFusionGenerator::Value
RandomFusionGenerator::operandLike(PrimitiveType type,
                                   const std::vector<int64_t> &dims) {
  std::vector<Value> same, sameDims;
  for (const Value &v : pool)
    if (v.dims == dims) {
      sameDims.push_back(v);
      if (v.type == type)
        same.push_back(v);
    }
  int roll = static_cast<int>(uniform(0, 99));
  if (!same.empty() && roll < 55)
    return oneOf(rng, same);
  if (!sameDims.empty() && roll < 75) {
    Value from = oneOf(rng, sameDims);
    if (from.type == type)
      return from;
    return add(type, dims, "convert(" + from.name + ")");
  }
  if (roll < 88) {
    Value c = scalarConstant(type);
    if (dims.empty())
      return c;
    return add(type, dims, "broadcast(" + c.name + "), dimensions={}");
  }
  return newParameter(type, dims);
}

const RandomFusionGenerator::Value &RandomFusionGenerator::pick() {
  // Recent values more often, so that chains grow deep.
  if (chance(75))
    return pool.back();
  return oneOf(rng, pool);
}

bool RandomFusionGenerator::growUnary(const Value &x) {
  std::vector<std::string> ops;
  if (x.type == PrimitiveType::Pred)
    ops = {"not", "copy"};
  else if (isFloatType(x.type))
    ops = {"negate",
           "abs",
           "floor",
           "ceil",
           "round-nearest-even",
           "round-nearest-afz",
           "sign",
           "sqrt",
           "rsqrt",
           "copy"};
  else
    ops = {"negate", "abs", "not", "sign", "popcnt", "count-leading-zeros",
           "copy"};
  if (isFloatType(x.type) && chance(10))
    return add(PrimitiveType::Pred, x.dims, "is-finite(" + x.name + ")"), true;
  add(x.type, x.dims, oneOf(rng, ops) + "(" + x.name + ")");
  return true;
}

bool RandomFusionGenerator::growBinary(const Value &x) {
  std::vector<std::string> ops;
  if (x.type == PrimitiveType::Pred)
    ops = {"and", "or", "xor"};
  else if (isFloatType(x.type))
    ops = {"add",     "subtract", "multiply", "divide",
           "maximum", "minimum",  "remainder"};
  else
    ops = {"add",
           "subtract",
           "multiply",
           "divide",
           "remainder",
           "maximum",
           "minimum",
           "and",
           "or",
           "xor",
           "shift-left",
           "shift-right-logical",
           "shift-right-arithmetic",
           "power"};
  Value y = operandLike(x.type, x.dims);
  bool swap = chance(50);
  const Value &a = swap ? y : x, &b = swap ? x : y;
  add(x.type, x.dims, oneOf(rng, ops) + "(" + a.name + ", " + b.name + ")");
  return true;
}

bool RandomFusionGenerator::growCompareOrSelect(const Value &x) {
  int kind = static_cast<int>(uniform(0, 2));
  if (kind == 0) {
    static const std::vector<std::string> directions = {"EQ", "NE", "LT",
                                                        "LE", "GT", "GE"};
    Value y = operandLike(x.type, x.dims);
    std::string attrs = ", direction=" + oneOf(rng, directions);
    std::string a = x.name, b = y.name;
    if (isFloatType(x.type) && chance(25)) {
      // A total order sees a NaN's sign and payload, which are not part of
      // the value where an op had two NaN operands: which one it returns
      // is unspecified in LLVM IR, and LLVM swaps the operands of an add
      // (random fusion seed 1626: a bf16 sum of inputs with NaNs of both
      // signs, compared in total order).
      attrs += ", type=TOTALORDER";
      a = canonicalNaNs(x);
      b = canonicalNaNs(y);
    }
    add(PrimitiveType::Pred, x.dims, "compare(" + a + ", " + b + ")" + attrs);
    return true;
  }
  if (kind == 1) {
    Value p = operandLike(PrimitiveType::Pred, x.dims);
    Value y = operandLike(x.type, x.dims);
    add(x.type, x.dims,
        "select(" + p.name + ", " + x.name + ", " + y.name + ")");
    return true;
  }
  if (x.type == PrimitiveType::Pred)
    return false;
  // clamp(lo, x, hi) with scalar or full bounds.
  Value lo = chance(50) ? scalarConstant(x.type) : operandLike(x.type, x.dims);
  Value hi = chance(50) ? scalarConstant(x.type) : operandLike(x.type, x.dims);
  add(x.type, x.dims,
      "clamp(" + lo.name + ", " + x.name + ", " + hi.name + ")");
  return true;
}

/// The types of `bits` bits that bitcast-convert reaches (no pred).
static std::vector<PrimitiveType> typesOfWidth(int bits) {
  using P = PrimitiveType;
  switch (bits) {
  case 8:
    return sameWidth(P::S8);
  case 16:
    return sameWidth(P::S16);
  case 32:
    return sameWidth(P::S32);
  case 64:
    return sameWidth(P::S64);
  default:
    return {};
  }
}

bool RandomFusionGenerator::growConvert(const Value &x) {
  if (isFloatType(x.type) && chance(15)) {
    // reduce-precision to any narrower format, sometimes none narrower.
    bool f64 = x.type == PrimitiveType::F64;
    int64_t exponent = uniform(1, f64 ? 11 : 8);
    int64_t mantissa = uniform(0, f64 ? 52 : 23);
    add(x.type, x.dims,
        "reduce-precision(" + x.name +
            "), exponent_bits=" + std::to_string(exponent) +
            ", mantissa_bits=" + std::to_string(mantissa));
    return true;
  }
  int bits = bitWidth(x.type);
  if (!sameWidth(x.type).empty() && chance(15)) {
    // bitcast-convert between widths: a minor dim of n parts dropped into
    // one wider element, or one element split into n narrower parts.
    int64_t last = x.dims.empty() ? 0 : x.dims.back();
    if ((last == 2 || last == 4) && bits * last <= 64 && chance(50)) {
      std::vector<int64_t> dims(x.dims.begin(), x.dims.end() - 1);
      add(oneOf(rng, typesOfWidth(bits * static_cast<int>(last))), dims,
          "bitcast-convert(" + canonicalNaNs(x) + ")");
      return true;
    }
    int64_t parts = chance(50) ? 2 : 4;
    if (bits / parts < 8 || x.dims.size() >= 5 ||
        product(x.dims) * parts > elementBudget)
      return false;
    std::vector<int64_t> dims = x.dims;
    dims.push_back(parts);
    add(oneOf(rng, typesOfWidth(bits / static_cast<int>(parts))), dims,
        "bitcast-convert(" + canonicalNaNs(x) + ")");
    return true;
  }
  if (chance(30)) {
    std::vector<PrimitiveType> types = sameWidth(x.type);
    if (types.empty())
      return false;
    PrimitiveType to = oneOf(rng, types);
    // A NaN's bits become a number of another float type too (f16 to bf16),
    // and the NaN an operation makes has the machine's bits (x86's 0xfe00
    // for an f16 inf - inf, a GPU's 0x7fff): canonical before either.
    add(to, x.dims, "bitcast-convert(" + canonicalNaNs(x) + ")");
    return true;
  }
  add(randomType(), x.dims, "convert(" + x.name + ")");
  return true;
}

std::string RandomFusionGenerator::canonicalNaNs(const Value &x) {
  if (!isFloatType(x.type))
    return x.name;
  // The sign of a NaN is not part of the value: LLVM may fold -7 + -x into
  // -7 - x, whose NaN has x's sign. Before its bits become integers or
  // another type's floats, every NaN is made one NaN.
  std::string nan = add(x.type, {}, "constant(nan)").name;
  std::string nans =
      x.dims.empty()
          ? nan
          : add(x.type, x.dims, "broadcast(" + nan + "), dimensions={}").name;
  std::string isNaN =
      add(PrimitiveType::Pred, x.dims,
          "compare(" + x.name + ", " + x.name + "), direction=NE")
          .name;
  return add(x.type, x.dims,
             "select(" + isNaN + ", " + nans + ", " + x.name + ")")
      .name;
}

bool RandomFusionGenerator::growBroadcast(const Value &x) {
  int64_t n = product(x.dims);
  int extra = static_cast<int>(uniform(1, 2));
  if (x.dims.size() + extra > 5)
    return false;
  std::vector<int64_t> newDims;
  int64_t budget = elementBudget / std::max<int64_t>(n, 1);
  for (int i = 0; i < extra; ++i) {
    int64_t size = std::min<int64_t>(uniform(1, 12), budget);
    if (size < 1)
      return false;
    budget /= size;
    newDims.push_back(size);
  }
  // Positions of the operand's dims in the result: increasing.
  int rank = static_cast<int>(x.dims.size()) + extra;
  std::vector<int64_t> positions(rank);
  std::iota(positions.begin(), positions.end(), 0);
  std::shuffle(positions.begin(), positions.end(), rng);
  positions.resize(x.dims.size());
  std::sort(positions.begin(), positions.end());
  std::vector<int64_t> dims(rank, 0);
  for (size_t i = 0; i < positions.size(); ++i)
    dims[positions[i]] = x.dims[i];
  size_t next = 0;
  for (int64_t &d : dims)
    if (d == 0)
      d = newDims[next++];
  for (size_t i = 0; i < x.dims.size(); ++i)
    if (x.dims[i] == 0)
      return false;
  add(x.type, dims, "broadcast(" + x.name + "), dimensions=" + list(positions));
  return true;
}

bool RandomFusionGenerator::growReshape(const Value &x) {
  int64_t n = product(x.dims);
  // Factor n into up to four dims, at random.
  std::vector<int64_t> dims;
  int64_t rest = n;
  while (rest > 1 && dims.size() < 3) {
    std::vector<int64_t> divisors;
    for (int64_t d = 2; d <= rest && d <= 64; ++d)
      if (rest % d == 0)
        divisors.push_back(d);
    if (divisors.empty() || chance(30))
      break;
    int64_t d = oneOf(rng, divisors);
    dims.push_back(d);
    rest /= d;
  }
  if (rest > 1 || dims.empty())
    dims.push_back(rest);
  if (chance(20))
    dims.insert(dims.begin() + uniform(0, dims.size()), 1);
  std::shuffle(dims.begin(), dims.end(), rng);
  if (n == 0 || dims == x.dims)
    return false;
  add(x.type, dims, "reshape(" + x.name + ")");
  return true;
}

bool RandomFusionGenerator::growTranspose(const Value &x) {
  if (x.dims.size() < 2)
    return false;
  std::vector<int64_t> permutation(x.dims.size());
  std::iota(permutation.begin(), permutation.end(), 0);
  std::shuffle(permutation.begin(), permutation.end(), rng);
  std::vector<int64_t> dims;
  for (int64_t p : permutation)
    dims.push_back(x.dims[p]);
  add(x.type, dims,
      "transpose(" + x.name + "), dimensions=" + list(permutation));
  return true;
}

bool RandomFusionGenerator::growSlice(const Value &x) {
  if (x.dims.empty())
    return false;
  std::vector<int64_t> dims;
  std::string spec = "{";
  for (size_t d = 0; d < x.dims.size(); ++d) {
    int64_t size = x.dims[d];
    int64_t start = uniform(0, size - 1);
    int64_t limit = uniform(start + 1, size);
    int64_t stride = chance(30) ? uniform(2, 3) : 1;
    dims.push_back((limit - start + stride - 1) / stride);
    spec += (d ? ", [" : "[") + std::to_string(start) + ":" +
            std::to_string(limit) +
            (stride > 1 ? ":" + std::to_string(stride) : "") + "]";
  }
  add(x.type, dims, "slice(" + x.name + "), slice=" + spec + "}");
  return true;
}

bool RandomFusionGenerator::growPad(const Value &x) {
  if (x.dims.empty())
    return false;
  std::vector<int64_t> dims;
  std::string padding;
  int64_t n = 1;
  for (size_t d = 0; d < x.dims.size(); ++d) {
    int64_t size = x.dims[d];
    int64_t interior = chance(25) ? uniform(1, 2) : 0;
    int64_t low = uniform(-2, 3), high = uniform(-2, 3);
    int64_t out = low + high + size + (size - 1) * interior;
    if (out < 1) {
      low = high = 0;
      out = size + (size - 1) * interior;
    }
    dims.push_back(out);
    n *= out;
    padding += (d ? "x" : "") + std::to_string(low) + "_" +
               std::to_string(high) +
               (interior ? "_" + std::to_string(interior) : "");
  }
  if (n > elementBudget)
    return false;
  Value value = scalarConstant(x.type);
  add(x.type, dims,
      "pad(" + x.name + ", " + value.name + "), padding=" + padding);
  return true;
}

bool RandomFusionGenerator::growReverse(const Value &x) {
  if (x.dims.empty())
    return false;
  std::vector<int64_t> reversed;
  for (size_t d = 0; d < x.dims.size(); ++d)
    if (chance(50))
      reversed.push_back(d);
  if (reversed.empty())
    reversed.push_back(uniform(0, x.dims.size() - 1));
  add(x.type, x.dims, "reverse(" + x.name + "), dimensions=" + list(reversed));
  return true;
}

bool RandomFusionGenerator::growConcatenate(const Value &x) {
  if (x.dims.empty())
    return false;
  int64_t dim = uniform(0, x.dims.size() - 1);
  std::vector<int64_t> otherDims = x.dims;
  otherDims[dim] = uniform(1, 5);
  Value y = operandLike(x.type, otherDims);
  std::vector<int64_t> dims = x.dims;
  dims[dim] += otherDims[dim];
  if (product(dims) > elementBudget)
    return false;
  bool swap = chance(50);
  add(x.type, dims,
      "concatenate(" +
          (swap ? y.name + ", " + x.name : x.name + ", " + y.name) +
          "), dimensions={" + std::to_string(dim) + "}");
  return true;
}

bool RandomFusionGenerator::growDynamicSlice(const Value &x) {
  if (x.dims.empty())
    return false;
  // Start indices: constants (also out of range: they clamp) or s32[]
  // parameters.
  std::vector<std::string> starts;
  for (size_t d = 0; d < x.dims.size(); ++d) {
    if (chance(40))
      starts.push_back(newParameter(PrimitiveType::S32, {}).name);
    else
      starts.push_back(scalarConstant(PrimitiveType::S32).name);
  }
  std::string indices;
  for (const std::string &s : starts)
    indices += ", " + s;
  std::vector<int64_t> sizes;
  for (int64_t size : x.dims)
    sizes.push_back(uniform(1, size));
  if (chance(50)) {
    add(x.type, sizes,
        "dynamic-slice(" + x.name + indices +
            "), dynamic_slice_sizes=" + list(sizes));
    return true;
  }
  Value update = operandLike(x.type, sizes);
  add(x.type, x.dims,
      "dynamic-update-slice(" + x.name + ", " + update.name + indices + ")");
  return true;
}

bool RandomFusionGenerator::growReduce(const Value &x) {
  if (x.dims.empty())
    return false;
  // Any set of dims, in increasing order.
  std::vector<int64_t> reduced, kept;
  for (size_t d = 0; d < x.dims.size(); ++d)
    (chance(50) ? reduced : kept).push_back(static_cast<int64_t>(d));
  if (reduced.empty())
    reduced.push_back(kept.back()), kept.pop_back();
  std::vector<int64_t> dims;
  for (int64_t d : kept)
    dims.push_back(x.dims[d]);
  std::vector<std::string> ops;
  if (x.type == PrimitiveType::Pred)
    ops = {"and", "or"};
  else
    ops = {"add", "multiply", "maximum", "minimum"};
  std::string op = oneOf(rng, ops);
  std::string reducer = std::string("reduce_") + op + "_" +
                        std::string(primitiveTypeName(x.type));
  reducers.insert(reducer);
  Value init = scalarConstant(x.type);
  add(x.type, dims,
      "reduce(" + x.name + ", " + init.name + "), dimensions=" + list(reduced) +
          ", to_apply=" + reducer);
  return true;
}

bool RandomFusionGenerator::growIota() {
  std::vector<int64_t> dims = randomDims();
  if (dims.empty())
    return false;
  PrimitiveType type = randomType();
  if (type == PrimitiveType::Pred)
    return false;
  add(type, dims,
      "iota(), iota_dimension=" + std::to_string(uniform(0, dims.size() - 1)));
  return true;
}

bool RandomFusionGenerator::growApproximate(const Value &x) {
  if (!isFloatType(x.type))
    return false;
  static const std::vector<std::string> ops = {
      "exponential",  "log",  "tanh",   "logistic", "exponential-minus-one",
      "log-plus-one", "sine", "cosine", "erf",      "cbrt"};
  add(x.type, x.dims, oneOf(rng, ops) + "(" + x.name + ")");
  return true;
}

bool RandomFusionGenerator::grow() {
  const Value x = pick();
  switch (uniform(0, 15)) {
  case 0:
  case 1:
  case 2:
    return growUnary(x);
  case 3:
  case 4:
  case 5:
    return growBinary(x);
  case 6:
    return growCompareOrSelect(x);
  case 7:
    return growConvert(x);
  case 8:
    return growBroadcast(x);
  case 9:
    return growReshape(x);
  case 10:
    return growTranspose(x);
  case 11:
    return chance(50) ? growSlice(x) : growReverse(x);
  case 12:
    return growPad(x);
  case 13:
    return chance(50) ? growConcatenate(x) : growIota();
  case 14:
    return growDynamicSlice(x);
  default:
    return options.reductions ? growReduce(x) : growDynamicSlice(x);
  }
}

RandomFusionGenerator::Fusion
RandomFusionGenerator::fusion(const std::string &name) {
  pool.clear();
  used.clear();
  params.clear();
  body.clear();
  counter = 0;
  elementBudget = chance(10) ? options.maxElements * 8 : options.maxElements;
  int numParams = static_cast<int>(uniform(1, 3));
  for (int i = 0; i < numParams; ++i) {
    // Later parameters often share the first one's dims.
    std::vector<int64_t> dims =
        i > 0 && chance(60) ? params.front().dims : randomDims();
    newParameter(randomType(), dims);
  }
  int steps = static_cast<int>(uniform(1, options.maxSteps));
  for (int grown = 0, tries = 0; grown < steps && tries < steps * 4; ++tries)
    grown += grow();
  if (options.approximateFunctions) {
    for (int tries = 0; tries < 8; ++tries)
      if (growApproximate(pick()))
        break;
  }
  // The outputs: every value nothing reads (up to four, the last one
  // included), so that little of what was grown is dead.
  Fusion f;
  // Sometimes the outputs are two or three slices of one value (XLA's
  // input-slices fusion).
  if (chance(8)) {
    Value x = pick();
    if (!x.dims.empty()) {
      for (int64_t k = uniform(2, 3); k > 0; --k)
        if (growSlice(x))
          f.roots.push_back(pool.back());
    }
  }
  bool slices = !f.roots.empty();
  for (auto it = pool.rbegin();
       !slices && it != pool.rend() && f.roots.size() < 4; ++it)
    if (!used.count(it->name) && (it->name[0] == 'v' || f.roots.empty()))
      f.roots.insert(f.roots.begin(), *it);
  if (f.roots.empty())
    f.roots.push_back(pool.back());
  if (f.roots.size() > 1) {
    std::string tuple = "(", operands;
    for (size_t i = 0; i < f.roots.size(); ++i) {
      tuple += (i ? ", " : "") + shapeText(f.roots[i].type, f.roots[i].dims);
      operands += (i ? ", " : "") + f.roots[i].name;
    }
    body += "  ROOT out = " + tuple + ") tuple(" + operands + ")\n";
  } else {
    size_t at = body.find("  " + f.roots[0].name + " = ");
    body.replace(at, 2, "  ROOT ");
  }
  f.text = name + " {\n" + body + "}\n";
  f.parameters = params;
  return f;
}

RandomModule RandomFusionGenerator::module(int fusions) {
  RandomModule m;
  reducers.clear();
  std::string entry = "ENTRY main {\n";
  std::vector<std::string> results;
  std::vector<std::string> resultShapes;
  for (int k = 0; k < fusions; ++k) {
    std::string name = "fused_" + std::to_string(k);
    Fusion f = fusion(name);
    m.text += f.text + "\n";
    m.fusions.push_back(f.text);
    std::string operands;
    for (size_t i = 0; i < f.parameters.size(); ++i) {
      std::string param = "a" + std::to_string(m.parameters.size());
      entry += "  " + param + " = " +
               shapeText(f.parameters[i].type, f.parameters[i].dims) +
               " parameter(" + std::to_string(m.parameters.size()) + ")\n";
      m.parameters.push_back(Shape(f.parameters[i].type, f.parameters[i].dims));
      operands += (i ? ", " : "") + param;
    }
    std::string call = "f" + std::to_string(k);
    if (f.roots.size() == 1) {
      std::string shape = shapeText(f.roots[0].type, f.roots[0].dims);
      entry += "  " + call + " = " + shape + " fusion(" + operands +
               "), kind=kLoop, calls=" + name + "\n";
      results.push_back(call);
      resultShapes.push_back(shape);
      m.fusionOfOutput.push_back(k);
      continue;
    }
    std::string tuple = "(";
    for (size_t i = 0; i < f.roots.size(); ++i)
      tuple += (i ? ", " : "") + shapeText(f.roots[i].type, f.roots[i].dims);
    tuple += ")";
    entry += "  " + call + " = " + tuple + " fusion(" + operands +
             "), kind=kLoop, calls=" + name + "\n";
    for (size_t i = 0; i < f.roots.size(); ++i) {
      std::string element = call + "_" + std::to_string(i);
      std::string shape = shapeText(f.roots[i].type, f.roots[i].dims);
      entry += "  " + element + " = " + shape + " get-tuple-element(" + call +
               "), index=" + std::to_string(i) + "\n";
      results.push_back(element);
      resultShapes.push_back(shape);
      m.fusionOfOutput.push_back(k);
    }
  }
  std::string tuple = "(", operands;
  for (size_t i = 0; i < results.size(); ++i) {
    tuple += (i ? ", " : "") + resultShapes[i];
    operands += (i ? ", " : "") + results[i];
  }
  entry += "  ROOT result = " + tuple + ") tuple(" + operands + ")\n}\n";
  // The reducers the fusions call: `reduce_<op>_<type>`.
  std::string computations;
  for (const std::string &reducer : reducers) {
    size_t opEnd = reducer.find('_', 7);
    std::string op = reducer.substr(7, opEnd - 7);
    std::string type = reducer.substr(opEnd + 1);
    computations +=
        reducer + " {\n  a = " + type + "[] parameter(0)\n  b = " + type +
        "[] parameter(1)\n  ROOT r = " + type + "[] " + op + "(a, b)\n}\n\n";
  }
  m.text = "HloModule random\n\n" + computations + m.text + entry;
  return m;
}

} // namespace tessel
