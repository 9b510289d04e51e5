//===- SortEmitterTest.cpp - The sort emitter -----------------------------===//
//
// The sort hero (sort and XLA:CPU's TopK custom-call): random sorts of 1 to
// 3 operands of mixed element types along any dim of rank-1 to rank-3
// arrays, with comparators that are strict weak orders (a total order on
// floats, keys then values) and ones that are not (LT on floats with NaNs,
// always true, always false), bit for bit against the evaluator with one
// and two workers and with the GPU's launch; lines of 0, 1 and 100000
// elements; an argsort (keys and an iota); TopK; a sort between other ops
// of a computation (materialized in a kernel of its own); --explain.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Codegen/HeroAnalysis.h"
#include "tessel/Hlo/HloParser.h"

#include <gtest/gtest.h>

#include <random>

using namespace tessel;

namespace {

/// A comparator `less` over `types` (lhs_0, rhs_0, lhs_1, rhs_1, ...):
///   "lt": LT on operand 0 (not a strict weak order on NaNs),
///   "gt": GT on operand 0,
///   "total": LT in the total order of operand 0 (floats: TOTALORDER),
///   "keys": LT on operand 0, then on the last operand where equal,
///   "true" / "false": a constant (not orders at all).
std::string comparator(const std::vector<std::string> &types,
                       const std::string &kind) {
  std::string text = "less {\n";
  for (size_t k = 0; k < 2 * types.size(); ++k)
    text += "  p" + std::to_string(k) + " = " + types[k / 2] + "[] parameter(" +
            std::to_string(k) + ")\n";
  bool isFloat = types[0][0] == 'f' || types[0][0] == 'b';
  if (kind == "true" || kind == "false")
    return text + "  ROOT c = pred[] constant(" + kind + ")\n}\n";
  if (kind == "lt" || kind == "gt")
    return text + "  ROOT c = pred[] compare(p0, p1), direction=" +
           (kind == "lt" ? "LT" : "GT") + "\n}\n";
  std::string type = isFloat ? ", type=TOTALORDER" : "";
  if (kind == "total")
    return text + "  ROOT c = pred[] compare(p0, p1), direction=LT" + type +
           "\n}\n";
  // keys: p0 < p1 || (p0 == p1 && last operand's lhs < rhs)
  std::string a = "p" + std::to_string(2 * types.size() - 2);
  std::string b = "p" + std::to_string(2 * types.size() - 1);
  return text + "  lt = pred[] compare(p0, p1), direction=LT" + type +
         "\n  eq = pred[] compare(p0, p1), direction=EQ" + type +
         "\n  lt2 = pred[] compare(" + a + ", " + b +
         "), direction=LT\n  both = pred[] and(eq, lt2)\n"
         "  ROOT c = pred[] or(lt, both)\n}\n";
}

/// A module that sorts parameters of `types`, all of `dims`, along `dim`.
std::string sortModule(const std::vector<std::string> &types,
                       const std::vector<int64_t> &dims, int64_t dim,
                       const std::string &kind) {
  std::string text =
      "HloModule m\n\n" + comparator(types, kind) + "\nENTRY e {\n";
  std::string operands, shapes;
  for (size_t k = 0; k < types.size(); ++k) {
    std::string shape = types[k] + "[" + joinText(dims) + "]";
    text += "  x" + std::to_string(k) + " = " + shape + " parameter(" +
            std::to_string(k) + ")\n";
    operands += (k ? ", x" : "x") + std::to_string(k);
    shapes += (k ? ", " : "") + shape;
  }
  std::string result = types.size() > 1 ? "(" + shapes + ")" : shapes;
  return text + "  ROOT s = " + result + " sort(" + operands +
         "), dimensions={" + std::to_string(dim) +
         "}, is_stable=true, to_apply=less\n}\n";
}

/// checkKernels with the CPU's launch and one worker, then both launches
/// with two: "" when every run matches the evaluator.
std::string checkSort(const HloModule &module,
                      const std::vector<Literal> &arguments) {
  KernelCheckResult one = checkKernels(module, arguments, CompileOptions{}, 1);
  return (one.failure.empty() ? "" : "one worker: " + one.failure) +
         checkBothLaunches(module, arguments);
}

// Random sorts: 1 to 3 operands of mixed types, rank 1 to 3, any dim, every
// kind of comparator; random values with NaNs, infinities and signed zeros,
// and small integers (many equal keys, so stability shows).
TEST(SortEmitterTest, RandomSortsMatchTheEvaluatorBitForBit) {
  std::mt19937 rng(2024);
  const char *types[] = {"f32", "bf16", "s32", "u8", "f16", "s64", "f64", "s8"};
  const char *kinds[] = {"lt", "gt", "total", "keys", "true", "false"};
  int checked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    size_t n = 1 + rng() % 3;
    std::vector<std::string> operandTypes;
    for (size_t k = 0; k < n; ++k)
      operandTypes.push_back(types[rng() % 8]);
    std::vector<int64_t> dims;
    int64_t rank = 1 + rng() % 3;
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(1 + rng() % (rank == 1 ? 40 : 9));
    int64_t dim = rng() % rank;
    std::string kind = kinds[rng() % 6];
    std::string text = sortModule(operandTypes, dims, dim, kind);
    std::unique_ptr<HloModule> module = parseTestModule(text);
    ASSERT_TRUE(module);
    std::vector<Literal> arguments = randomArguments(*module, 3000 + trial);
    // Few distinct integer keys: equal keys keep their order.
    if (operandTypes[0][0] == 's' || operandTypes[0][0] == 'u')
      for (int64_t i = 0; i < arguments[0].elementCount(); ++i)
        arguments[0].setInt(i, static_cast<int64_t>(rng() % 4));
    EXPECT_EQ(checkSort(*module, arguments), "") << text;
    ++checked;
  }
  EXPECT_EQ(checked, 40);
}

