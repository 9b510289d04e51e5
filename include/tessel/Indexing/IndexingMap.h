//===- IndexingMap.h - Affine maps with a bounded domain --------*- C++ -*-===//
//
// An indexing map says which element an index reads or lands on. It is an
// mlir::AffineMap together with the domain it is defined on:
//
//   (d0, d1)[s0]{rt0} -> (d1, d0 + s0 + rt0),
//   domain: d0 in [0, 9], d1 in [0, 19], s0 in [0, 3], rt0 in [0, 2],
//           d0 + s0 in [0, 11]
//
//   d0, d1    dimension variables (dimVars): the index the map is applied
//             to, e.g. an output index of an op or a thread id;
//   s0        range variables (rangeVars): symbols that run over their whole
//             range, e.g. the reduced dims of a reduce; the map sends one
//             (d0, d1) to the set of results over all valid s0;
//   rt0       runtime variables (rtVars): symbols whose value is only known
//             at run time (a dynamic-slice offset), known to lie in a range;
//   d0 + s0 in [0, 11]
//             a constraint: a point belongs to the domain only when every
//             constraint holds as well as every variable's range.
//
// In the mlir::AffineMap the symbols are the range variables followed by the
// runtime variables: rt0 above is s1 of the affine map. Variables may carry
// names (th_x, bl_x, vector_index); an unnamed variable prints as d<i>,
// s<i> or rt<i>. The text form above is XLA's, and parseIndexingMap() reads
// it back (spaces and line breaks are free).
//
// Worked example: the transpose of f32[20,40] into f32[40,20] reads, for
// output (d0, d1), input (d1, d0):
//
//   MLIRContext context;
//   AffineExpr d0, d1;
//   bindDims(&context, d0, d1);
//   IndexingMap map = IndexingMap::fromTensorSizes(
//       AffineMap::get(2, 0, {d1, d0}, &context), {40, 20}, {});
//   map.toString();
//     -> "(d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]"
//   map.evaluate({3, 7}, {});   -> {7, 3}
//
// A pad with interior padding reads its operand only at every other index;
// the map carries that as a constraint, and simplify() turns the range
// constraints on single variables into tighter variable ranges:
//
//   (d0) -> ((d0 - 1) floordiv 2), domain: d0 in [0, 11],
//       d0 - 1 in [0, 6], (d0 - 1) mod 2 in [0, 0]
//   simplify() ->
//   (d0) -> ((d0 - 1) floordiv 2), domain: d0 in [1, 7], (d0 - 1) mod 2 in
//       [0, 0]
//
// Maps compose along a graph (composeIndexingMaps: the results of the first
// feed the dims of the second) and grow unless simplified; simplify() folds
// floordiv and mod using the variables' ranges, tightens and prunes
// constraints, removes unused symbols and detects maps whose domain is known
// to be empty (printed `KNOWN EMPTY`). Every rewrite is exact on the domain;
// BruteForce.h checks that by enumeration.
//
// Ownership: the affine expressions live in an mlir::MLIRContext that the
// map points to but does not own; the context must outlive the map. Maps
// from different contexts never compare equal. IndexingMap is a value type:
// copyable, printable, comparable (== compares everything that prints,
// names included; constraints as a set) and hashable (llvm::hash_value,
// IndexingMapHash).
//
// Semantics of arithmetic: floordiv and mod round toward negative infinity,
// divisors are positive constants; values are int64_t and a map whose values
// overflow 64 bits on its domain has no defined result there.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INDEXING_INDEXINGMAP_H
#define TESSEL_INDEXING_INDEXINGMAP_H

#include "tessel/Indexing/Interval.h"
#include "tessel/Support/Expected.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tessel {

struct SimplifyStats;

/// A variable of an indexing map: its inclusive range and an optional name.
struct IndexingVariable {
  Interval bounds;
  /// Empty for the default name (d<i>, s<i>, rt<i>).
  std::string name;

  IndexingVariable() = default;
  IndexingVariable(Interval bounds, std::string name = "")
      : bounds(bounds), name(std::move(name)) {}
  IndexingVariable(int64_t lower, int64_t upper, std::string name = "")
      : bounds(lower, upper), name(std::move(name)) {}

  bool operator==(const IndexingVariable &other) const {
    return bounds == other.bounds && name == other.name;
  }
  bool operator!=(const IndexingVariable &other) const {
    return !(*this == other);
  }
};

/// A constraint `expr in [lower, upper]` on the domain.
struct IndexingConstraint {
  mlir::AffineExpr expr;
  Interval bounds;

  bool operator==(const IndexingConstraint &other) const {
    return expr == other.expr && bounds == other.bounds;
  }
};

class IndexingMap {
public:
  using Variable = IndexingVariable;
  using Constraint = IndexingConstraint;

