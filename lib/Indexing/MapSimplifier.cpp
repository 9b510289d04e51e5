//===- MapSimplifier.cpp - Simplification of whole indexing maps ----------===//
//
// IndexingMap::simplify: constraints are normalized one at a time (using the
// ranges and the other constraints), variable ranges narrow from linear
// constraints, results are rewritten with the expression simplifier, and
// this repeats until nothing changes. Unused symbols go last.
//
//===----------------------------------------------------------------------===//
#include "tessel/Indexing/IndexingMap.h"
#include "tessel/Indexing/Simplifier.h"

#include "LinearSum.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/STLExtras.h"

using mlir::AffineBinaryOpExpr;
using mlir::AffineConstantExpr;
using mlir::AffineDimExpr;
using mlir::AffineExpr;
using mlir::AffineExprKind;
using mlir::AffineSymbolExpr;

namespace tessel {

using detail::build;
using detail::collectAsIs;
using detail::gcd64;
using detail::LinearSum;
using detail::Term;

namespace {

constexpr int kMaxIterations = 16;
/// Largest number of symbol values enumerated to decide whether constraints
/// on unused symbols can hold.
constexpr int64_t kMaxEnumeratedSymbolPoints = int64_t(1) << 16;

int64_t saturate(__int128 value) {
  if (value < Interval::kMin)
    return Interval::kMin;
  if (value > Interval::kMax)
    return Interval::kMax;
  return static_cast<int64_t>(value);
}

__int128 floorDiv128(__int128 a, __int128 b) {
  __int128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

__int128 ceilDiv128(__int128 a, __int128 b) { return -floorDiv128(-a, b); }

/// The integers v with factor * v in target (factor != 0).
Interval solveScaled(Interval target, int64_t factor) {
  __int128 lo = target.lower, hi = target.upper;
  if (factor < 0) {
    std::swap(lo, hi);
    lo = -lo;
    hi = -hi;
    factor = -factor;
  }
  return {saturate(ceilDiv128(lo, factor)), saturate(floorDiv128(hi, factor))};
}

bool isVariable(AffineExpr expr) {
  return expr.getKind() == AffineExprKind::DimId ||
         expr.getKind() == AffineExprKind::SymbolId;
}

bool touchesLimits(Interval interval) {
  return interval.lower == Interval::kMin || interval.upper == Interval::kMax;
}

} // namespace

/// The map-level rules; a friend of IndexingMap.
class IndexingMapSimplifier {
public:
  IndexingMapSimplifier(IndexingMap &map, SimplifyStats *stats)
      : map(map), stats(stats) {}

  bool run();
  bool removeUnusedSymbols();

private:
  void count(SimplifyRule rule) {
    if (stats)
      stats->count(rule);
  }
  void becomeEmpty() {
    count(SimplifyRule::KnownEmpty);
    map.markKnownEmpty();
  }
  Interval variableBounds(AffineExpr var) const {
    if (auto dim = llvm::dyn_cast<AffineDimExpr>(var))
      return map.dimVars[dim.getPosition()].bounds;
    return map.getSymbolVar(llvm::cast<AffineSymbolExpr>(var).getPosition())
        .bounds;
  }
  void narrowVariable(AffineExpr var, Interval bounds) {
    Interval narrowed = variableBounds(var).intersect(bounds);
    if (auto dim = llvm::dyn_cast<AffineDimExpr>(var))
      map.setDimBounds(dim.getPosition(), narrowed);
    else
      map.setSymbolBounds(llvm::cast<AffineSymbolExpr>(var).getPosition(),
                          narrowed);
    if (narrowed.isEmpty())
      count(SimplifyRule::KnownEmpty);
  }

  void simplifyConstraints();
  void simplifyConstraint(AffineExpr expr, Interval bounds,
                          llvm::ArrayRef<IndexingConstraint> others);
  void propagateBounds();
  void simplifyResults();

