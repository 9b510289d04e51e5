//===- Simplifier.cpp - Range evaluation and expression rewrites ----------===//
#include "tessel/Indexing/Simplifier.h"

#include "LinearSum.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using mlir::AffineBinaryOpExpr;
using mlir::AffineConstantExpr;
using mlir::AffineDimExpr;
using mlir::AffineExpr;
using mlir::AffineExprKind;
using mlir::AffineSymbolExpr;

namespace tessel {

using detail::build;
using detail::collect;
using detail::collectAsIs;
using detail::gcd64;
using detail::LinearSum;
using detail::Term;

//===----------------------------------------------------------------------===//
// SimplifyStats
//===----------------------------------------------------------------------===//

const char *SimplifyStats::name(SimplifyRule rule) {
  switch (rule) {
  case SimplifyRule::ConstantRange:
    return "ConstantRange";
  case SimplifyRule::SumCombine:
    return "SumCombine";
  case SimplifyRule::SumDivMod:
    return "SumDivMod";
  case SimplifyRule::SumNestedMod:
    return "SumNestedMod";
  case SimplifyRule::DivNested:
    return "DivNested";
  case SimplifyRule::DivMultiples:
    return "DivMultiples";
  case SimplifyRule::DivGcd:
    return "DivGcd";
  case SimplifyRule::ModOnePeriod:
    return "ModOnePeriod";
  case SimplifyRule::ModMultiples:
    return "ModMultiples";
  case SimplifyRule::ModInnerMod:
    return "ModInnerMod";
  case SimplifyRule::ModGcd:
    return "ModGcd";
  case SimplifyRule::CeilDivMultiples:
    return "CeilDivMultiples";
  case SimplifyRule::ConstraintRedundant:
    return "ConstraintRedundant";
  case SimplifyRule::ConstraintTightened:
    return "ConstraintTightened";
  case SimplifyRule::ConstraintOffset:
    return "ConstraintOffset";
  case SimplifyRule::ConstraintScaled:
    return "ConstraintScaled";
  case SimplifyRule::ConstraintToBound:
    return "ConstraintToBound";
  case SimplifyRule::ConstraintDivToRange:
    return "ConstraintDivToRange";
  case SimplifyRule::BoundPropagated:
    return "BoundPropagated";
  case SimplifyRule::KnownEmpty:
    return "KnownEmpty";
  case SimplifyRule::UnusedSymbol:
    return "UnusedSymbol";
  case SimplifyRule::Count:
    break;
  }
  return "?";
}

std::string SimplifyStats::toString() const {
  std::string text;
  for (unsigned i = 0; i < counts.size(); ++i)
    text += std::string(name(static_cast<SimplifyRule>(i))) + ": " +
            std::to_string(counts[i]) + "\n";
  return text;
}

//===----------------------------------------------------------------------===//
// RangeEvaluator
//===----------------------------------------------------------------------===//

RangeEvaluator::RangeEvaluator(llvm::ArrayRef<Interval> dimBounds,
                               llvm::ArrayRef<Interval> symbolBounds,
                               llvm::ArrayRef<IndexingConstraint> constraints)
    : dimBounds(dimBounds), symbolBounds(symbolBounds) {
  for (const IndexingConstraint &constraint : constraints) {
    auto [it, inserted] =
        constraintBounds.try_emplace(constraint.expr, constraint.bounds);
    if (!inserted)
      it->second = it->second.intersect(constraint.bounds);
  }
}

RangeEvaluator::RangeEvaluator(const IndexingMap &map)
    : RangeEvaluator(map.getDimBounds(), map.getSymbolBounds(),
                     map.getConstraints()) {}

Interval RangeEvaluator::computeRange(AffineExpr expr) const {
  Interval range = Interval::full();
  switch (expr.getKind()) {
  case AffineExprKind::Constant:
    return Interval::point(llvm::cast<AffineConstantExpr>(expr).getValue());
  case AffineExprKind::DimId:
    range = dimBounds[llvm::cast<AffineDimExpr>(expr).getPosition()];
    break;
  case AffineExprKind::SymbolId:
    range = symbolBounds[llvm::cast<AffineSymbolExpr>(expr).getPosition()];
    break;
  default: {
    auto binary = llvm::cast<AffineBinaryOpExpr>(expr);
    Interval lhs = computeRange(binary.getLHS());
    auto rhsConstant = llvm::dyn_cast<AffineConstantExpr>(binary.getRHS());
    int64_t divisor = rhsConstant ? rhsConstant.getValue() : 0;
    switch (expr.getKind()) {
    case AffineExprKind::Add:
      range = lhs + computeRange(binary.getRHS());
      break;
    case AffineExprKind::Mul:
      if (rhsConstant)
        range = lhs * divisor;
      else if (auto lhsConstant =
                   llvm::dyn_cast<AffineConstantExpr>(binary.getLHS()))
        range = computeRange(binary.getRHS()) * lhsConstant.getValue();
      else
        range = lhs * computeRange(binary.getRHS());
      break;
    case AffineExprKind::FloorDiv:
      if (divisor > 0)
        range = lhs.floorDiv(divisor);
      break;
    case AffineExprKind::CeilDiv:
      if (divisor > 0)
        range = lhs.ceilDiv(divisor);
      break;
    case AffineExprKind::Mod:
      if (divisor > 0)
        range = lhs.mod(divisor);
      break;
    default:
      break;
    }
  }
  }
  auto it = constraintBounds.find(expr);
  if (it != constraintBounds.end())
    range = range.intersect(it->second);
  return range;
}

//===----------------------------------------------------------------------===//
// AffineExprSimplifier
//===----------------------------------------------------------------------===//

void detail::collect(AffineExpr expr, int64_t scale, LinearSum &sum,
                     AtomizeFn atomize, bool *merged) {
  if (sum.overflow)
    return;
  if (auto constant = llvm::dyn_cast<AffineConstantExpr>(expr)) {
    std::optional<int64_t> value = checkedMul(constant.getValue(), scale);
    if (!value)
      sum.overflow = true;
    else
      sum.addConstant(*value);
    return;
  }
  if (!detail::isAtom(expr)) {
    auto binary = llvm::cast<AffineBinaryOpExpr>(expr);
    if (expr.getKind() == AffineExprKind::Add) {
      collect(binary.getLHS(), scale, sum, atomize, merged);
      collect(binary.getRHS(), scale, sum, atomize, merged);
      return;
    }
    auto rhsConstant = llvm::dyn_cast<AffineConstantExpr>(binary.getRHS());
    AffineExpr other = rhsConstant ? binary.getLHS() : binary.getRHS();
    int64_t factor =
        rhsConstant
            ? rhsConstant.getValue()
            : llvm::cast<AffineConstantExpr>(binary.getLHS()).getValue();
    std::optional<int64_t> product = checkedMul(scale, factor);
    if (!product) {
      sum.overflow = true;
      return;
    }
    collect(other, *product, sum, atomize, merged);
    return;
  }
  AffineExpr atom = atomize ? atomize(expr) : expr;
  if (atom != expr && !detail::isAtom(atom)) {
    collect(atom, scale, sum, nullptr, merged);
    return;
  }
  if (sum.addTerm(atom, scale) && merged)
    *merged = true;
}

namespace {

constexpr unsigned kMaxDepth = 64;

Interval rangeOf(const LinearSum &sum, const RangeEvaluator &ranges) {
  Interval range = Interval::point(sum.constant);
  for (const Term &term : sum.terms)
    range = range + ranges.computeRange(term.atom) * term.coefficient;
  return range;
}

/// The divisors g > 1 of `divisor` worth trying in the gcd rules: the gcd
/// of `divisor` with each coefficient, closed under pairwise gcd, largest
/// first.
llvm::SmallVector<int64_t> gcdCandidates(const LinearSum &sum,
                                         int64_t divisor) {
  llvm::SmallVector<int64_t> candidates;
  for (const Term &term : sum.terms) {
    int64_t g = gcd64(term.coefficient, divisor);
    if (g > 1 && !llvm::is_contained(candidates, g))
      candidates.push_back(g);
  }
  for (size_t i = 0; i < candidates.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      int64_t g = gcd64(candidates[i], candidates[j]);
      if (g > 1 && !llvm::is_contained(candidates, g))
        candidates.push_back(g);
    }
  llvm::sort(candidates, std::greater<int64_t>());
  return candidates;
}

/// Splits sum = factor * multiples + rest where every coefficient of
/// `multiples` times factor is a coefficient of `sum`, no term of `rest` has
/// a coefficient divisible by factor, and rest's constant is in [0, factor).
void splitByFactor(const LinearSum &sum, int64_t factor, LinearSum &multiples,
                   LinearSum &rest) {
  for (const Term &term : sum.terms) {
    if (term.coefficient % factor == 0)
      multiples.terms.push_back({term.atom, term.coefficient / factor});
    else
      rest.terms.push_back(term);
  }
  multiples.constant = floorDiv(sum.constant, factor);
  rest.constant = floorMod(sum.constant, factor);
}

/// Like splitByFactor, but the constant splits toward zero (k = q * factor
/// + r with r of k's sign), so that `(x - 1) floordiv 2` keeps its -1:
/// floor((x + q * f + r) / f) = q + floor((x + r) / f) for any such split.
void splitMultiples(const LinearSum &sum, int64_t factor, LinearSum &multiples,
                    LinearSum &rest) {
  splitByFactor(sum, factor, multiples, rest);
  multiples.constant = sum.constant / factor;
  rest.constant = sum.constant % factor;
}

/// For the gcd rules: the largest G > 1 dividing `divisor` such that the
/// terms whose coefficients G divides are not all of nothing and the other
/// terms (with the constant's remainder) stay in [0, G - 1]. Returns 0 when
/// there is none.
int64_t findGcdSplit(const LinearSum &sum, int64_t divisor,
                     const RangeEvaluator &ranges, LinearSum &multiples,
                     LinearSum &rest) {
  for (int64_t candidate : gcdCandidates(sum, divisor)) {
    int64_t factor = divisor;
    bool any = false;
    for (const Term &term : sum.terms)
      if (term.coefficient % candidate == 0) {
        factor = gcd64(factor, term.coefficient);
        any = true;
      }
    if (!any || factor <= 1)
      continue;
    multiples = LinearSum();
    rest = LinearSum();
    splitByFactor(sum, factor, multiples, rest);
    if (Interval(0, factor - 1).contains(rangeOf(rest, ranges)))
      return factor;
  }
  return 0;
}

AffineExpr constant(int64_t value, mlir::MLIRContext *context) {
  return mlir::getAffineConstantExpr(value, context);
}

} // namespace

AffineExpr AffineExprSimplifier::simplify(AffineExpr expr) {
  auto it = cache.find(expr);
  if (it != cache.end())
    return it->second;
  if (depth > kMaxDepth)
    return expr;
  ++depth;
  AffineExpr result = simplifyOnce(expr);
  for (int i = 0; i < 4 && result != expr; ++i) {
    AffineExpr again = simplifyOnce(result);
    if (again == result)
      break;
    result = again;
  }
  --depth;
  cache[expr] = result;
  cache[result] = result;
  return result;
}

AffineExpr AffineExprSimplifier::simplifyOnce(AffineExpr expr) {
  mlir::MLIRContext *context = expr.getContext();
  if (llvm::isa<AffineConstantExpr>(expr))
    return expr;
  Interval range = ranges.computeRange(expr);
  if (range.isPoint()) {
    count(SimplifyRule::ConstantRange);
    return constant(range.lower, context);
  }
  if (expr.getKind() == AffineExprKind::DimId ||
      expr.getKind() == AffineExprKind::SymbolId)
    return expr;
  if (!detail::isAtom(expr))
    return simplifySum(expr);
  auto binary = llvm::cast<AffineBinaryOpExpr>(expr);
  auto rhsConstant = llvm::dyn_cast<AffineConstantExpr>(binary.getRHS());
  if (binary.getKind() == AffineExprKind::Mul || !rhsConstant ||
      rhsConstant.getValue() <= 0) {
    // Not affine: simplify the operands only.
    return mlir::getAffineBinaryOpExpr(
        binary.getKind(), simplify(binary.getLHS()), simplify(binary.getRHS()));
  }
  AffineExpr lhs = simplify(binary.getLHS());
  int64_t divisor = rhsConstant.getValue();
  AffineExpr result;
  switch (binary.getKind()) {
  case AffineExprKind::FloorDiv:
    result = simplifyFloorDiv(lhs, divisor);
    break;
  case AffineExprKind::CeilDiv:
    result = simplifyCeilDiv(lhs, divisor);
    break;
  default:
    result = simplifyMod(lhs, divisor);
    break;
  }
  Interval resultRange = ranges.computeRange(result);
  if (resultRange.isPoint() && !llvm::isa<AffineConstantExpr>(result)) {
    count(SimplifyRule::ConstantRange);
    return constant(resultRange.lower, context);
  }
  return result;
}

AffineExpr AffineExprSimplifier::simplifySum(AffineExpr expr) {
  mlir::MLIRContext *context = expr.getContext();
  LinearSum sum;
  bool merged = false;
  collect(
      expr, 1, sum, [&](AffineExpr atom) { return simplify(atom); }, &merged);
  if (sum.overflow)
    return expr;
  if (merged)
    count(SimplifyRule::SumCombine);

  // (x floordiv c) * (k * c) + (x mod c) * k -> x * k, and
  // ((x floordiv c) mod m) * (k * c) + (x mod c) * k -> (x mod (c * m)) * k.
  bool changed = true;
  while (changed && !sum.overflow) {
    changed = false;
    for (size_t i = 0; i < sum.terms.size() && !changed; ++i) {
      AffineExpr atom = sum.terms[i].atom;
      AffineExpr divided;
      int64_t divisor = 0, modulus = 0;
      auto asBinary = [](AffineExpr e, AffineExprKind kind, AffineExpr &lhs,
                         int64_t &rhs) {
        auto binary = llvm::dyn_cast<AffineBinaryOpExpr>(e);
        if (!binary || binary.getKind() != kind)
          return false;
        auto c = llvm::dyn_cast<AffineConstantExpr>(binary.getRHS());
        if (!c || c.getValue() <= 0)
          return false;
        lhs = binary.getLHS();
        rhs = c.getValue();
        return true;
      };
      AffineExpr inner;
      bool nested = false;
      if (asBinary(atom, AffineExprKind::Mod, inner, modulus) &&
          asBinary(inner, AffineExprKind::FloorDiv, divided, divisor))
        nested = true;
      else if (!asBinary(atom, AffineExprKind::FloorDiv, divided, divisor))
        continue;
      int64_t coefficient = sum.terms[i].coefficient;
      if (coefficient % divisor != 0)
        continue;
      AffineExpr remainder = divided % divisor;
      for (size_t j = 0; j < sum.terms.size(); ++j) {
        if (j == i || sum.terms[j].atom != remainder ||
            sum.terms[j].coefficient != coefficient / divisor)
          continue;
        int64_t scale = sum.terms[j].coefficient;
        AffineExpr replacement = divided;
        if (nested) {
          std::optional<int64_t> combined = checkedMul(divisor, modulus);
          if (!combined)
            continue;
          replacement = simplifyMod(divided, *combined);
        }
        count(nested ? SimplifyRule::SumNestedMod : SimplifyRule::SumDivMod);
        // Put the replacement where the first of the two terms was.
        LinearSum rebuilt;
        rebuilt.constant = sum.constant;
        for (size_t k = 0; k < sum.terms.size(); ++k) {
          if (k == std::min(i, j))
            collectAsIs(replacement, scale, rebuilt);
          else if (k != i && k != j)
            rebuilt.addTerm(sum.terms[k].atom, sum.terms[k].coefficient);
        }
        if (rebuilt.overflow)
          return build(sum, context);
        sum = rebuilt;
        changed = true;
        break;
      }
    }
  }
  sum.dropZeroTerms();
  return build(sum, context);
}

AffineExpr AffineExprSimplifier::simplifyFloorDiv(AffineExpr lhs,
                                                  int64_t divisor) {
  mlir::MLIRContext *context = lhs.getContext();
  if (divisor == 1)
    return lhs;
  Interval range = ranges.computeRange(lhs).floorDiv(divisor);
  if (range.isPoint()) {
    count(SimplifyRule::ConstantRange);
    return constant(range.lower, context);
  }
  if (auto inner = llvm::dyn_cast<AffineBinaryOpExpr>(lhs);
      inner && inner.getKind() == AffineExprKind::FloorDiv) {
    auto innerDivisor = llvm::dyn_cast<AffineConstantExpr>(inner.getRHS());
    if (innerDivisor && innerDivisor.getValue() > 0) {
      if (std::optional<int64_t> combined =
              checkedMul(innerDivisor.getValue(), divisor)) {
        count(SimplifyRule::DivNested);
        return simplifyFloorDiv(inner.getLHS(), *combined);
      }
    }
  }
  LinearSum sum;
  collectAsIs(lhs, 1, sum);
  if (sum.overflow || sum.hasExtremeCoefficient())
    return lhs.floorDiv(divisor);

  LinearSum quotient, rest;
  splitMultiples(sum, divisor, quotient, rest);
  if (!quotient.terms.empty() || quotient.constant != 0) {
    count(SimplifyRule::DivMultiples);
    AffineExpr restDivided = simplifyFloorDiv(build(rest, context), divisor);
    return simplify(build(quotient, context) + restDivided);
  }
  LinearSum multiples;
  if (int64_t factor = findGcdSplit(sum, divisor, ranges, multiples, rest)) {
    count(SimplifyRule::DivGcd);
    return simplifyFloorDiv(build(multiples, context), divisor / factor);
  }
  return lhs.floorDiv(divisor);
}

AffineExpr AffineExprSimplifier::simplifyCeilDiv(AffineExpr lhs,
                                                 int64_t divisor) {
  mlir::MLIRContext *context = lhs.getContext();
  if (divisor == 1)
    return lhs;
  Interval range = ranges.computeRange(lhs).ceilDiv(divisor);
  if (range.isPoint()) {
    count(SimplifyRule::ConstantRange);
    return constant(range.lower, context);
  }
  LinearSum sum;
  collectAsIs(lhs, 1, sum);
  if (sum.overflow || sum.hasExtremeCoefficient())
    return lhs.ceilDiv(divisor);
  LinearSum quotient, rest;
  splitMultiples(sum, divisor, quotient, rest);
  if (!quotient.terms.empty() || quotient.constant != 0) {
    count(SimplifyRule::CeilDivMultiples);
    AffineExpr restDivided = simplifyCeilDiv(build(rest, context), divisor);
    return simplify(build(quotient, context) + restDivided);
  }
  return lhs.ceilDiv(divisor);
}

AffineExpr AffineExprSimplifier::simplifyMod(AffineExpr lhs, int64_t modulus) {
  mlir::MLIRContext *context = lhs.getContext();
  if (modulus == 1) {
    count(SimplifyRule::ConstantRange);
    return constant(0, context);
  }
  Interval range = ranges.computeRange(lhs);
  if (range.floorDiv(modulus).isPoint()) {
    count(SimplifyRule::ModOnePeriod);
    int64_t period = floorDiv(range.lower, modulus);
    if (period == 0)
      return lhs;
    LinearSum shifted;
    collectAsIs(lhs, 1, shifted);
    std::optional<int64_t> offset = checkedMul(period, -modulus);
    if (!offset)
      return lhs % modulus;
    shifted.addConstant(*offset);
    if (shifted.overflow)
      return lhs % modulus;
    return simplify(build(shifted, context));
  }

  LinearSum sum;
  collectAsIs(lhs, 1, sum);
  if (sum.overflow || sum.hasExtremeCoefficient())
    return lhs % modulus;
  bool dropped = false, unwrapped = false;
  // Coefficients only matter modulo the modulus: align (x floordiv c) * k
  // with (x mod c) * j when k = c * j (mod modulus), so that the pair
  // recombines into x * j.
  for (Term &divided : sum.terms) {
    auto division = llvm::dyn_cast<AffineBinaryOpExpr>(divided.atom);
    if (!division || division.getKind() != AffineExprKind::FloorDiv)
      continue;
    AffineExpr remainder = division.getLHS() % division.getRHS();
    for (const Term &term : sum.terms) {
      if (term.atom != remainder)
        continue;
      auto divisorExpr = llvm::dyn_cast<AffineConstantExpr>(division.getRHS());
      std::optional<int64_t> aligned =
          divisorExpr ? checkedMul(divisorExpr.getValue(), term.coefficient)
                      : std::nullopt;
      int64_t difference;
      if (aligned &&
          !__builtin_sub_overflow(divided.coefficient, *aligned, &difference) &&
          difference != 0 && difference % modulus == 0) {
        divided.coefficient = *aligned;
        dropped = true;
      }
    }
  }
  LinearSum reduced;
  for (const Term &term : sum.terms) {
    if (term.coefficient % modulus == 0) {
      dropped = true;
      continue;
    }
    // (x mod a) is x plus a multiple of a, hence of the modulus.
    if (auto inner = llvm::dyn_cast<AffineBinaryOpExpr>(term.atom);
        inner && inner.getKind() == AffineExprKind::Mod) {
      auto innerModulus = llvm::dyn_cast<AffineConstantExpr>(inner.getRHS());
      if (innerModulus && innerModulus.getValue() > 0 &&
          innerModulus.getValue() % modulus == 0) {
        unwrapped = true;
        collectAsIs(inner.getLHS(), term.coefficient, reduced);
        continue;
      }
    }
    reduced.addTerm(term.atom, term.coefficient);
  }
  reduced.addConstant(sum.constant);
  if (reduced.constant <= -modulus || reduced.constant >= modulus) {
    dropped = true;
    reduced.constant = floorMod(reduced.constant, modulus);
  }
  if (!reduced.overflow && (dropped || unwrapped)) {
    count(dropped ? SimplifyRule::ModMultiples : SimplifyRule::ModInnerMod);
    if (dropped && unwrapped)
      count(SimplifyRule::ModInnerMod);
    return simplifyMod(simplify(build(reduced, context)), modulus);
  }

  LinearSum multiples, rest;
  if (int64_t factor = findGcdSplit(sum, modulus, ranges, multiples, rest)) {
    count(SimplifyRule::ModGcd);
    AffineExpr inner = simplifyMod(build(multiples, context), modulus / factor);
    return simplify(inner * factor + build(rest, context));
  }
  return lhs % modulus;
}

} // namespace tessel
