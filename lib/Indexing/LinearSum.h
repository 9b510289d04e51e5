//===- LinearSum.h - Affine expressions as coefficients * atoms -*- C++ -*-===//
//
// Internal to lib/Indexing. The simplifier sees `(d0 floordiv 4) * 8 + d1 *
// 2 - 3` as the terms {(d0 floordiv 4, 8), (d1, 2)} and the constant -3:
// sums and products by constants are flattened; everything else (a
// variable, floordiv, ceildiv, mod) is an atom. Terms keep the order of
// their first appearance so that rebuilding an already simple expression
// gives it back unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_INDEXING_LINEARSUM_H
#define TESSEL_LIB_INDEXING_LINEARSUM_H

#include "tessel/Indexing/Interval.h"
#include "tessel/Support/MathExtras.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <numeric>

namespace tessel::detail {

struct Term {
  mlir::AffineExpr atom;
  int64_t coefficient;
};

struct LinearSum {
  llvm::SmallVector<Term, 4> terms;
  int64_t constant = 0;
  /// Set when a coefficient or the constant overflowed; the sum is then
  /// meaningless and callers leave the expression alone.
  bool overflow = false;

  void addConstant(int64_t value) {
    std::optional<int64_t> sum = checkedAdd(constant, value);
    if (!sum)
      overflow = true;
    else
      constant = *sum;
  }
  /// Adds coefficient * atom; returns true when it merged with a term of
  /// the same atom.
  bool addTerm(mlir::AffineExpr atom, int64_t coefficient) {
    for (Term &term : terms) {
      if (term.atom != atom)
        continue;
      std::optional<int64_t> sum = checkedAdd(term.coefficient, coefficient);
      if (!sum)
        overflow = true;
      else
        term.coefficient = *sum;
      return true;
    }
    terms.push_back({atom, coefficient});
    return false;
  }
  void dropZeroTerms() {
    llvm::erase_if(terms,
                   [](const Term &term) { return term.coefficient == 0; });
  }
  /// True when some coefficient is INT64_MIN (no gcd or negation of it).
  bool hasExtremeCoefficient() const {
    return llvm::any_of(terms, [](const Term &term) {
      return term.coefficient == Interval::kMin;
    });
  }
};

/// True for the expressions a LinearSum keeps whole.
inline bool isAtom(mlir::AffineExpr expr) {
  switch (expr.getKind()) {
  case mlir::AffineExprKind::Add:
  case mlir::AffineExprKind::Constant:
    return false;
  case mlir::AffineExprKind::Mul: {
    auto binary = llvm::cast<mlir::AffineBinaryOpExpr>(expr);
    return !llvm::isa<mlir::AffineConstantExpr>(binary.getLHS()) &&
           !llvm::isa<mlir::AffineConstantExpr>(binary.getRHS());
  }
  default:
    return true;
  }
}

using AtomizeFn = llvm::function_ref<mlir::AffineExpr(mlir::AffineExpr)>;

/// Adds scale * expr to `sum`. Each atom goes through `atomize` first (the
/// simplifier passes its simplify; null keeps atoms as they are); when that
/// returns a non-atom, the result is flattened in turn (its atoms as they
/// are). Sets *merged when a term joined an existing one.
void collect(mlir::AffineExpr expr, int64_t scale, LinearSum &sum,
             AtomizeFn atomize, bool *merged = nullptr);

inline void collectAsIs(mlir::AffineExpr expr, int64_t scale, LinearSum &sum) {
  collect(expr, scale, sum, nullptr);
}

/// The sum as an expression: terms left to right, the constant last.
inline mlir::AffineExpr build(const LinearSum &sum,
                              mlir::MLIRContext *context) {
  mlir::AffineExpr result;
  for (const Term &term : sum.terms) {
    if (term.coefficient == 0)
      continue;
    mlir::AffineExpr product =
        term.coefficient == 1 ? term.atom : term.atom * term.coefficient;
    result = result ? result + product : product;
  }
  if (!result)
    return mlir::getAffineConstantExpr(sum.constant, context);
  if (sum.constant != 0)
    result = result + sum.constant;
  return result;
}

/// gcd of magnitudes, for values other than INT64_MIN.
inline int64_t gcd64(int64_t a, int64_t b) {
  return std::gcd(a < 0 ? -a : a, b < 0 ? -b : b);
}

} // namespace tessel::detail

#endif // TESSEL_LIB_INDEXING_LINEARSUM_H
