//===- AlignmentVerifier.cpp - Tile-aligned dynamic indices ---------------===//
#include "tessel/Analysis/AlignmentVerifier.h"

#include "tessel/Analysis/DivisibilityAnalysis.h"
#include "tessel/Dialect/TpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

using namespace mlir;

namespace tessel {
namespace {

/// A memory access: the memref, its indices and how many elements it
/// touches in each memref dim.
struct Access {
  MemRefType type;
  ValueRange indices;
  SmallVector<int64_t> extents;
};

/// The vector covers the memref's trailing dims.
SmallVector<int64_t> trailingExtents(MemRefType memref, VectorType vector) {
  SmallVector<int64_t> extents(memref.getRank(), 1);
  int64_t offset = memref.getRank() - vector.getRank();
  for (int64_t i = 0; i < vector.getRank(); ++i)
    if (offset + i >= 0)
      extents[offset + i] = vector.getDimSize(i);
  return extents;
}

/// Through a permutation map: memref dims it does not name touch one element.
SmallVector<int64_t> mappedExtents(MemRefType memref, VectorType vector,
                                   AffineMap map) {
  SmallVector<int64_t> extents(memref.getRank(), 1);
  for (auto [i, expr] : llvm::enumerate(map.getResults()))
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      extents[dim.getPosition()] = vector.getDimSize(i);
  return extents;
}

std::optional<Access> accessOf(Operation *op) {
  auto make = [](Value memref, ValueRange indices, VectorType vector,
                 std::optional<AffineMap> map) -> std::optional<Access> {
    auto type = dyn_cast<MemRefType>(memref.getType());
    if (!type || int64_t(indices.size()) != type.getRank())
      return std::nullopt;
    return Access{type, indices,
                  map ? mappedExtents(type, vector, *map)
                      : trailingExtents(type, vector)};
  };
  return llvm::TypeSwitch<Operation *, std::optional<Access>>(op)
      .Case([&](vector::LoadOp o) {
        return make(o.getBase(), o.getIndices(), o.getVectorType(), {});
      })
      .Case([&](vector::StoreOp o) {
        return make(o.getBase(), o.getIndices(), o.getVectorType(), {});
      })
      .Case([&](vector::TransferReadOp o) {
        return make(o.getSource(), o.getIndices(), o.getVectorType(),
                    o.getPermutationMap());
      })
      .Case([&](vector::TransferWriteOp o) {
        return make(o.getSource(), o.getIndices(), o.getVectorType(),
                    o.getPermutationMap());
      })
      .Case([&](tpu::LoadOp o) {
        return make(o.getBase(), o.getIndices(), o.getResult().getType(), {});
      })
      .Case([&](tpu::StoreOp o) {
        return make(o.getBase(), o.getIndices(), o.getValueToStore().getType(),
                    {});
      })
      .Default([](Operation *) { return std::nullopt; });
}

std::string str(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

std::string str(Attribute a) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << a;
  return s;
}

std::string str(Value v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  v.printAsOperand(os, OpPrintingFlags());
  return s;
}

/// The tile extent of each memref dim (1: not tiled) and why.
struct Tiling {
  SmallVector<int64_t> extents;
  unsigned bits = 0;
  std::string xla;    // the layout as XLA writes it, when it has that form
  std::string source; // with {D} and {T} to fill in
};

/// "f32", "bf16", "s32", "pred", ... as XLA names element types.
std::optional<std::string> xlaElementName(Type t) {
  if (t.isBF16())
    return std::string("bf16");
  if (t.isF16() || t.isF32() || t.isF64())
    return "f" + std::to_string(t.getIntOrFloatBitWidth());
  if (t.isIndex())
    return std::string("s64");
  if (auto i = dyn_cast<IntegerType>(t)) {
    if (i.getWidth() == 1)
      return std::string("pred");
    return (i.isUnsigned() ? "u" : "s") + std::to_string(i.getWidth());
  }
  return std::nullopt;
}

/// The memref's layout in XLA's text form, `f32[4,256]{1,0:T(8,128)}`, when
/// its shape is static and its tiles are laid out row-major (the strides
/// given, if any, are those of row-major tiles). `tessel layout explain`
/// reads it.
std::string xlaLayout(MemRefType type, ArrayRef<SmallVector<int64_t>> tiles,
                      ArrayRef<int64_t> strides) {
  std::optional<std::string> element = xlaElementName(type.getElementType());
  if (!element || !type.hasStaticShape() || tiles.empty() ||
      tiles.front().size() > size_t(type.getRank()))
    return "";
  unsigned rank = type.getRank();
  if (!strides.empty()) {
    SmallVector<int64_t> counts(type.getShape());
    ArrayRef<int64_t> first = tiles.front();
    for (size_t i = 0; i < first.size(); ++i) {
      int64_t &c = counts[rank - first.size() + i];
      c = (c + first[i] - 1) / first[i];
    }
    int64_t stride = 1;
    for (unsigned d = rank; d-- > 0;) {
      if (strides[d] != stride)
        return "";
      stride *= counts[d];
    }
  }
  std::string text = *element + "[";
  for (unsigned d = 0; d < rank; ++d)
    text += (d ? "," : "") + std::to_string(type.getDimSize(d));
  text += "]{";
  for (unsigned d = rank; d-- > 0;)
    text += std::to_string(d) + (d ? "," : "");
  text += ":T";
  for (ArrayRef<int64_t> tile : tiles) {
    text += "(";
    for (size_t i = 0; i < tile.size(); ++i)
      text += (i ? "," : "") + std::to_string(tile[i]);
    text += ")";
  }
  return text + "}";
}

std::optional<Tiling> tilingOf(MemRefType type) {
  Type element = type.getElementType();
  if (!element.isIntOrIndexOrFloat())
    return std::nullopt;
  unsigned bits = element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
  unsigned rank = type.getRank();
  Tiling t;
  t.extents.assign(rank, 1);
  t.bits = bits;
  if (auto tiled = dyn_cast<tpu::TiledLayoutAttr>(type.getLayout())) {
    for (unsigned d = 0; d < rank; ++d)
      t.extents[d] = tiled.tileExtent(d, rank);
    t.source = "the layout " + str(Attribute(tiled)) + " tiles dimension ";
    SmallVector<SmallVector<int64_t>> tiles;
    for (DenseI64ArrayAttr tile : tiled.getTiles())
      tiles.emplace_back(tile.asArrayRef());
    t.xla = xlaLayout(type, tiles, tiled.getTileStrides());
    return t;
  }
  if (!isa_and_nonnull<tpu::MemorySpaceAttr>(type.getMemorySpace()) ||
      rank == 0)
    return std::nullopt;
  int64_t packing = bits < 32 ? 32 / bits : 1;
  SmallVector<SmallVector<int64_t>> tiles;
  if (rank == 1) {
    t.extents[0] = 1024 * packing;
    tiles.push_back({t.extents[0]});
  } else {
    t.extents[rank - 2] = 8 * packing;
    t.extents[rank - 1] = 128;
    tiles.push_back({8 * packing, 128});
    if (packing > 1)
      tiles.push_back({packing, 1});
  }
  std::string tile;
  for (ArrayRef<int64_t> one : tiles) {
    tile += "(";
    for (size_t i = 0; i < one.size(); ++i)
      tile += (i ? "," : "") + std::to_string(one[i]);
    tile += ")";
  }
  t.xla = xlaLayout(type, tiles, {});
  t.source = str(Type(type)) + " has no tiled layout, so it gets the " +
             "default tiling " + tile + " of " + std::to_string(bits) +
             "-bit elements in " + str(type.getMemorySpace()) +
             ", which tiles dimension ";
  return t;
}

/// "nothing is known about %b", "%x is a multiple of 32 only", ...
std::string describe(const Divisibility &d, const std::string &subject) {
  if (d.isConstant())
    return subject + " is the constant " + std::to_string(d.remainder());
  if (d.isUnknown())
    return "nothing is known about " + subject;
  if (d.remainder() == 0)
    return subject + " is a multiple of " + std::to_string(d.modulus()) +
           " only";
  return "every value of " + subject + " is " + std::to_string(d.remainder()) +
         " mod " + std::to_string(d.modulus());
}

/// The term of an index that breaks the proof: `value` must be a multiple of
/// `need` for the index to be aligned.
struct Blame {
  Value value;
  int64_t need;
};

Blame blame(Value v, int64_t need, const DataFlowSolver &solver) {
  auto proven = [&](Value x, int64_t n) {
    return getDivisibility(solver, x).isMultipleOf(n).verdict ==
           Verdict::Proven;
  };
  for (int steps = 0; steps < 64; ++steps) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!loop || arg != loop.getInductionVar() ||
          !proven(loop.getStep(), need) || proven(loop.getLowerBound(), need))
        return {v, need};
      v = loop.getLowerBound(); // the step is aligned, the start is not
      continue;
    }
    Operation *op = v.getDefiningOp();
    if (isa<arith::AddIOp, arith::SubIOp>(op)) {
      // Follow the one term that is not aligned; when both are not, the sum
      // itself is the term to blame.
      bool first = proven(op->getOperand(0), need),
           second = proven(op->getOperand(1), need);
      if (first == second)
        return {v, need};
      v = first ? op->getOperand(1) : op->getOperand(0);
      continue;
    }
    if (isa<arith::MulIOp>(op)) {
      Value a = op->getOperand(0), b = op->getOperand(1);
      std::optional<int64_t> c = getDivisibility(solver, b).constantValue();
      if (!c) {
        std::swap(a, b);
        c = getDivisibility(solver, b).constantValue();
      }
      if (!c || *c == 0)
        return {v, need};
      int64_t rest = need / std::gcd(need, *c < 0 ? -*c : *c);
      if (rest == 1)
        return {v, need}; // aligned in math, lost to a possible wrap
      v = a;
      need = rest;
      continue;
    }
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
            arith::ExtUIOp>(op)) {
      v = op->getOperand(0);
      continue;
    }
    return {v, need};
  }
  return {v, need};
}

