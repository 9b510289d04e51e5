//===- IndexingMap.cpp - Affine maps with a bounded domain ----------------===//
#include "tessel/Indexing/IndexingMap.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <cctype>

using mlir::AffineBinaryOpExpr;
using mlir::AffineConstantExpr;
using mlir::AffineDimExpr;
using mlir::AffineExpr;
using mlir::AffineExprKind;
using mlir::AffineMap;
using mlir::AffineSymbolExpr;

namespace tessel {

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

IndexingMap::IndexingMap(AffineMap map, std::vector<Variable> dimVars,
                         std::vector<Variable> rangeVars,
                         std::vector<Variable> rtVars,
                         llvm::ArrayRef<Constraint> constraintList)
    : affineMap(map), dimVars(std::move(dimVars)),
      rangeVars(std::move(rangeVars)), rtVars(std::move(rtVars)) {
  assert(map.getNumDims() == this->dimVars.size() &&
         "one dim variable per dim of the affine map");
  assert(map.getNumSymbols() == this->rangeVars.size() + this->rtVars.size() &&
         "one range or runtime variable per symbol of the affine map");
  for (const Constraint &constraint : constraintList)
    addConstraint(constraint.expr, constraint.bounds);
  for (const Variable &var : this->dimVars)
    if (var.bounds.isEmpty())
      knownEmptyFlag = true;
  for (unsigned i = 0; i < getNumSymbols(); ++i)
    if (getSymbolVar(i).bounds.isEmpty())
      knownEmptyFlag = true;
  if (knownEmptyFlag)
    markKnownEmpty();
}

IndexingMap IndexingMap::fromTensorSizes(AffineMap map,
                                         llvm::ArrayRef<int64_t> dimSizes,
                                         llvm::ArrayRef<int64_t> symbolSizes) {
  assert(dimSizes.size() == map.getNumDims() &&
         symbolSizes.size() == map.getNumSymbols());
  std::vector<Variable> dims, symbols;
  for (int64_t size : dimSizes)
    dims.emplace_back(0, size - 1);
  for (int64_t size : symbolSizes)
    symbols.emplace_back(0, size - 1);
  return IndexingMap(map, std::move(dims), std::move(symbols), {});
}

IndexingMap IndexingMap::identity(mlir::MLIRContext *context,
                                  llvm::ArrayRef<int64_t> sizes) {
  return fromTensorSizes(
      AffineMap::getMultiDimIdentityMap(sizes.size(), context), sizes, {});
}

IndexingMap IndexingMap::knownEmpty(mlir::MLIRContext *context,
                                    unsigned numDims, unsigned numResults) {
  llvm::SmallVector<AffineExpr> zeros(numResults,
                                      mlir::getAffineConstantExpr(0, context));
  IndexingMap map(AffineMap::get(numDims, 0, zeros, context),
                  std::vector<Variable>(numDims, Variable(0, -1)), {}, {});
  return map;
}

void IndexingMap::markKnownEmpty() {
  knownEmptyFlag = true;
  llvm::SmallVector<AffineExpr> zeros(
      getNumResults(), mlir::getAffineConstantExpr(0, getContext()));
  affineMap =
      AffineMap::get(getNumDims(), getNumSymbols(), zeros, getContext());
  constraints.clear();
  for (std::vector<Variable> *vars : {&dimVars, &rangeVars, &rtVars})
    for (Variable &var : *vars)
      var.bounds = Interval(0, -1);
}

void IndexingMap::addConstraint(AffineExpr expr, Interval bounds) {
  if (knownEmptyFlag)
    return;
  if (auto constant = llvm::dyn_cast<AffineConstantExpr>(expr)) {
    if (!bounds.contains(constant.getValue()))
      markKnownEmpty();
    return;
  }
  auto it = llvm::find_if(constraints, [&](const Constraint &constraint) {
    return constraint.expr == expr;
  });
  Interval merged = bounds;
  if (it != constraints.end()) {
    it->bounds = it->bounds.intersect(bounds);
    merged = it->bounds;
  } else {
    constraints.push_back({expr, bounds});
  }
  if (merged.isEmpty())
    markKnownEmpty();
}

void IndexingMap::setDimBounds(unsigned i, Interval bounds) {
  dimVars[i].bounds = bounds;
  if (bounds.isEmpty())
    markKnownEmpty();
}

void IndexingMap::setSymbolBounds(unsigned i, Interval bounds) {
  if (i < rangeVars.size())
    rangeVars[i].bounds = bounds;
  else
    rtVars[i - rangeVars.size()].bounds = bounds;
  if (bounds.isEmpty())
    markKnownEmpty();
}

//===----------------------------------------------------------------------===//
// Accessors
//===----------------------------------------------------------------------===//

const IndexingVariable &IndexingMap::getSymbolVar(unsigned i) const {
  return i < rangeVars.size() ? rangeVars[i] : rtVars[i - rangeVars.size()];
}

llvm::SmallVector<Interval> IndexingMap::getDimBounds() const {
  llvm::SmallVector<Interval> bounds;
  for (const Variable &var : dimVars)
    bounds.push_back(var.bounds);
  return bounds;
}

llvm::SmallVector<Interval> IndexingMap::getSymbolBounds() const {
  llvm::SmallVector<Interval> bounds;
  for (unsigned i = 0; i < getNumSymbols(); ++i)
    bounds.push_back(getSymbolVar(i).bounds);
  return bounds;
}

std::string IndexingMap::getDimName(unsigned i) const {
  return dimVars[i].name.empty() ? "d" + std::to_string(i) : dimVars[i].name;
}

std::string IndexingMap::getSymbolName(unsigned i) const {
  const Variable &var = getSymbolVar(i);
  if (!var.name.empty())
    return var.name;
  if (i < rangeVars.size())
    return "s" + std::to_string(i);
  return "rt" + std::to_string(i - rangeVars.size());
}

std::vector<std::string> IndexingMap::getDimNames() const {
  std::vector<std::string> names;
  for (unsigned i = 0; i < getNumDims(); ++i)
    names.push_back(getDimName(i));
  return names;
}

std::vector<std::string> IndexingMap::getSymbolNames() const {
  std::vector<std::string> names;
  for (unsigned i = 0; i < getNumSymbols(); ++i)
    names.push_back(getSymbolName(i));
  return names;
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

static bool isIdentifier(llvm::StringRef name) {
  if (name.empty() ||
      !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return name != "floordiv" && name != "ceildiv" && name != "mod" &&
         name != "domain" && name != "in";
}

/// Why `expr` is not a pure affine expression with positive constant
/// divisors, or an empty string.
static std::string affineProblem(AffineExpr expr, unsigned numDims,
                                 unsigned numSymbols) {
  std::string problem;
  expr.walk([&](AffineExpr sub) {
    if (!problem.empty())
      return;
    if (auto dim = llvm::dyn_cast<AffineDimExpr>(sub)) {
      if (dim.getPosition() >= numDims)
        problem = "uses d" + std::to_string(dim.getPosition()) +
                  " but the map has " + std::to_string(numDims) + " dims";
      return;
    }
    if (auto symbol = llvm::dyn_cast<AffineSymbolExpr>(sub)) {
      if (symbol.getPosition() >= numSymbols)
        problem = "uses s" + std::to_string(symbol.getPosition()) +
                  " but the map has " + std::to_string(numSymbols) + " symbols";
      return;
    }
    auto binary = llvm::dyn_cast<AffineBinaryOpExpr>(sub);
    if (!binary || binary.getKind() == AffineExprKind::Add)
      return;
    auto lhsConstant = llvm::dyn_cast<AffineConstantExpr>(binary.getLHS());
    auto rhsConstant = llvm::dyn_cast<AffineConstantExpr>(binary.getRHS());
    if (binary.getKind() == AffineExprKind::Mul) {
      if (!lhsConstant && !rhsConstant)
        problem = "multiplies two non-constant expressions";
      return;
    }
    if (!rhsConstant || rhsConstant.getValue() <= 0)
      problem = "divides by something that is not a positive constant";
  });
  return problem;
}

std::optional<std::string> IndexingMap::verify() const {
  if (affineMap.getNumDims() != dimVars.size())
    return "the affine map has " + std::to_string(affineMap.getNumDims()) +
           " dims but the domain has " + std::to_string(dimVars.size());
  if (affineMap.getNumSymbols() != getNumSymbols())
    return "the affine map has " + std::to_string(affineMap.getNumSymbols()) +
           " symbols but the domain has " + std::to_string(getNumSymbols()) +
           " range and runtime variables";
  llvm::StringSet<> seen;
  std::vector<std::string> names = getDimNames();
  std::vector<std::string> symbolNames = getSymbolNames();
  names.insert(names.end(), symbolNames.begin(), symbolNames.end());
  for (const std::string &name : names) {
    if (!isIdentifier(name))
      return "variable name '" + name + "' is not an identifier";
    if (!seen.insert(name).second)
      return "variable name '" + name + "' is used twice";
  }
  for (AffineExpr result : affineMap.getResults()) {
    std::string problem = affineProblem(result, getNumDims(), getNumSymbols());
    if (!problem.empty())
      return "result " +
             affineExprToString(result, getDimNames(), getSymbolNames()) + " " +
             problem;
  }
  for (const Constraint &constraint : constraints) {
    std::string problem =
        affineProblem(constraint.expr, getNumDims(), getNumSymbols());
    if (!problem.empty())
      return "constraint " +
             affineExprToString(constraint.expr, getDimNames(),
                                getSymbolNames()) +
             " " + problem;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

std::optional<int64_t> evaluateAffineExpr(AffineExpr expr,
                                          llvm::ArrayRef<int64_t> dims,
                                          llvm::ArrayRef<int64_t> symbols) {
  switch (expr.getKind()) {
  case AffineExprKind::Constant:
    return llvm::cast<AffineConstantExpr>(expr).getValue();
  case AffineExprKind::DimId:
    return dims[llvm::cast<AffineDimExpr>(expr).getPosition()];
  case AffineExprKind::SymbolId:
    return symbols[llvm::cast<AffineSymbolExpr>(expr).getPosition()];
  default:
    break;
  }
  auto binary = llvm::cast<AffineBinaryOpExpr>(expr);
  std::optional<int64_t> lhs =
      evaluateAffineExpr(binary.getLHS(), dims, symbols);
  std::optional<int64_t> rhs =
      evaluateAffineExpr(binary.getRHS(), dims, symbols);
  if (!lhs || !rhs)
    return std::nullopt;
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return checkedAdd(*lhs, *rhs);
  case AffineExprKind::Mul:
    return checkedMul(*lhs, *rhs);
  case AffineExprKind::FloorDiv:
    if (*rhs <= 0)
      return std::nullopt;
    return floorDiv(*lhs, *rhs);
  case AffineExprKind::CeilDiv:
    if (*rhs <= 0 || *lhs == Interval::kMin)
      return std::nullopt;
    return -floorDiv(-*lhs, *rhs);
  case AffineExprKind::Mod:
    if (*rhs <= 0)
      return std::nullopt;
    return floorMod(*lhs, *rhs);
  default:
    return std::nullopt;
  }
}

bool IndexingMap::contains(llvm::ArrayRef<int64_t> dims,
                           llvm::ArrayRef<int64_t> symbols) const {
  assert(dims.size() == getNumDims() && symbols.size() == getNumSymbols());
  if (knownEmptyFlag)
    return false;
  for (unsigned i = 0; i < dims.size(); ++i)
    if (!dimVars[i].bounds.contains(dims[i]))
      return false;
  for (unsigned i = 0; i < symbols.size(); ++i)
    if (!getSymbolVar(i).bounds.contains(symbols[i]))
      return false;
  for (const Constraint &constraint : constraints) {
    std::optional<int64_t> value =
        evaluateAffineExpr(constraint.expr, dims, symbols);
    if (!value || !constraint.bounds.contains(*value))
      return false;
  }
  return true;
}

std::optional<llvm::SmallVector<int64_t>>
IndexingMap::evaluate(llvm::ArrayRef<int64_t> dims,
                      llvm::ArrayRef<int64_t> symbols) const {
  if (!contains(dims, symbols))
    return std::nullopt;
  llvm::SmallVector<int64_t> results;
  for (AffineExpr result : affineMap.getResults()) {
    std::optional<int64_t> value = evaluateAffineExpr(result, dims, symbols);
    if (!value)
      return std::nullopt;
    results.push_back(*value);
  }
  return results;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

namespace {

/// Prints as MLIR's AsmPrinter does, with caller-chosen names. Operands of
/// `*`, floordiv, ceildiv and mod are parenthesized when they are binary
/// expressions; a sum prints `a - b` for `a + b * -1`, `a - b * 3` for
/// `a + b * -3` and `a - 3` for `a + -3`.
class ExprPrinter {
public:
  ExprPrinter(llvm::ArrayRef<std::string> dimNames,
              llvm::ArrayRef<std::string> symbolNames, llvm::raw_ostream &os)
      : dimNames(dimNames), symbolNames(symbolNames), os(os) {}

  void print(AffineExpr expr, bool parenthesize) {
    switch (expr.getKind()) {
    case AffineExprKind::Constant:
      os << llvm::cast<AffineConstantExpr>(expr).getValue();
      return;
    case AffineExprKind::DimId: {
      unsigned position = llvm::cast<AffineDimExpr>(expr).getPosition();
      if (position < dimNames.size())
        os << dimNames[position];
      else
        os << 'd' << position;
      return;
    }
    case AffineExprKind::SymbolId: {
      unsigned position = llvm::cast<AffineSymbolExpr>(expr).getPosition();
      if (position < symbolNames.size())
        os << symbolNames[position];
      else
        os << 's' << position;
      return;
    }
    default:
      break;
    }
    auto binary = llvm::cast<AffineBinaryOpExpr>(expr);
    if (parenthesize)
      os << '(';
    if (binary.getKind() == AffineExprKind::Add)
      printSum(binary);
    else
      printTight(binary);
    if (parenthesize)
      os << ')';
  }

private:
  static const char *spelling(AffineExprKind kind) {
    switch (kind) {
    case AffineExprKind::Mul:
      return " * ";
    case AffineExprKind::FloorDiv:
      return " floordiv ";
    case AffineExprKind::CeilDiv:
      return " ceildiv ";
    case AffineExprKind::Mod:
      return " mod ";
    default:
      return " + ";
    }
  }

  void printTight(AffineBinaryOpExpr binary) {
    auto rhsConstant = llvm::dyn_cast<AffineConstantExpr>(binary.getRHS());
    if (binary.getKind() == AffineExprKind::Mul && rhsConstant &&
        rhsConstant.getValue() == -1) {
      os << '-';
      print(binary.getLHS(), /*parenthesize=*/true);
      return;
    }
    print(binary.getLHS(), /*parenthesize=*/true);
    os << spelling(binary.getKind());
    print(binary.getRHS(), /*parenthesize=*/true);
  }

  void printSum(AffineBinaryOpExpr sum) {
    AffineExpr lhs = sum.getLHS(), rhs = sum.getRHS();
    if (auto product = llvm::dyn_cast<AffineBinaryOpExpr>(rhs);
        product && product.getKind() == AffineExprKind::Mul) {
      auto factor = llvm::dyn_cast<AffineConstantExpr>(product.getRHS());
      if (factor && factor.getValue() == -1) {
        print(lhs, /*parenthesize=*/false);
        os << " - ";
        print(product.getLHS(),
              product.getLHS().getKind() == AffineExprKind::Add);
        return;
      }
      if (factor && factor.getValue() < -1 &&
          factor.getValue() != Interval::kMin) {
        print(lhs, /*parenthesize=*/false);
        os << " - ";
        print(product.getLHS(), /*parenthesize=*/true);
        os << " * " << -factor.getValue();
        return;
      }
    }
    if (auto constant = llvm::dyn_cast<AffineConstantExpr>(rhs);
        constant && constant.getValue() < 0 &&
        constant.getValue() != Interval::kMin) {
      print(lhs, /*parenthesize=*/false);
      os << " - " << -constant.getValue();
      return;
    }
    print(lhs, /*parenthesize=*/false);
    os << " + ";
    print(rhs, /*parenthesize=*/false);
  }

  llvm::ArrayRef<std::string> dimNames;
  llvm::ArrayRef<std::string> symbolNames;
  llvm::raw_ostream &os;
};

} // namespace

void printAffineExpr(AffineExpr expr, llvm::ArrayRef<std::string> dimNames,
                     llvm::ArrayRef<std::string> symbolNames,
                     llvm::raw_ostream &os) {
  ExprPrinter(dimNames, symbolNames, os).print(expr, /*parenthesize=*/false);
}

std::string affineExprToString(AffineExpr expr,
                               llvm::ArrayRef<std::string> dimNames,
                               llvm::ArrayRef<std::string> symbolNames) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printAffineExpr(expr, dimNames, symbolNames, os);
  return text;
}

void IndexingMap::print(llvm::raw_ostream &os) const {
  if (knownEmptyFlag) {
    os << "KNOWN EMPTY";
    return;
  }
  std::vector<std::string> dimNames = getDimNames();
  std::vector<std::string> symbolNames = getSymbolNames();
  os << '(' << llvm::join(dimNames, ", ") << ')';
  if (!rangeVars.empty())
    os << '['
       << llvm::join(llvm::ArrayRef(symbolNames).take_front(rangeVars.size()),
                     ", ")
       << ']';
  if (!rtVars.empty())
    os << '{'
       << llvm::join(llvm::ArrayRef(symbolNames).drop_front(rangeVars.size()),
                     ", ")
       << '}';
  os << " -> (";
  llvm::interleaveComma(affineMap.getResults(), os, [&](AffineExpr result) {
    printAffineExpr(result, dimNames, symbolNames, os);
  });
  os << ')';
  if (dimVars.empty() && getNumSymbols() == 0 && constraints.empty())
    return;
  os << ", domain: ";
  std::vector<std::string> items;
  for (unsigned i = 0; i < getNumDims(); ++i)
    items.push_back(dimNames[i] + " in " + dimVars[i].bounds.toString());
  for (unsigned i = 0; i < getNumSymbols(); ++i)
    items.push_back(symbolNames[i] + " in " +
                    getSymbolVar(i).bounds.toString());
  std::vector<std::string> constraintTexts;
  for (const Constraint &constraint : constraints)
    constraintTexts.push_back(
        affineExprToString(constraint.expr, dimNames, symbolNames) + " in " +
        constraint.bounds.toString());
  llvm::sort(constraintTexts);
  items.insert(items.end(), constraintTexts.begin(), constraintTexts.end());
  os << llvm::join(items, ", ");
}

std::string IndexingMap::toString() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  return text;
}

std::ostream &operator<<(std::ostream &out, const IndexingMap &map) {
  return out << map.toString();
}

llvm::raw_ostream &operator<<(llvm::raw_ostream &out, const IndexingMap &map) {
  map.print(out);
  return out;
}

//===----------------------------------------------------------------------===//
// Equality and hashing
//===----------------------------------------------------------------------===//

bool IndexingMap::operator==(const IndexingMap &other) const {
  if (affineMap != other.affineMap || dimVars != other.dimVars ||
      rangeVars != other.rangeVars || rtVars != other.rtVars ||
      knownEmptyFlag != other.knownEmptyFlag ||
      constraints.size() != other.constraints.size())
    return false;
  // Expressions are unique within a constraint list, so equal sizes and
  // inclusion mean equal sets.
  return llvm::all_of(constraints, [&](const Constraint &constraint) {
    return llvm::is_contained(other.constraints, constraint);
  });
}

static llvm::hash_code
hashVariables(const std::vector<IndexingVariable> &vars) {
  llvm::hash_code hash = llvm::hash_value(vars.size());
  for (const IndexingVariable &var : vars)
    hash =
        llvm::hash_combine(hash, var.bounds.lower, var.bounds.upper, var.name);
  return hash;
}

llvm::hash_code hash_value(const IndexingMap &map) {
  // Order-independent over the constraints, like operator==.
  size_t constraintHash = 0;
  for (const IndexingConstraint &constraint : map.getConstraints())
    constraintHash += llvm::hash_combine(
        constraint.expr, constraint.bounds.lower, constraint.bounds.upper);
  return llvm::hash_combine(map.getAffineMap(), hashVariables(map.getDimVars()),
                            hashVariables(map.getRangeVars()),
                            hashVariables(map.getRTVars()), constraintHash,
                            map.isKnownEmpty());
}

size_t IndexingMapHash::operator()(const IndexingMap &map) const {
  return hash_value(map);
}

//===----------------------------------------------------------------------===//
// Composition
//===----------------------------------------------------------------------===//

IndexingMap composeIndexingMaps(const IndexingMap &first,
                                const IndexingMap &second) {
  assert(first.getNumResults() == second.getNumDims() &&
         "the results of the first map feed the dims of the second");
  assert(first.getContext() == second.getContext());
  mlir::MLIRContext *context = first.getContext();
  if (first.isKnownEmpty() || second.isKnownEmpty())
    return IndexingMap::knownEmpty(context, first.getNumDims(),
                                   second.getNumResults());

  // Symbols of the composed map: [second range | first range | second rt |
  // first rt].
  unsigned secondRange = second.getNumRangeVars();
  unsigned firstRange = first.getNumRangeVars();
  unsigned secondRT = second.getNumRTVars();
  unsigned firstRT = first.getNumRTVars();
  auto symbol = [&](unsigned position) {
    return mlir::getAffineSymbolExpr(position, context);
  };
  llvm::SmallVector<AffineExpr> firstSymbols, secondSymbols;
  for (unsigned i = 0; i < firstRange; ++i)
    firstSymbols.push_back(symbol(secondRange + i));
  for (unsigned i = 0; i < firstRT; ++i)
    firstSymbols.push_back(symbol(secondRange + firstRange + secondRT + i));
  for (unsigned i = 0; i < secondRange; ++i)
    secondSymbols.push_back(symbol(i));
  for (unsigned i = 0; i < secondRT; ++i)
    secondSymbols.push_back(symbol(secondRange + firstRange + i));

  llvm::SmallVector<AffineExpr> firstDims;
  for (unsigned i = 0; i < first.getNumDims(); ++i)
    firstDims.push_back(mlir::getAffineDimExpr(i, context));
  auto renameFirst = [&](AffineExpr expr) {
    return expr.replaceDimsAndSymbols(firstDims, firstSymbols);
  };
  llvm::SmallVector<AffineExpr> firstResults;
  for (AffineExpr result : first.getAffineMap().getResults())
    firstResults.push_back(renameFirst(result));
  auto substituteSecond = [&](AffineExpr expr) {
    return expr.replaceDimsAndSymbols(firstResults, secondSymbols);
  };

  llvm::SmallVector<AffineExpr> results;
  for (AffineExpr result : second.getAffineMap().getResults())
    results.push_back(substituteSecond(result));
  std::vector<IndexingVariable> rangeVars = second.getRangeVars();
  rangeVars.insert(rangeVars.end(), first.getRangeVars().begin(),
                   first.getRangeVars().end());
  std::vector<IndexingVariable> rtVars = second.getRTVars();
  rtVars.insert(rtVars.end(), first.getRTVars().begin(),
                first.getRTVars().end());
  // Names must stay distinct: drop a symbol name that is already taken.
  llvm::StringSet<> taken;
  for (const IndexingVariable &var : first.getDimVars())
    if (!var.name.empty())
      taken.insert(var.name);
  for (std::vector<IndexingVariable> *vars : {&rangeVars, &rtVars})
    for (IndexingVariable &var : *vars)
      if (!var.name.empty() && !taken.insert(var.name).second)
        var.name.clear();

  unsigned numSymbols = rangeVars.size() + rtVars.size();
  IndexingMap composed(
      AffineMap::get(first.getNumDims(), numSymbols, results, context),
      first.getDimVars(), std::move(rangeVars), std::move(rtVars));
  for (const IndexingConstraint &constraint : first.getConstraints())
    composed.addConstraint(renameFirst(constraint.expr), constraint.bounds);
  for (const IndexingConstraint &constraint : second.getConstraints())
    composed.addConstraint(substituteSecond(constraint.expr),
                           constraint.bounds);
  for (unsigned i = 0; i < second.getNumDims(); ++i)
    composed.addConstraint(firstResults[i], second.getDimVar(i).bounds);
  return composed;
}

} // namespace tessel

namespace tessel {

namespace {

/// A range in 128-bit arithmetic: wide enough for any sum or product of
/// two int64 ranges.
struct WideRange {
  __int128 lower, upper;
};

bool fitsInt64(const WideRange &range) {
  return range.lower >= Interval::kMin && range.upper <= Interval::kMax;
}

__int128 wideFloorDiv(__int128 a, __int128 b) {
  __int128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::string wideToString(__int128 value) {
  bool negative = value < 0;
  unsigned __int128 magnitude =
      negative ? -static_cast<unsigned __int128>(value) : value;
  std::string digits;
  do {
    digits += static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  } while (magnitude);
  if (negative)
    digits += '-';
  return std::string(digits.rbegin(), digits.rend());
}

class RangeChecker {
public:
  RangeChecker(llvm::ArrayRef<Interval> dims, llvm::ArrayRef<Interval> symbols,
               llvm::ArrayRef<std::string> dimNames,
               llvm::ArrayRef<std::string> symbolNames)
      : dims(dims), symbols(symbols), dimNames(dimNames),
        symbolNames(symbolNames) {}

  /// The range of `expr`; sets `problem` at the first subexpression whose
  /// range leaves int64.
  std::optional<WideRange> range(AffineExpr expr) {
    switch (expr.getKind()) {
    case AffineExprKind::Constant: {
      int64_t value = llvm::cast<AffineConstantExpr>(expr).getValue();
      return WideRange{value, value};
    }
    case AffineExprKind::DimId: {
      unsigned i = llvm::cast<AffineDimExpr>(expr).getPosition();
      Interval b = i < dims.size() ? dims[i] : Interval::full();
      return WideRange{b.lower, b.upper};
    }
    case AffineExprKind::SymbolId: {
      unsigned i = llvm::cast<AffineSymbolExpr>(expr).getPosition();
      Interval b = i < symbols.size() ? symbols[i] : Interval::full();
      return WideRange{b.lower, b.upper};
    }
    default:
      break;
    }
    auto binary = llvm::cast<AffineBinaryOpExpr>(expr);
    std::optional<WideRange> lhs = range(binary.getLHS());
    if (!lhs)
      return std::nullopt;
    std::optional<WideRange> rhs = range(binary.getRHS());
    if (!rhs)
      return std::nullopt;
    WideRange out;
    auto constantRhs = llvm::dyn_cast<AffineConstantExpr>(binary.getRHS());
    int64_t divisor = constantRhs ? constantRhs.getValue() : 0;
    switch (expr.getKind()) {
    case AffineExprKind::Add:
      out = {lhs->lower + rhs->lower, lhs->upper + rhs->upper};
      break;
    case AffineExprKind::Mul: {
      __int128 p[] = {lhs->lower * rhs->lower, lhs->lower * rhs->upper,
                      lhs->upper * rhs->lower, lhs->upper * rhs->upper};
      out = {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
      break;
    }
    case AffineExprKind::FloorDiv:
      if (divisor <= 0)
        return WideRange{Interval::kMin, Interval::kMax};
      out = {wideFloorDiv(lhs->lower, divisor),
             wideFloorDiv(lhs->upper, divisor)};
      break;
    case AffineExprKind::CeilDiv:
      if (divisor <= 0)
        return WideRange{Interval::kMin, Interval::kMax};
      out = {-wideFloorDiv(-lhs->lower, divisor),
             -wideFloorDiv(-lhs->upper, divisor)};
      break;
    case AffineExprKind::Mod:
      if (divisor <= 0)
        return WideRange{Interval::kMin, Interval::kMax};
      out = {0, divisor - 1};
      if (lhs->lower >= 0 && lhs->upper < divisor)
        out = *lhs;
      break;
    default:
      return WideRange{Interval::kMin, Interval::kMax};
    }
    if (!fitsInt64(out)) {
      __int128 far = out.upper > Interval::kMax ? out.upper : out.lower;
      problem = affineExprToString(expr, dimNames, symbolNames) + " reaches " +
                wideToString(far) + ", past int64";
      return std::nullopt;
    }
    return out;
  }

  std::string problem;

private:
  llvm::ArrayRef<Interval> dims, symbols;
  llvm::ArrayRef<std::string> dimNames, symbolNames;
};

/// The first result or constraint of a map with these variable ranges that
/// may overflow, as "result N: why".
std::optional<std::string> overflowIn(const IndexingMap &map,
                                      llvm::ArrayRef<Interval> dims,
                                      llvm::ArrayRef<Interval> symbols) {
  std::vector<std::string> dimNames = map.getDimNames();
  std::vector<std::string> symbolNames = map.getSymbolNames();
  RangeChecker checker(dims, symbols, dimNames, symbolNames);
  llvm::ArrayRef<AffineExpr> results = map.getAffineMap().getResults();
  for (size_t i = 0; i < results.size(); ++i)
    if (!checker.range(results[i]))
      return "result " + std::to_string(i) + ": " + checker.problem;
  for (const IndexingConstraint &constraint : map.getConstraints())
    if (!checker.range(constraint.expr))
      return "a constraint: " + checker.problem;
  return std::nullopt;
}

} // namespace

Expected<Interval> exactRange(AffineExpr expr, llvm::ArrayRef<Interval> dims,
                              llvm::ArrayRef<Interval> symbols,
                              llvm::ArrayRef<std::string> dimNames,
                              llvm::ArrayRef<std::string> symbolNames) {
  RangeChecker checker(dims, symbols, dimNames, symbolNames);
  std::optional<WideRange> range = checker.range(expr);
  if (!range)
    return Error(checker.problem);
  return Interval(static_cast<int64_t>(range->lower),
                  static_cast<int64_t>(range->upper));
}

std::optional<std::string> findOverflow(const IndexingMap &map) {
  if (map.isKnownEmpty())
    return std::nullopt;
  return overflowIn(map, map.getDimBounds(), map.getSymbolBounds());
}

Expected<IndexingMap> composeIndexingMapsChecked(const IndexingMap &first,
                                                 const IndexingMap &second) {
  if (first.isKnownEmpty() || second.isKnownEmpty())
    return composeIndexingMaps(first, second);
  if (std::optional<std::string> problem = findOverflow(first))
    return Error("the first map overflows int64 on its domain, " + *problem);
  // The dims of `second` take the values of first's results (within their
  // own ranges).
  llvm::SmallVector<Interval> dims;
  llvm::SmallVector<Interval> firstDims = first.getDimBounds();
  llvm::SmallVector<Interval> firstSymbols = first.getSymbolBounds();
  for (unsigned i = 0; i < first.getNumResults(); ++i) {
    Expected<Interval> range =
        exactRange(first.getAffineMap().getResult(i), firstDims, firstSymbols);
    if (!range)
      return range.takeError();
    dims.push_back(range->intersect(second.getDimVar(i).bounds));
  }
  for (const Interval &range : dims)
    if (range.isEmpty())
      return composeIndexingMaps(first, second);
  if (std::optional<std::string> problem =
          overflowIn(second, dims, second.getSymbolBounds()))
    return Error("the second map overflows int64 on the values the first "
                 "gives, " +
                 *problem);
  IndexingMap composed = composeIndexingMaps(first, second);
  if (std::optional<std::string> problem = findOverflow(composed))
    return Error("the composed map overflows int64, " + *problem);
  return composed;
}

} // namespace tessel