// Comparators that are not strict weak orders give the evaluator's
// permutation, not just some sorted order: LT on floats with many NaNs,
// and a comparator that is always true (every merge takes the right run
// first), on lines of odd lengths.
TEST(SortEmitterTest, ComparatorsThatAreNotOrdersMatchTheEvaluator) {
  for (const char *kind : {"lt", "true"})
    for (int64_t length : {2, 3, 7, 13, 100}) {
      std::string text = sortModule({"f32", "s32"}, {3, length}, 1, kind);
      std::unique_ptr<HloModule> module = parseTestModule(text);
      ASSERT_TRUE(module);
      std::vector<Literal> arguments = randomArguments(*module, 77 + length);
      for (int64_t i = 0; i < arguments[0].elementCount(); i += 3)
        arguments[0].setDouble(i, std::nan(""));
      for (int64_t i = 0; i < arguments[1].elementCount(); ++i)
        arguments[1].setInt(i, i);
      EXPECT_EQ(checkSort(*module, arguments), "") << text;
      // The always-true comparator reverses the pairs of the first pass:
      // the result is not the identity.
      if (std::string(kind) == "true") {
        Expected<Literal> want = evaluateHloModule(*module, arguments);
        ASSERT_TRUE(want);
        EXPECT_NE(want->tupleElements()[1].getInt(0), 0);
      }
    }
}

// Lines of 0 and 1 elements, an empty array of lines, and one long line
// (100000 elements, 17 passes) with an argsort's iota.
TEST(SortEmitterTest, EmptyShortAndLongLines) {
  struct Case {
    std::vector<int64_t> dims;
    int64_t dim;
  };
  for (const Case &c : std::vector<Case>{{{5, 0}, 1},
                                         {{0, 5}, 1},
                                         {{6, 1}, 1},
                                         {{1, 6}, 0},
                                         {{1}, 0},
                                         {{100000}, 0}}) {
    std::string text = sortModule({"f32", "s32"}, c.dims, c.dim, "total");
    std::unique_ptr<HloModule> module = parseTestModule(text);
    ASSERT_TRUE(module);
    std::vector<Literal> arguments = randomArguments(*module, 11);
    for (int64_t i = 0; i < arguments[1].elementCount(); ++i)
      arguments[1].setInt(i, i);
    EXPECT_EQ(checkSort(*module, arguments), "") << text;
  }
}

// A sort whose operand is computed and whose result is read by other ops
// of the same (fusion-free) computation: it gets a kernel of its own.
TEST(SortEmitterTest, SortBetweenOtherOps) {
  std::string text = "HloModule m\n\n" + comparator({"f32"}, "total") +
                     R"(
ENTRY e {
  x = f32[4,33] parameter(0)
  n = f32[4,33] negate(x)
  s = f32[4,33] sort(n), dimensions={1}, is_stable=true, to_apply=less
  ROOT a = f32[4,33] add(s, x)
}
)";
  std::unique_ptr<HloModule> module = parseTestModule(text);
  ASSERT_TRUE(module);
  EXPECT_EQ(checkSort(*module, randomArguments(*module, 5)), "");
  Expected<std::string> explain =
      emitHloModule(*module, EmitKind::Explain, CompileOptions{});
  ASSERT_TRUE(explain) << explain.error().message;
  EXPECT_NE(explain->find("emitter: sort: %s sorts 4 line(s) of 33 along dim "
                          "1"),
            std::string::npos)
      << *explain;
  EXPECT_NE(explain->find("launch: 4 blocks of 1 thread"), std::string::npos)
      << *explain;
}