  /// A map from its parts. Constraints on the same expression are merged
  /// (their ranges intersected); an empty range makes the map known empty.
  /// @pre map.getNumDims() == dimVars.size() and map.getNumSymbols() ==
  ///      rangeVars.size() + rtVars.size(); verify() says what else must
  ///      hold (pure affine, positive constant divisors, distinct names).
  IndexingMap(mlir::AffineMap map, std::vector<Variable> dimVars,
              std::vector<Variable> rangeVars, std::vector<Variable> rtVars,
              llvm::ArrayRef<Constraint> constraints = {});

  /// The map with dims in [0, dimSizes[i] - 1] and range variables in
  /// [0, symbolSizes[i] - 1] (no runtime variables): the usual map of an op
  /// whose index space is a tensor shape.
  /// @pre dimSizes.size() == map.getNumDims(), symbolSizes.size() ==
  ///      map.getNumSymbols().
  static IndexingMap fromTensorSizes(mlir::AffineMap map,
                                     llvm::ArrayRef<int64_t> dimSizes,
                                     llvm::ArrayRef<int64_t> symbolSizes);
  /// (d0, ..., dn-1) -> (d0, ..., dn-1) over a shape: elementwise ops.
  static IndexingMap identity(mlir::MLIRContext *context,
                              llvm::ArrayRef<int64_t> sizes);
  /// The known-empty map with `numDims` dims and `numResults` results.
  static IndexingMap knownEmpty(mlir::MLIRContext *context, unsigned numDims,
                                unsigned numResults);

  mlir::MLIRContext *getContext() const { return affineMap.getContext(); }
  mlir::AffineMap getAffineMap() const { return affineMap; }
  unsigned getNumDims() const { return dimVars.size(); }
  unsigned getNumRangeVars() const { return rangeVars.size(); }
  unsigned getNumRTVars() const { return rtVars.size(); }
  /// Range variables plus runtime variables: the affine map's symbols.
  unsigned getNumSymbols() const { return rangeVars.size() + rtVars.size(); }
  unsigned getNumResults() const { return affineMap.getNumResults(); }

  const std::vector<Variable> &getDimVars() const { return dimVars; }
  const std::vector<Variable> &getRangeVars() const { return rangeVars; }
  const std::vector<Variable> &getRTVars() const { return rtVars; }
  const Variable &getDimVar(unsigned i) const { return dimVars[i]; }
  /// Symbol `i` of the affine map: a range variable for i <
  /// getNumRangeVars(), else a runtime variable.
  const Variable &getSymbolVar(unsigned i) const;
  /// Bounds of every dim, then of every symbol.
  llvm::SmallVector<Interval> getDimBounds() const;
  llvm::SmallVector<Interval> getSymbolBounds() const;
  /// The constraints, in the order they were added.
  const std::vector<Constraint> &getConstraints() const { return constraints; }

  /// Printed names: the variable's name, or d<i> / s<i> / rt<i>.
  std::string getDimName(unsigned i) const;
  std::string getSymbolName(unsigned i) const;
  std::vector<std::string> getDimNames() const;
  std::vector<std::string> getSymbolNames() const;

  /// True once the domain is known to hold no point. A map can be empty
  /// without being known empty (simplify() finds most such cases).
  bool isKnownEmpty() const { return knownEmptyFlag; }

  /// Adds `expr in bounds`, intersecting with an existing constraint on the
  /// same expression. @pre expr uses only this map's dims and symbols.
  void addConstraint(mlir::AffineExpr expr, Interval bounds);
  /// Replaces the range of a variable.
  void setDimBounds(unsigned i, Interval bounds);
  void setSymbolBounds(unsigned i, Interval bounds);
  /// Makes the map known empty: results become 0, constraints are dropped,
  /// variables keep their names and get the empty range [0, -1].
  void markKnownEmpty();

  /// Why the map is malformed (counts that do not match, an expression that
  /// is not pure affine, a divisor that is not a positive constant, a name
  /// that is not an identifier or is used twice), or nullopt.
  std::optional<std::string> verify() const;

  /// Rewrites the map into a simpler one with the same domain and the same
  /// value at every point of it (see Simplifier.h for the rules). Returns
  /// true when anything changed. Symbols that no result and no constraint
  /// uses are removed, so the number of symbols can shrink.
  bool simplify(SimplifyStats *stats = nullptr);
  /// A simplified copy.
  IndexingMap simplified(SimplifyStats *stats = nullptr) const;
  /// Removes range and runtime variables unused by the results; returns true
  /// when any was removed. Constraints that involve only such variables are
  /// checked for satisfiability by enumeration and then dropped (the map
  /// becomes known empty when they cannot hold); a variable that a kept
  /// constraint still uses stays.
  bool removeUnusedSymbols();

  /// True when (dims, symbols) lies in the ranges and satisfies every
  /// constraint. @pre dims.size() == getNumDims(), symbols.size() ==
  /// getNumSymbols().
  bool contains(llvm::ArrayRef<int64_t> dims,
                llvm::ArrayRef<int64_t> symbols) const;
  /// The results at a point of the domain, or nullopt when the point is
  /// outside the domain (or a value overflows int64_t).
  std::optional<llvm::SmallVector<int64_t>>
  evaluate(llvm::ArrayRef<int64_t> dims, llvm::ArrayRef<int64_t> symbols) const;