/// What a blamed value is, in words: "%arg2 (a function argument)".
std::string termText(Value v, const ValueNamer &name) {
  std::string what;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *parent = arg.getOwner()->getParentOp();
    auto loop = dyn_cast<scf::ForOp>(parent);
    if (loop && arg == loop.getInductionVar())
      what = "the induction variable of an scf.for";
    else if (arg.getOwner()->isEntryBlock() && isa<FunctionOpInterface>(parent))
      what = "a function argument";
    else
      what = "a block argument";
  } else {
    what = "the result of " + v.getDefiningOp()->getName().getStringRef().str();
  }
  return name(v) + " (" + what + ")";
}

std::string fixText(const Blame &b, int64_t multiple, unsigned dim,
                    const DataFlowSolver &solver, const ValueNamer &name) {
  Divisibility known = getDivisibility(solver, b.value);
  std::string n = std::to_string(b.need);
  bool hopeless = known.isMultipleOf(b.need).verdict == Verdict::ProvenNot;
  if (!hopeless)
    return "if every value of " + name(b.value) + " is a multiple of " + n +
           ", promise it: `%aligned = tpu.assume_multiple " + name(b.value) +
           ", " + n + " : " + str(b.value.getType()) + "` and use %aligned" +
           " in its place";
  std::string t = std::to_string(multiple);
  auto arg = dyn_cast<BlockArgument>(b.value);
  auto loop =
      arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()) : scf::ForOp();
  if (loop && arg == loop.getInductionVar()) {
    std::optional<int64_t> lb =
        getDivisibility(solver, loop.getLowerBound()).constantValue();
    std::optional<int64_t> step =
        getDivisibility(solver, loop.getStep()).constantValue();
    if (lb && step && *step > 0) {
      int64_t stride = (*step + multiple - 1) / multiple * multiple;
      return "the chunks start at " + std::to_string(*lb) + ", " +
             std::to_string(*lb + *step) + ", " +
             std::to_string(*lb + 2 * *step) +
             ", ...: repack or pad the data in dimension " +
             std::to_string(dim) + " so that the first chunk starts at 0 " +
             "and chunks are " + std::to_string(stride) + " apart (0, " +
             std::to_string(stride) + ", " + std::to_string(2 * stride) +
             ", ...), or load the aligned tile and rotate the values into " +
             "place";
    }
  }
  return "no promise can help: pad the data in dimension " +
         std::to_string(dim) + " so that the index becomes a multiple of " + t +
         ", or load the aligned tile that holds it (the index rounded " +
         "down to a multiple of " + t + ") and rotate the values into place";
}