// TopK (XLA:CPU's custom-call for lax.top_k): the first k of a stable sort
// of (x, iota) along the last dim, by its comparator (GT, or a total order
// that puts NaNs first), k from 0 to the whole line.
TEST(SortEmitterTest, TopKCustomCall) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 12; ++trial) {
    std::vector<int64_t> dims = {1 + static_cast<int64_t>(rng() % 5),
                                 1 + static_cast<int64_t>(rng() % 30)};
    if (trial % 3 == 0)
      dims = {dims[1]};
    int64_t k = rng() % (dims.back() + 1);
    std::vector<int64_t> out = dims;
    out.back() = k;
    bool twoParams = trial % 2 == 1;
    std::string text =
        "HloModule m\n\n" +
        comparator(twoParams ? std::vector<std::string>{"f32"}
                             : std::vector<std::string>{"f32", "s32"},
                   trial % 4 < 2 ? "gt" : "total");
    text += "\nENTRY e {\n  x = f32[" + joinText(dims) +
            "] parameter(0)\n  ROOT t = (f32[" + joinText(out) + "], s32[" +
            joinText(out) +
            "]) custom-call(x), custom_call_target=\"TopK\", "
            "called_computations={less}\n}\n";
    std::unique_ptr<HloModule> module = parseTestModule(text);
    ASSERT_TRUE(module);
    EXPECT_EQ(checkSort(*module, randomArguments(*module, 40 + trial)), "")
        << text;
    Expected<std::string> explain =
        emitHloModule(*module, EmitKind::Explain, CompileOptions{});
    ASSERT_TRUE(explain) << explain.error().message;
    EXPECT_NE(explain->find("emitter: sort: %t (top k) sorts"),
              std::string::npos)
        << *explain;
  }
}

} // namespace

namespace {

// The topk op (`k=..., largest=...`, no comparator): floats in their total
// order (NaNs and signed zeros among the values), integers by value, the
// larger or the smaller first, k from 0 to the whole line.
TEST(SortEmitterTest, TopKOp) {
  std::mt19937 rng(9);
  const char *types[] = {"f32", "bf16", "f16", "f64", "s32", "u8", "s8"};
  for (int trial = 0; trial < 14; ++trial) {
    std::string type = types[trial % 7];
    std::vector<int64_t> dims = {1 + static_cast<int64_t>(rng() % 4),
                                 1 + static_cast<int64_t>(rng() % 25)};
    int64_t k = rng() % (dims.back() + 1);
    std::vector<int64_t> out = dims;
    out.back() = k;
    bool largest = trial % 2 == 0;
    std::string text = "HloModule m\n\nENTRY e {\n  x = " + type + "[" +
                       joinText(dims) + "] parameter(0)\n  ROOT t = (" + type +
                       "[" + joinText(out) + "], s32[" + joinText(out) +
                       "]) topk(x), k=" + std::to_string(k) +
                       ", largest=" + (largest ? "true" : "false") + "\n}\n";
    std::unique_ptr<HloModule> module = parseTestModule(text);
    ASSERT_TRUE(module);
    std::vector<Literal> arguments = randomArguments(*module, 90 + trial);
    if (type[0] != 'f' && type[0] != 'b')
      for (int64_t i = 0; i < arguments[0].elementCount(); ++i)
        arguments[0].setInt(i, static_cast<int64_t>(rng() % 5));
    EXPECT_EQ(checkSort(*module, arguments), "") << text;
  }
}

// jax wraps each sort in a call (and an argsort's iota with it): the plan
// inlines calls that hold a sort, so that the sort gets its kernel; a call
// inside such a call too.
TEST(SortEmitterTest, SortsInsideCalls) {
  std::string text = "HloModule m\n\n" + comparator({"f32", "s32"}, "total") +
                     R"(
argsort {
  a = f32[5,9] parameter(0)
  iota = s32[5,9] iota(), iota_dimension=1
  s = (f32[5,9], s32[5,9]) sort(a, iota), dimensions={1}, is_stable=true, to_apply=less
  ROOT order = s32[5,9] get-tuple-element(s), index=1
}

outer {
  b = f32[5,9] parameter(0)
  n = f32[5,9] negate(b)
  ROOT c = s32[5,9] call(n), to_apply=argsort
}

ENTRY e {
  x = f32[5,9] parameter(0)
  first = s32[5,9] call(x), to_apply=argsort
  second = s32[5,9] call(x), to_apply=outer
  ROOT t = (s32[5,9], s32[5,9]) tuple(first, second)
}
)";
  std::unique_ptr<HloModule> module = parseTestModule(text);
  ASSERT_TRUE(module);
  EXPECT_EQ(checkSort(*module, randomArguments(*module, 8)), "");
  Expected<std::string> explain =
      emitHloModule(*module, EmitKind::Explain, CompileOptions{});
  ASSERT_TRUE(explain) << explain.error().message;
  // Each call is planned in place: its sort is a kernel of its own.
  EXPECT_NE(explain->find("%s (sort, not in a fusion), called by %first, "
                          "computation %wrapped_s\n  emitter: sort: %s sorts "
                          "5 line(s) of 9"),
            std::string::npos)
      << *explain;
  EXPECT_NE(explain->find("%s (sort, not in a fusion), called by %second, "
                          "called by %c, computation %wrapped_s\n  emitter: "
                          "sort: %s sorts 5 line(s) of 9"),
            std::string::npos)
      << *explain;
}