  /// XLA's text form: `(d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], s0 in
  /// [0, 3]`, or `KNOWN EMPTY`. Constraints print sorted by their text.
  void print(llvm::raw_ostream &os) const;
  std::string toString() const;

  bool operator==(const IndexingMap &other) const;
  bool operator!=(const IndexingMap &other) const { return !(*this == other); }

private:
  mlir::AffineMap affineMap;
  std::vector<Variable> dimVars;
  std::vector<Variable> rangeVars;
  std::vector<Variable> rtVars;
  std::vector<Constraint> constraints;
  bool knownEmptyFlag = false;

  friend class IndexingMapSimplifier;
};

llvm::hash_code hash_value(const IndexingMap &map);
struct IndexingMapHash {
  size_t operator()(const IndexingMap &map) const;
};

std::ostream &operator<<(std::ostream &out, const IndexingMap &map);
llvm::raw_ostream &operator<<(llvm::raw_ostream &out, const IndexingMap &map);

/// `second` after `first`: the results of `first` feed the dims of `second`
/// (so first.getNumResults() == second.getNumDims()). The composed map has
/// first's dims; its range variables are second's then first's, likewise
/// its runtime variables (XLA's order). Its constraints are first's,
/// second's (with first's results substituted), and one per dim of second
/// saying that first's result lies in that dim's range. The result is not
/// simplified; call simplify().
/// @pre first.getNumResults() == second.getNumDims(), same context.
IndexingMap composeIndexingMaps(const IndexingMap &first,
                                const IndexingMap &second);

/// The values `expr` can take when its dims and symbols range over `dims`
/// and `symbols`, computed bottom-up in exact (128-bit) interval
/// arithmetic. An error names the first subexpression whose value may leave
/// int64 ("d0 * 2 reaches 18446744073709551614, past int64") with the
/// given names. A division by a variable gives the full int64 range.
Expected<Interval> exactRange(mlir::AffineExpr expr,
                              llvm::ArrayRef<Interval> dims,
                              llvm::ArrayRef<Interval> symbols,
                              llvm::ArrayRef<std::string> dimNames = {},
                              llvm::ArrayRef<std::string> symbolNames = {});

/// Why some result or constraint of `map` may overflow int64 somewhere on
/// its domain ("result 0: -d0 reaches 9223372036854775808, past int64"), or
/// nullopt. At such a point the map has no value, and simplifying or
/// composing it could silently change the answer (MLIR folds constants
/// with wrap-around).
std::optional<std::string> findOverflow(const IndexingMap &map);

/// composeIndexingMaps, but an error instead of a map when a value of
/// `first`, of `second` on the values `first` gives, or of the composed map
/// may overflow int64 (MLIR's folding would wrap it: `d0 * 2^40` after
/// `d0 * 2^40` would become `d0 * 0`).
/// @pre as for composeIndexingMaps.
Expected<IndexingMap> composeIndexingMapsChecked(const IndexingMap &first,
                                                 const IndexingMap &second);

/// Parses XLA's text form (see the top of this file). An error is located
/// in `text` and underlines the offending token. Expressions follow MLIR's
/// affine grammar: + - * floordiv ceildiv mod, parentheses, integers; a
/// product needs a constant factor and a divisor must be a positive
/// constant. `is_simplified: true|false` at the end (newer XLA) is accepted
/// and ignored.
Expected<IndexingMap> parseIndexingMap(llvm::StringRef text,
                                       mlir::MLIRContext *context);

/// Parses one affine expression over the given variable names (dims first,
/// then symbols) in the same grammar.
Expected<mlir::AffineExpr>
parseAffineExpr(llvm::StringRef text, llvm::ArrayRef<std::string> dimNames,
                llvm::ArrayRef<std::string> symbolNames,
                mlir::MLIRContext *context);

/// Prints an affine expression as MLIR does (`d0 floordiv 4`, `(d0 mod 8) *
/// 512`, `d0 - d1 * 2`) with the given names for dims and symbols.
void printAffineExpr(mlir::AffineExpr expr,
                     llvm::ArrayRef<std::string> dimNames,
                     llvm::ArrayRef<std::string> symbolNames,
                     llvm::raw_ostream &os);
std::string affineExprToString(mlir::AffineExpr expr,
                               llvm::ArrayRef<std::string> dimNames,
                               llvm::ArrayRef<std::string> symbolNames);

/// The value of an expression, or nullopt when it overflows int64_t (or
/// divides by something that is not a positive constant).
std::optional<int64_t> evaluateAffineExpr(mlir::AffineExpr expr,
                                          llvm::ArrayRef<int64_t> dims,
                                          llvm::ArrayRef<int64_t> symbols);

} // namespace tessel

#endif // TESSEL_INDEXING_INDEXINGMAP_H