AlignmentFailure explain(Operation *op, unsigned dim, Value index,
                         int64_t multiple, const Tiling &tiling,
                         const DivisibilityQuery &query,
                         const DataFlowSolver &solver, const ValueNamer &name) {
  AlignmentFailure f;
  f.op = op;
  f.dim = dim;
  f.multiple = multiple;
  f.verdict = query.verdict;
  std::string t = std::to_string(multiple);
  f.message = "cannot statically prove that index in dimension " +
              std::to_string(dim) + " is a multiple of " + t;
  f.source = "the multiple " + t + " is the tile: " + tiling.source +
             std::to_string(dim) + " by " + t;
  if (!tiling.xla.empty())
    f.source += " (as XLA writes the layout: " + tiling.xla + ")";
  Blame b = blame(index, multiple, solver);
  f.term = "the term " + termText(b.value, name) + " breaks the proof: " +
           describe(getDivisibility(solver, b.value), "it");
  if (b.need != multiple)
    f.term += "; it must be a multiple of " + std::to_string(b.need) +
              " for the index to be a multiple of " + t;
  Divisibility known = getDivisibility(solver, index);
  std::string example = std::to_string(query.counterexample.value_or(1));
  if (query.verdict == Verdict::ProvenNot)
    f.status = "proven misaligned: " + describe(known, "the index") +
               ", so no value is a multiple of " + t + " (e.g. " + example +
               ")";
  else
    f.status =
        "unknown, not proven misaligned: " + describe(known, "the index") +
        "; it could be " + example + ", which is not a multiple of " + t;
  f.fix = "fix: " + fixText(b, multiple, dim, solver, name);
  return f;
}