// Negation flips the sign bit of a NaN too, so a total-order sort of
// negated values puts each NaN at the other end: for every float type,
// with NaNs, infinities and signed zeros among the keys. On a GPU
// (TESSEL_TEST_BACKEND=nvptx) PTX's neg made the canonical NaN, and a
// bf16 or f16 negation rounded through f32 did too (LowerToLlvm.cpp).
TEST(SortEmitterTest, TotalOrderOfNegatedNaNs) {
  for (const char *type : {"f32", "f64", "bf16", "f16"}) {
    std::string t = type;
    std::string text = "HloModule m\n\n" + comparator({t, "s32"}, "total") +
                       "\nENTRY e {\n  x = " + t +
                       "[6,40] parameter(0)\n  n = " + t +
                       "[6,40] negate(x)\n"
                       "  iota = s32[6,40] iota(), iota_dimension=1\n"
                       "  s = (" +
                       t +
                       "[6,40], s32[6,40]) sort(n, iota), "
                       "dimensions={1}, is_stable=true, to_apply=less\n"
                       "  ROOT order = s32[6,40] get-tuple-element(s), "
                       "index=1\n}\n";
    std::unique_ptr<HloModule> module = parseTestModule(text);
    ASSERT_TRUE(module) << text;
    EXPECT_EQ(checkSort(*module, randomArguments(*module, 3)), "") << type;
  }
}

} // namespace

namespace {

// Operands and results in other layouts than row-major (the kernel reads
// and writes through the layouts; its scratch buffers are row-major).
TEST(SortEmitterTest, OtherLayouts) {
  std::string text = "HloModule m\n\n" + comparator({"f32", "s32"}, "keys") +
                     R"(
ENTRY e {
  x = f32[6,11,3]{0,2,1} parameter(0)
  y = s32[6,11,3]{1,0,2} parameter(1)
  ROOT s = (f32[6,11,3]{2,0,1}, s32[6,11,3]{0,1,2}) sort(x, y), dimensions={1}, is_stable=true, to_apply=less
}
)";
  std::unique_ptr<HloModule> module = parseTestModule(text);
  ASSERT_TRUE(module);
  std::vector<Literal> arguments = randomArguments(*module, 21);
  for (int64_t i = 0; i < arguments[0].elementCount(); i += 2)
    arguments[0].setDouble(i, 1.0); // equal keys, decided by y
  EXPECT_EQ(checkSort(*module, arguments), "");
}

} // namespace

namespace {

// The other element types a comparator compares: pred, u16, s16, u64 and
// the f8 types, as keys (LT) and as the values of keys-then-values.
TEST(SortEmitterTest, OtherElementTypes) {
  for (const char *type : {"pred", "u16", "s16", "u64", "f8e4m3fn", "f8e5m2"}) {
    for (const char *kind : {"lt", "keys"}) {
      std::vector<std::string> types = {type};
      if (std::string(kind) == "keys")
        types = {"s32", type};
      std::string text = sortModule(types, {5, 23}, 1, kind);
      std::unique_ptr<HloModule> module = parseTestModule(text);
      ASSERT_TRUE(module);
      std::vector<Literal> arguments = randomArguments(*module, 61);
      if (types.size() == 2)
        for (int64_t i = 0; i < arguments[0].elementCount(); ++i)
          arguments[0].setInt(i, i % 3);
      EXPECT_EQ(checkSort(*module, arguments), "") << text;
    }
  }
}

} // namespace
