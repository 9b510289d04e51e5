//===- DivisibilityAnalysis.h - Divisibility of SSA values -----*- C++ -*-===//
//
// A sparse forward dataflow analysis that gives every integer and index value
// a tessel::Divisibility (tessel/Support/Divisibility.h): what is known about
// it modulo some m. It reads
//
//   arith.constant, addi, subi, muli (nsw means no wrap), divsi, divui,
//   ceildivsi, floordivsi, remsi, remui, shli, shrsi, shrui, andi, ori, xori,
//   minsi, maxsi, minui, maxui, select, index_cast(ui), extsi, extui, trunci;
//   scf.for induction variables (lower bound + k * step); affine.apply;
//   tessel.apply_indexing; gpu.thread_id / block_id (constant 0 with
//   upper_bound 1); tpu.assume_multiple (trusted);
//
// and knows nothing of anything else (function arguments, loaded values):
//
//   %c128 = arith.constant 128 : index
//   %x = arith.muli %i, %c128 overflow<nsw> : index    // 0 mod 128
//   %y = arith.addi %x, %c32 overflow<nsw> : index     // 32 mod 128
//   %z = arith.muli %i, %c24 : index                   // 0 mod 8 (may wrap)
//
// Run it with loadDivisibilityAnalysis(solver) and read the results with
// getDivisibility(solver, value).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_ANALYSIS_DIVISIBILITYANALYSIS_H
#define TESSEL_ANALYSIS_DIVISIBILITYANALYSIS_H

#include "tessel/Support/Divisibility.h"

#include "mlir/Analysis/DataFlow/SparseAnalysis.h"

#include <optional>

namespace tessel {

/// The lattice value: nothing yet (the bottom, before the value is reached)
/// or a Divisibility.
class DivisibilityValue {
public:
  DivisibilityValue() = default;
  DivisibilityValue(Divisibility d) : value(d) {}

  bool isUninitialized() const { return !value.has_value(); }
  /// @pre !isUninitialized()
  const Divisibility &get() const { return *value; }

  static DivisibilityValue join(const DivisibilityValue &a,
                                const DivisibilityValue &b);
  bool operator==(const DivisibilityValue &o) const { return value == o.value; }
  void print(llvm::raw_ostream &os) const;

private:
  std::optional<Divisibility> value;
};

class DivisibilityLattice : public mlir::dataflow::Lattice<DivisibilityValue> {
public:
  using Lattice::Lattice;
};

/// The analysis. Load it with loadDivisibilityAnalysis, which also loads the
/// dead-code and constant-propagation analyses it needs.
class DivisibilityAnalysis
    : public mlir::dataflow::SparseForwardDataFlowAnalysis<
          DivisibilityLattice> {
public:
  using SparseForwardDataFlowAnalysis::SparseForwardDataFlowAnalysis;

  void visitOperation(mlir::Operation *op,
                      llvm::ArrayRef<const DivisibilityLattice *> operands,
                      llvm::ArrayRef<DivisibilityLattice *> results) override;
  void visitNonControlFlowArguments(
      mlir::Operation *op, const mlir::RegionSuccessor &successor,
      llvm::ArrayRef<DivisibilityLattice *> argLattices,
      unsigned firstIndex) override;
  void setToEntryState(DivisibilityLattice *lattice) override;
};

/// Loads the analysis and what it depends on into `solver`.
void loadDivisibilityAnalysis(mlir::DataFlowSolver &solver);

/// What the solver knows of `value` (unknown when it was never reached or is
/// not an integer).
Divisibility getDivisibility(const mlir::DataFlowSolver &solver,
                             mlir::Value value);

/// What is known of an affine expression (mathematical integers: affine
/// maps do not wrap) over dims and symbols known as `dims` and `symbols`.
Divisibility evaluateAffineDivisibility(mlir::AffineExpr expr,
                                        llvm::ArrayRef<Divisibility> dims,
                                        llvm::ArrayRef<Divisibility> symbols);

/// The bit width the analysis uses for `type`: 64 for index, the width of an
/// integer type, nullopt for anything else.
std::optional<unsigned> divisibilityWidth(mlir::Type type);

} // namespace tessel

#endif // TESSEL_ANALYSIS_DIVISIBILITYANALYSIS_H
