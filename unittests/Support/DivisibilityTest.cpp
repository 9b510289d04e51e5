//===- DivisibilityTest.cpp - The (modulus, remainder) lattice ------------===//
#include "tessel/Support/Divisibility.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <random>
#include <vector>

using namespace tessel;

namespace {

Divisibility k(int64_t v) { return Divisibility::constant(v); }
Divisibility m(uint64_t mod, int64_t rem) { return Divisibility::of(mod, rem); }
const Divisibility top = Divisibility::unknown();

TEST(DivisibilityTest, PrintsAndQueries) {
  Divisibility i = top;
  Divisibility x = add(mul(i, k(128), 64, false), k(32), 64, false);
  EXPECT_EQ(x.print(), "32 mod 128");
  EXPECT_EQ(x.isMultipleOf(128).verdict, Verdict::ProvenNot);
  EXPECT_EQ(x.isMultipleOf(128).counterexample, 32);
  EXPECT_EQ(x.isMultipleOf(32).verdict, Verdict::Proven);
  EXPECT_EQ(x.isMultipleOf(3).verdict, Verdict::Unknown);
  EXPECT_EQ(top.print(), "unknown");
  EXPECT_EQ(k(5).print(), "constant 5");
  EXPECT_EQ(top.isMultipleOf(128).counterexample, 1);
  EXPECT_EQ(m(8, 0).isMultipleOf(128).counterexample, 8);
  // Odd values are never multiples of 4.
  EXPECT_EQ(m(2, 1).isMultipleOf(4).verdict, Verdict::ProvenNot);
  EXPECT_EQ(k(0).isMultipleOf(7).verdict, Verdict::Proven);
}

TEST(DivisibilityTest, WrapKeepsOnlyPowersOfTwo) {
  EXPECT_EQ(mul(top, k(24), 64, true).print(), "0 mod 8");
  EXPECT_EQ(mul(top, k(24), 64, false).print(), "0 mod 24");
  EXPECT_EQ(add(m(12, 4), m(6, 2), 32, true).print(), "0 mod 2");
  EXPECT_EQ(add(m(12, 4), m(6, 2), 32, false).print(), "0 mod 6");
  EXPECT_EQ(add(k(INT64_MAX), k(1), 64, true), k(INT64_MIN));
  EXPECT_EQ(add(k(127), k(1), 8, true), k(-128));
}

TEST(DivisibilityTest, DivisionAndRemainder) {
  Divisibility x = mul(top, k(256), 64, false); // 0 mod 256
  EXPECT_EQ(floorDivSigned(x, k(2), 64).print(), "0 mod 128");
  EXPECT_EQ(divSigned(x, k(2), 64).print(), "0 mod 128");
  EXPECT_EQ(divSigned(add(x, k(1), 64, false), k(2), 64), top);
  EXPECT_EQ(floorDivSigned(add(x, k(3), 64, false), k(2), 64).print(),
            "1 mod 128");
  EXPECT_EQ(remSigned(add(x, k(3), 64, false), k(16), 64).print(), "3 mod 16");
  EXPECT_EQ(remSigned(top, k(16), 64), top);
  EXPECT_EQ(divUnsigned(x, k(4), 64).print(), "0 mod 64");
  EXPECT_EQ(floorDivSigned(k(-7), k(2), 64), k(-4));
  EXPECT_EQ(ceilDivSigned(k(-7), k(2), 64), k(-3));
  EXPECT_EQ(ceilDivSigned(x, k(4), 64).print(), "0 mod 64");
  EXPECT_EQ(floorModSigned(k(-1), k(4), 64), k(3));
  EXPECT_EQ(divSigned(k(-128), k(-1), 8), top);
}

TEST(DivisibilityTest, ShiftsAndMasks) {
  EXPECT_EQ(shiftLeft(top, k(7), 64, true).print(), "0 mod 128");
  EXPECT_EQ(shiftRightSigned(mul(top, k(1024), 64, false), k(3), 64).print(),
            "0 mod 128");
  EXPECT_EQ(bitAnd(top, k(-128), 64).print(), "0 mod 128");
  EXPECT_EQ(bitAnd(top, k(~int64_t(127)), 32).print(), "0 mod 128");
  EXPECT_EQ(bitOr(mul(top, k(256), 64, false), k(32), 64).print(),
            "32 mod 256");
  EXPECT_EQ(bitAnd(m(4, 1), k(3), 64), k(1));
}

TEST(DivisibilityTest, JoinAndCasts) {
  EXPECT_EQ(Divisibility::join(k(128), k(256)).print(), "0 mod 128");
  EXPECT_EQ(Divisibility::join(k(128), k(128)), k(128));
  EXPECT_EQ(minOrMax(m(128, 0), k(64)).print(), "0 mod 64");
  EXPECT_EQ(extendUnsigned(k(-1), 8), k(255));
  EXPECT_EQ(truncate(k(256 + 3), 8), k(3));
  EXPECT_EQ(truncate(m(1024, 0), 64).print(), "0 mod 1024");
  EXPECT_EQ(truncate(m(1024, 0), 8), k(0));
}

//===----------------------------------------------------------------------===//
// Soundness: random expressions evaluated on random inputs.
//===----------------------------------------------------------------------===//

using Int = __int128;

int64_t minOf(unsigned w) { return int64_t(-(Int(1) << (w - 1))); }
int64_t maxOf(unsigned w) { return int64_t((Int(1) << (w - 1)) - 1); }
bool fits(Int v, unsigned w) { return v >= minOf(w) && v <= maxOf(w); }
uint64_t asUnsigned(int64_t v, unsigned w) {
  return w == 64 ? uint64_t(v) : uint64_t(v) & ((uint64_t(1) << w) - 1);
}
int64_t floorDivI(Int a, Int b) {
  Int q = a / b;
  return int64_t((a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q);
}

enum class Op {
  Var,
  Const,
  Add,
  Sub,
  Mul,
  DivS,
  FloorDiv,
  CeilDiv,
  DivU,
  RemS,
  FloorMod,
  RemU,
  Shl,
  ShrS,
  ShrU,
  And,
  Or,
  Xor,
  Min,
  Max,
  Select,
  TruncExtS,
  TruncExtU,
};

struct Expr {
  Op op;
  int64_t value = 0;   // Const; Var: the variable's number
  bool mayWrap = true; // Add, Sub, Mul, Shl
  unsigned narrow = 0; // TruncExt*: the narrow width
  std::unique_ptr<Expr> lhs, rhs;
};

struct Variable {
  Divisibility fact;
};

class Fuzzer {
public:
  Fuzzer(unsigned width, std::mt19937_64 &rng) : width(width), rng(rng) {}

  int64_t randomConstant() {
    switch (rng() % 4) {
    case 0:
      return int64_t(1) << (rng() % (width - 1));
    case 1:
      return -int64_t(rng() % 9) - 1;
    case 2:
      return int64_t(rng() % 300);
    default:
      return wrapToWidth(int64_t(rng()), width);
    }
  }

  std::unique_ptr<Expr> gen(int depth) {
    auto e = std::make_unique<Expr>();
    if (depth == 0 || rng() % 5 == 0) {
      bool isVar = rng() % 3 != 0;
      e->op = isVar ? Op::Var : Op::Const;
      e->value = isVar ? int64_t(rng() % 3) : randomConstant();
      return e;
    }
    e->op = Op(2 + rng() % 21);
    e->mayWrap = rng() % 2;
    e->narrow = 1 + unsigned(rng() % width);
    e->lhs = gen(depth - 1);
    bool constRhs = rng() % 10 < 7;
    switch (e->op) {
    case Op::DivS:
    case Op::FloorDiv:
    case Op::CeilDiv:
    case Op::DivU:
    case Op::RemS:
    case Op::FloorMod:
    case Op::RemU:
    case Op::Shl:
    case Op::ShrS:
    case Op::ShrU:
      if (constRhs) {
        e->rhs = std::make_unique<Expr>();
        e->rhs->op = Op::Const;
        bool shift = e->op == Op::Shl || e->op == Op::ShrS || e->op == Op::ShrU;
        e->rhs->value = shift ? int64_t(rng() % width) : randomConstant();
        return e;
      }
      break;
    default:
      break;
    }
    e->rhs = gen(depth - 1);
    return e;
  }

  Divisibility analyse(const Expr &e) {
    switch (e.op) {
    case Op::Var:
      return vars[e.value].fact;
    case Op::Const:
      return Divisibility::constant(wrapToWidth(e.value, width));
    case Op::TruncExtS:
      return extendSigned(truncate(analyse(*e.lhs), e.narrow));
    case Op::TruncExtU:
      return extendUnsigned(truncate(analyse(*e.lhs), e.narrow), e.narrow);
    default:
      break;
    }
    Divisibility a = analyse(*e.lhs), b = analyse(*e.rhs);
    unsigned w = width;
    switch (e.op) {
    case Op::Add:
      return add(a, b, w, e.mayWrap);
    case Op::Sub:
      return sub(a, b, w, e.mayWrap);
    case Op::Mul:
      return mul(a, b, w, e.mayWrap);
    case Op::DivS:
      return divSigned(a, b, w);
    case Op::FloorDiv:
      return floorDivSigned(a, b, w);
    case Op::CeilDiv:
      return ceilDivSigned(a, b, w);
    case Op::DivU:
      return divUnsigned(a, b, w);
    case Op::RemS:
      return remSigned(a, b, w);
    case Op::FloorMod:
      return floorModSigned(a, b, w);
    case Op::RemU:
      return remUnsigned(a, b, w);
    case Op::Shl:
      return shiftLeft(a, b, w, e.mayWrap);
    case Op::ShrS:
      return shiftRightSigned(a, b, w);
    case Op::ShrU:
      return shiftRightUnsigned(a, b, w);
    case Op::And:
      return bitAnd(a, b, w);
    case Op::Or:
      return bitOr(a, b, w);
    case Op::Xor:
      return bitXor(a, b, w);
    case Op::Min:
    case Op::Max:
      return minOrMax(a, b);
    case Op::Select:
      return Divisibility::join(a, b);
    default:
      return top;
    }
  }

  /// The concrete value, or nullopt for poison / undefined behaviour.
  std::optional<int64_t> eval(const Expr &e, const std::vector<int64_t> &in,
                              bool cond) {
    unsigned w = width;
    switch (e.op) {
    case Op::Var:
      return in[e.value];
    case Op::Const:
      return wrapToWidth(e.value, w);
    case Op::TruncExtS:
    case Op::TruncExtU: {
      std::optional<int64_t> a = eval(*e.lhs, in, cond);
      if (!a)
        return std::nullopt;
      int64_t t = wrapToWidth(*a, e.narrow);
      return e.op == Op::TruncExtS ? t : int64_t(asUnsigned(t, e.narrow));
    }
    default:
      break;
    }
    std::optional<int64_t> ao = eval(*e.lhs, in, cond),
                           bo = eval(*e.rhs, in, cond);
    if (!ao || !bo)
      return std::nullopt;
    Int a = *ao, b = *bo;
    uint64_t au = asUnsigned(*ao, w), bu = asUnsigned(*bo, w);
    auto wrapOrPoison = [&](Int exact, bool mayWrap) -> std::optional<int64_t> {
      if (!mayWrap && !fits(exact, w))
        return std::nullopt;
      return wrapToWidth(int64_t(uint64_t(exact)), w);
    };
    bool divUb = b == 0 || (a == minOf(w) && b == -1);
    switch (e.op) {
    case Op::Add:
      return wrapOrPoison(a + b, e.mayWrap);
    case Op::Sub:
      return wrapOrPoison(a - b, e.mayWrap);
    case Op::Mul:
      return wrapOrPoison(a * b, e.mayWrap);
    case Op::DivS:
      if (divUb)
        return std::nullopt;
      return int64_t(a / b);
    case Op::FloorDiv:
      if (divUb)
        return std::nullopt;
      return floorDivI(a, b);
    case Op::CeilDiv:
      if (divUb)
        return std::nullopt;
      return -floorDivI(-a, b);
    case Op::DivU:
      if (bu == 0)
        return std::nullopt;
      return wrapToWidth(int64_t(au / bu), w);
    case Op::RemS:
      if (b == 0)
        return std::nullopt;
      return int64_t(a % b);
    case Op::FloorMod:
      if (b == 0)
        return std::nullopt;
      return int64_t(a - Int(floorDivI(a, b)) * b);
    case Op::RemU:
      if (bu == 0)
        return std::nullopt;
      return wrapToWidth(int64_t(au % bu), w);
    case Op::Shl:
      if (b < 0 || b >= w)
        return std::nullopt;
      if (!e.mayWrap && !fits(a * (Int(1) << int(b)), w))
        return std::nullopt;
      return wrapToWidth(int64_t(au << int(b)), w);
    case Op::ShrS:
      if (b < 0 || b >= w)
        return std::nullopt;
      return floorDivI(a, Int(1) << int(b));
    case Op::ShrU:
      if (b < 0 || b >= w)
        return std::nullopt;
      return wrapToWidth(int64_t(au >> int(b)), w);
    case Op::And:
      return wrapToWidth(int64_t(au & bu), w);
    case Op::Or:
      return wrapToWidth(int64_t(au | bu), w);
    case Op::Xor:
      return wrapToWidth(int64_t(au ^ bu), w);
    case Op::Min:
      return int64_t(a < b ? a : b);
    case Op::Max:
      return int64_t(a < b ? b : a);
    case Op::Select:
      return int64_t(cond ? a : b);
    default:
      return std::nullopt;
    }
  }

  /// A variable's fact and a value that satisfies it.
  void makeVariables() {
    vars.clear();
    for (int i = 0; i < 3; ++i) {
      uint64_t mods[] = {1, 2, 4, 8, 16, 128, 3, 6, 12, 24};
      uint64_t mod = mods[rng() % 10];
      if (width <= 8 && mod > 16)
        mod = 16;
      vars.push_back({rng() % 4 == 0
                          ? Divisibility::constant(randomConstant())
                          : Divisibility::of(mod, int64_t(rng() % mod))});
    }
  }

  int64_t sample(const Divisibility &fact) {
    if (fact.isConstant())
      return fact.remainder();
    Int v = wrapToWidth(int64_t(rng()), width);
    Int mod = fact.modulus();
    Int shift = (v - fact.remainder()) % mod;
    if (shift < 0)
      shift += mod;
    v -= shift;
    if (v < minOf(width))
      v += mod;
    return int64_t(v);
  }

  unsigned width;
  std::mt19937_64 &rng;
  std::vector<Variable> vars;
};

TEST(DivisibilityTest, SoundOnRandomExpressions) {
  std::mt19937_64 rng(11);
  int proven = 0, provenNot = 0, checked = 0;
  for (unsigned width : {8u, 16u, 32u, 64u}) {
    Fuzzer fuzzer(width, rng);
    for (int round = 0; round < 3000; ++round) {
      fuzzer.makeVariables();
      std::unique_ptr<Expr> e = fuzzer.gen(4);
      Divisibility fact = fuzzer.analyse(*e);
      std::vector<int64_t> divisors = {1, 2, 3, 4, 6, 8, 16, 24, 32, 128};
      divisors.push_back(int64_t(1 + rng() % 1000));
      for (int s = 0; s < 20; ++s) {
        std::vector<int64_t> in;
        for (const Variable &v : fuzzer.vars)
          in.push_back(fuzzer.sample(v.fact));
        std::optional<int64_t> value = fuzzer.eval(*e, in, rng() % 2);
        if (!value)
          continue;
        ++checked;
        if (std::optional<int64_t> c = fact.constantValue())
          ASSERT_EQ(*c, *value) << "width " << width;
        else
          ASSERT_EQ(Divisibility::join(fact, Divisibility::constant(*value)),
                    fact)
              << fact.print() << " excludes " << *value << " (width " << width
              << ")";
        for (int64_t n : divisors) {
          DivisibilityQuery q = fact.isMultipleOf(n);
          if (q.verdict == Verdict::Proven) {
            ++proven;
            ASSERT_EQ(*value % n, 0) << fact.print() << " n=" << n;
          } else if (q.verdict == Verdict::ProvenNot) {
            ++provenNot;
            ASSERT_NE(*value % n, 0) << fact.print() << " n=" << n;
          } else {
            ASSERT_TRUE(q.counterexample);
            ASSERT_NE(*q.counterexample % n, 0);
          }
        }
      }
    }
  }
  // The fuzzer exercises both proofs, not only "unknown".
  EXPECT_GT(proven, 10000);
  EXPECT_GT(provenNot, 1000);
  EXPECT_GT(checked, 50000);
}

} // namespace