void check(Operation *op, const Access &access, const Tiling &tiling,
           const DataFlowSolver &solver, const ValueNamer &name,
           AlignmentReport &report) {
  unsigned rank = access.type.getRank();
  for (unsigned d = 0; d < rank; ++d) {
    int64_t multiple = tiling.extents[d];
    if (multiple <= 1)
      continue;
    Value index = access.indices[d];
    Divisibility known = getDivisibility(solver, index);
    if (known.isConstant())
      continue; // static indices are exempt
    if (tiling.bits == 32 && rank >= 2 && d == rank - 2 &&
        access.extents[d] == 1)
      continue; // one row of 32-bit elements
    ++report.indicesChecked;
    DivisibilityQuery query = known.isMultipleOf(multiple);
    if (query.verdict != Verdict::Proven)
      report.failures.push_back(
          explain(op, d, index, multiple, tiling, query, solver, name));
  }
}

} // namespace

AlignmentReport verifyAlignment(Operation *root, const DataFlowSolver &solver,
                                const ValueNamer &namer) {
  ValueNamer name = namer ? namer : ValueNamer([](Value v) { return str(v); });
  AlignmentReport report;
  root->walk([&](Operation *op) {
    std::optional<Access> access = accessOf(op);
    if (!access)
      return;
    std::optional<Tiling> tiling = tilingOf(access->type);
    if (!tiling)
      return;
    ++report.accessesChecked;
    check(op, *access, *tiling, solver, name, report);
  });
  return report;
}

AlignmentReport verifyAlignment(Operation *root, const ValueNamer &namer) {
  DataFlowSolver solver;
  loadDivisibilityAnalysis(solver);
  if (failed(solver.initializeAndRun(root)))
    return AlignmentReport();
  return verifyAlignment(root, solver, namer);
}

void emitAlignmentError(const AlignmentFailure &failure) {
  InFlightDiagnostic diag = failure.op->emitError(failure.message);
  diag.attachNote(failure.op->getLoc()) << failure.source;
  diag.attachNote(failure.op->getLoc()) << failure.term;
  diag.attachNote(failure.op->getLoc()) << failure.status;
  diag.attachNote(failure.op->getLoc()) << failure.fix;
}

} // namespace tessel