  IndexingMap &map;
  SimplifyStats *stats;
};

bool IndexingMapSimplifier::run() {
  if (map.isKnownEmpty())
    return false;
  IndexingMap original = map;
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    IndexingMap before = map;
    simplifyConstraints();
    if (!map.isKnownEmpty())
      propagateBounds();
    if (!map.isKnownEmpty())
      simplifyResults();
    if (map.isKnownEmpty() || map == before)
      break;
  }
  removeUnusedSymbols();
  return map != original;
}

void IndexingMapSimplifier::simplifyConstraints() {
  std::vector<IndexingConstraint> pending = map.constraints;
  map.constraints.clear();
  for (size_t i = 0; i < pending.size() && !map.isKnownEmpty(); ++i) {
    // The others: those already done, and those still to do.
    std::vector<IndexingConstraint> others = map.constraints;
    others.insert(others.end(), pending.begin() + i + 1, pending.end());
    simplifyConstraint(pending[i].expr, pending[i].bounds, others);
  }
}

void IndexingMapSimplifier::simplifyConstraint(
    AffineExpr expr, Interval bounds,
    llvm::ArrayRef<IndexingConstraint> others) {
  mlir::MLIRContext *context = map.getContext();
  RangeEvaluator ranges(map.getDimBounds(), map.getSymbolBounds(), others);
  AffineExprSimplifier simplifier(ranges, stats);
  expr = simplifier.simplify(expr);
  // Each pass either finishes or replaces `x floordiv c in ...` by a
  // constraint on the smaller x.
  for (int step = 0; step < kMaxIterations; ++step) {
    if (bounds.isEmpty())
      return becomeEmpty();
    if (auto constant = llvm::dyn_cast<AffineConstantExpr>(expr)) {
      if (!bounds.contains(constant.getValue()))
        return becomeEmpty();
      count(SimplifyRule::ConstraintRedundant);
      return;
    }
    LinearSum sum;
    collectAsIs(expr, 1, sum);
    if (!sum.overflow && !sum.hasExtremeCoefficient() && !sum.terms.empty()) {
      if (sum.constant != 0) {
        __int128 lo = static_cast<__int128>(bounds.lower) - sum.constant;
        __int128 hi = static_cast<__int128>(bounds.upper) - sum.constant;
        if (!touchesLimits(bounds) && lo > Interval::kMin &&
            hi < Interval::kMax) {
          count(SimplifyRule::ConstraintOffset);
          bounds = Interval(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
          sum.constant = 0;
        }
      }
      int64_t factor = 0;
      for (const Term &term : sum.terms)
        factor = gcd64(factor, term.coefficient);
      bool allNegative = llvm::all_of(
          sum.terms, [](const Term &term) { return term.coefficient < 0; });
      if (allNegative)
        factor = -factor;
      if (factor != 1 && sum.constant == 0) {
        count(SimplifyRule::ConstraintScaled);
        for (Term &term : sum.terms)
          term.coefficient /= factor;
        bounds = solveScaled(bounds, factor);
        if (bounds.isEmpty())
          return becomeEmpty();
      }
      expr = build(sum, context);
      if (sum.terms.size() == 1 && sum.terms[0].coefficient == 1 &&
          sum.constant == 0) {
        AffineExpr atom = sum.terms[0].atom;
        if (isVariable(atom)) {
          count(SimplifyRule::ConstraintToBound);
          narrowVariable(atom, bounds);
          return;
        }
        auto binary = llvm::dyn_cast<AffineBinaryOpExpr>(atom);
        auto divisor = binary && binary.getKind() == AffineExprKind::FloorDiv
                           ? llvm::dyn_cast<AffineConstantExpr>(binary.getRHS())
                           : AffineConstantExpr();
        if (divisor && divisor.getValue() > 0) {
          count(SimplifyRule::ConstraintDivToRange);
          __int128 c = divisor.getValue();
          bounds = Interval(saturate(bounds.lower * c),
                            saturate(bounds.upper * c + c - 1));
          expr = binary.getLHS();
          continue;
        }
      }
    }
    Interval range = ranges.computeRange(expr);
    if (bounds.contains(range)) {
      count(SimplifyRule::ConstraintRedundant);
      return;
    }
    Interval tightened = bounds.intersect(range);
    if (tightened.isEmpty())
      return becomeEmpty();
    if (tightened != bounds)
      count(SimplifyRule::ConstraintTightened);
    map.addConstraint(expr, tightened);
    return;
  }
  map.addConstraint(expr, bounds);
}

void IndexingMapSimplifier::propagateBounds() {
  std::vector<IndexingConstraint> constraints = map.constraints;
  for (const IndexingConstraint &constraint : constraints) {
    if (touchesLimits(constraint.bounds))
      continue;
    LinearSum sum;
    collectAsIs(constraint.expr, 1, sum);
    if (sum.overflow || sum.hasExtremeCoefficient() ||
        !llvm::all_of(sum.terms,
                      [](const Term &term) { return isVariable(term.atom); }))
      continue;
    for (size_t i = 0; i < sum.terms.size(); ++i) {
      Interval rest = Interval::point(sum.constant);
      for (size_t j = 0; j < sum.terms.size(); ++j)
        if (j != i)
          rest = rest +
                 variableBounds(sum.terms[j].atom) * sum.terms[j].coefficient;
      if (touchesLimits(rest))
        continue;
      // coefficient * v = value - rest, value in bounds.
      Interval scaled(
          saturate(static_cast<__int128>(constraint.bounds.lower) - rest.upper),
          saturate(static_cast<__int128>(constraint.bounds.upper) -
                   rest.lower));
      Interval allowed = solveScaled(scaled, sum.terms[i].coefficient);
      Interval current = variableBounds(sum.terms[i].atom);
      if (current.intersect(allowed) != current) {
        count(SimplifyRule::BoundPropagated);
        narrowVariable(sum.terms[i].atom, allowed);
        if (map.isKnownEmpty())
          return;
      }
    }
  }
}

void IndexingMapSimplifier::simplifyResults() {
  RangeEvaluator ranges(map);
  AffineExprSimplifier simplifier(ranges, stats);
  llvm::SmallVector<AffineExpr> results;
  for (AffineExpr result : map.affineMap.getResults())
    results.push_back(simplifier.simplify(result));
  map.affineMap = mlir::AffineMap::get(map.getNumDims(), map.getNumSymbols(),
                                       results, map.getContext());
}

bool IndexingMapSimplifier::removeUnusedSymbols() {
  if (map.isKnownEmpty() || map.getNumSymbols() == 0)
    return false;
  unsigned numSymbols = map.getNumSymbols();
  std::vector<bool> used(numSymbols, false);
  auto symbolsOf = [&](AffineExpr expr, bool &hasDim) {
    std::vector<unsigned> symbols;
    expr.walk([&](AffineExpr sub) {
      if (auto symbol = llvm::dyn_cast<AffineSymbolExpr>(sub))
        symbols.push_back(symbol.getPosition());
      else if (llvm::isa<AffineDimExpr>(sub))
        hasDim = true;
    });
    return symbols;
  };
  for (AffineExpr result : map.affineMap.getResults()) {
    bool hasDim = false;
    for (unsigned s : symbolsOf(result, hasDim))
      used[s] = true;
  }
  // A constraint on a dim or a used symbol is kept, and its symbols are
  // used.
  std::vector<bool> keep(map.constraints.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < map.constraints.size(); ++i) {
      if (keep[i])
        continue;
      bool hasDim = false;
      std::vector<unsigned> symbols =
          symbolsOf(map.constraints[i].expr, hasDim);
      if (hasDim ||
          llvm::any_of(symbols, [&](unsigned s) { return used[s]; })) {
        keep[i] = changed = true;
        for (unsigned s : symbols)
          used[s] = true;
      }
    }
  }
  if (llvm::all_of(used, [](bool u) { return u; }))
    return false;

  // The other constraints involve unused symbols only: they restrict
  // nothing but whether the domain is empty. Decide that by enumeration.
  std::vector<unsigned> involved;
  std::vector<const IndexingConstraint *> dropped;
  for (size_t i = 0; i < map.constraints.size(); ++i) {
    if (keep[i])
      continue;
    dropped.push_back(&map.constraints[i]);
    bool hasDim = false;
    for (unsigned s : symbolsOf(map.constraints[i].expr, hasDim))
      if (!llvm::is_contained(involved, s))
        involved.push_back(s);
  }
  if (!dropped.empty()) {
    int64_t points = 1;
    for (unsigned s : involved) {
      std::optional<int64_t> size = map.getSymbolVar(s).bounds.size();
      std::optional<int64_t> product =
          size ? checkedMul(points, *size) : std::nullopt;
      points = product ? *product : kMaxEnumeratedSymbolPoints + 1;
      if (points > kMaxEnumeratedSymbolPoints)
        break;
    }
    if (points > kMaxEnumeratedSymbolPoints) {
      // Too many to decide: keep them, and their symbols.
      for (unsigned s : involved)
        used[s] = true;
      for (size_t i = 0; i < keep.size(); ++i)
        keep[i] = true;
    } else {
      llvm::SmallVector<int64_t> dims(map.getNumDims(), 0);
      llvm::SmallVector<int64_t> symbols(numSymbols, 0);
      for (unsigned s : involved)
        symbols[s] = map.getSymbolVar(s).bounds.lower;
      bool satisfiable = false;
      for (int64_t point = 0; point < points && !satisfiable; ++point) {
        satisfiable = llvm::all_of(dropped, [&](const IndexingConstraint *c) {
          std::optional<int64_t> value =
              evaluateAffineExpr(c->expr, dims, symbols);
          return value && c->bounds.contains(*value);
        });
        // Next point, odometer style.
        for (unsigned s : involved) {
          if (symbols[s] < map.getSymbolVar(s).bounds.upper) {
            ++symbols[s];
            break;
          }
          symbols[s] = map.getSymbolVar(s).bounds.lower;
        }
      }
      if (!satisfiable) {
        becomeEmpty();
        return true;
      }
    }
  }
  if (llvm::all_of(used, [](bool u) { return u; }))
    return false;

  mlir::MLIRContext *context = map.getContext();
  llvm::SmallVector<AffineExpr> dimReplacements, symbolReplacements;
  for (unsigned i = 0; i < map.getNumDims(); ++i)
    dimReplacements.push_back(mlir::getAffineDimExpr(i, context));
  std::vector<IndexingVariable> rangeVars, rtVars;
  unsigned next = 0;
  for (unsigned s = 0; s < numSymbols; ++s) {
    if (!used[s]) {
      count(SimplifyRule::UnusedSymbol);
      symbolReplacements.push_back(mlir::getAffineConstantExpr(0, context));
      continue;
    }
    symbolReplacements.push_back(mlir::getAffineSymbolExpr(next++, context));
    (s < map.getNumRangeVars() ? rangeVars : rtVars)
        .push_back(map.getSymbolVar(s));
  }
  std::vector<IndexingConstraint> kept;
  for (size_t i = 0; i < map.constraints.size(); ++i)
    if (keep[i])
      kept.push_back({map.constraints[i].expr.replaceDimsAndSymbols(
                          dimReplacements, symbolReplacements),
                      map.constraints[i].bounds});
  map.affineMap = map.affineMap.replaceDimsAndSymbols(
      dimReplacements, symbolReplacements, map.getNumDims(), next);
  map.rangeVars = std::move(rangeVars);
  map.rtVars = std::move(rtVars);
  map.constraints = std::move(kept);
  return true;
}

bool IndexingMap::simplify(SimplifyStats *stats) {
  return IndexingMapSimplifier(*this, stats).run();
}

IndexingMap IndexingMap::simplified(SimplifyStats *stats) const {
  IndexingMap copy = *this;
  copy.simplify(stats);
  return copy;
}

bool IndexingMap::removeUnusedSymbols() {
  return IndexingMapSimplifier(*this, nullptr).removeUnusedSymbols();
}

} // namespace tessel
