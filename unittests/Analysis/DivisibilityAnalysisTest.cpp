//===- DivisibilityAnalysisTest.cpp - The analysis on random programs -----===//
//
// Soundness of the dataflow analysis as a whole (which op maps to which
// transfer function, widths, casts, promises): random index programs are
// analysed once, then run on random inputs by substituting constants for
// the arguments and letting MLIR's folders compute every value. A value the
// analysis proves a multiple must be one; a value proven not must not be.
//
//===----------------------------------------------------------------------===//
#include "tessel/Analysis/DivisibilityAnalysis.h"
#include "tessel/Dialect/TpuDialect.h"

#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir;
using namespace tessel;

namespace {

/// Builds `func @f(%a: index, %b: index, %n: i32)` whose body is `ops`
/// random integer ops and returns every value it made.
class ProgramBuilder {
public:
  ProgramBuilder(MLIRContext &context, std::mt19937_64 &rng)
      : b(&context), rng(rng) {}

  OwningOpRef<ModuleOp> build(int ops) {
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    Type index = b.getIndexType(), i32 = b.getI32Type();
    auto func = b.create<func::FuncOp>(
        loc, "f", b.getFunctionType({index, index, i32}, {}));
    Block *entry = func.addEntryBlock();
    b.setInsertionPointToEnd(entry);
    // %a is promised a multiple of 128.
    values.push_back(b.create<tpu::AssumeMultipleOp>(
        loc, index, entry->getArgument(0), b.getI32IntegerAttr(128)));
    values.push_back(entry->getArgument(1));
    values.push_back(entry->getArgument(2));
    for (int i = 0; i < ops; ++i)
      values.push_back(randomOp(loc));
    b.create<func::ReturnOp>(loc, values);
    func.setFunctionType(
        b.getFunctionType({index, index, i32}, ValueRange(values).getTypes()));
    return module;
  }

  std::vector<Value> values;

private:
  Value constant(Type type) {
    int64_t choices[] = {0, 1, 2, 3, 7, 8, 24, 32, 128, 256, -1, -8, -128};
    int64_t c = choices[rng() % std::size(choices)];
    if (rng() % 4 == 0)
      c = int64_t(rng() % 1000);
    else if (rng() % 4 == 0)
      c = int64_t(rng()) * 3; // large: products and sums wrap
    if (type.isInteger(32))
      c = int32_t(c);
    return b.create<arith::ConstantOp>(b.getUnknownLoc(), type,
                                       b.getIntegerAttr(type, c));
  }

  Value pick(Type type) {
    std::vector<Value> same;
    for (Value v : values)
      if (v.getType() == type)
        same.push_back(v);
    if (same.empty() || rng() % 3 == 0)
      return constant(type);
    return same[rng() % same.size()];
  }

  Value randomOp(Location loc) {
    Type type = rng() % 4 == 0 ? Type(b.getI32Type()) : Type(b.getIndexType());
    Value x = pick(type);
    Value y = rng() % 2 ? constant(type) : pick(type);
    Type other = type.isIndex() ? Type(b.getI32Type()) : Type(b.getIndexType());
    switch (rng() % 24) {
    case 0:
      return b.create<arith::AddIOp>(loc, x, y);
    case 1:
      return b.create<arith::SubIOp>(loc, x, y);
    case 2:
      return b.create<arith::MulIOp>(loc, x, y);
    case 3:
      return b.create<arith::DivSIOp>(loc, x, y);
    case 4:
      return b.create<arith::DivUIOp>(loc, x, y);
    case 5:
      return b.create<arith::FloorDivSIOp>(loc, x, y);
    case 6:
      return b.create<arith::CeilDivSIOp>(loc, x, y);
    case 7:
      return b.create<arith::RemSIOp>(loc, x, y);
    case 8:
      return b.create<arith::RemUIOp>(loc, x, y);
    case 9:
      return b.create<arith::ShLIOp>(loc, x, y);
    case 10:
      return b.create<arith::ShRSIOp>(loc, x, y);
    case 11:
      return b.create<arith::ShRUIOp>(loc, x, y);
    case 12:
      return b.create<arith::AndIOp>(loc, x, y);
    case 13:
      return b.create<arith::OrIOp>(loc, x, y);
    case 14:
      return b.create<arith::XOrIOp>(loc, x, y);
    case 15:
      return b.create<arith::MinSIOp>(loc, x, y);
    case 16:
      return b.create<arith::MaxUIOp>(loc, x, y);
    case 17: {
      Value c = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, y);
      return b.create<arith::SelectOp>(loc, c, x, pick(type));
    }
    case 18:
      return b.create<arith::IndexCastOp>(loc, other, x);
    case 19:
      return b.create<arith::IndexCastUIOp>(loc, other, x);
    case 20:
      return type.isIndex()
                 ? Value(b.create<arith::AddIOp>(loc, x, y))
                 : Value(b.create<arith::ExtSIOp>(loc, b.getI64Type(), x));
    case 21:
      return type.isIndex()
                 ? Value(b.create<arith::MulIOp>(loc, x, y))
                 : Value(b.create<arith::ExtUIOp>(loc, b.getI64Type(), x));
    case 22:
      return type.isIndex()
                 ? Value(b.create<arith::SubIOp>(loc, x, y))
                 : Value(b.create<arith::TruncIOp>(loc, b.getI16Type(), x));
    default:
      return b.create<tpu::AssumeMultipleOp>(loc, type, x,
                                             b.getI32IntegerAttr(8));
    }
  }

  OpBuilder b;
  std::mt19937_64 &rng;
};

TEST(DivisibilityAnalysisTest, SoundOnRandomPrograms) {
  MLIRContext context;
  context
      .loadDialect<arith::ArithDialect, func::FuncDialect, tpu::TpuDialect>();
  std::mt19937_64 rng(11);
  int proven = 0, provenNot = 0, checked = 0;
  for (int program = 0; program < 600; ++program) {
    ProgramBuilder builder(context, rng);
    OwningOpRef<ModuleOp> module = builder.build(12);
    DataFlowSolver solver;
    loadDivisibilityAnalysis(solver);
    ASSERT_TRUE(succeeded(solver.initializeAndRun(*module)));
    std::vector<Divisibility> facts;
    for (Value v : builder.values)
      facts.push_back(getDivisibility(solver, v));

    for (int run = 0; run < 8; ++run) {
      // The same program with constant arguments (honouring the promises:
      // every promised value is made a multiple by rounding it down).
      OwningOpRef<ModuleOp> copy = module->clone();
      auto func = cast<func::FuncOp>(copy->getBody()->front());
      OpBuilder b(&context);
      b.setInsertionPointToStart(&func.getBody().front());
      int64_t args[] = {int64_t(rng() % 100000 - 50000) * 128,
                        int64_t(rng() % 2000) - 1000, int64_t(int32_t(rng()))};
      for (unsigned i = 0; i < 3; ++i) {
        Value arg = func.getArgument(i);
        arg.replaceAllUsesWith(b.create<arith::ConstantOp>(
            b.getUnknownLoc(), arg.getType(),
            b.getIntegerAttr(arg.getType(), args[i])));
      }
      bool promisesHold = true;
      func.walk([&](tpu::AssumeMultipleOp op) {
        // A promise on a computed value holds only if the value is a
        // multiple; fold first, then check below.
        op.getResult().replaceAllUsesWith(op.getValue());
      });
      (void)applyPatternsAndFoldGreedily(copy->getOperation(),
                                         RewritePatternSet(&context));
      // Promises in the original that fail on these inputs make the run
      // meaningless (the analysis trusts them): check each one.
      auto original = cast<func::FuncOp>(module->getBody()->front());
      auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
      auto origRet =
          cast<func::ReturnOp>(original.getBody().front().getTerminator());
      std::vector<std::optional<int64_t>> concrete;
      for (Value v : ret.getOperands()) {
        IntegerAttr attr;
        if (auto c = v.getDefiningOp<arith::ConstantOp>())
          attr = dyn_cast<IntegerAttr>(c.getValue());
        concrete.push_back(
            attr ? std::optional<int64_t>(attr.getValue().getSExtValue())
                 : std::nullopt);
      }
      for (auto [i, v] : llvm::enumerate(origRet.getOperands()))
        if (auto promise = v.getDefiningOp<tpu::AssumeMultipleOp>()) {
          std::optional<int64_t> value = concrete[i];
          if (!value || *value % int64_t(promise.getMultiple()) != 0)
            promisesHold = false;
        }
      if (!promisesHold)
        continue;
      for (size_t i = 0; i < concrete.size(); ++i) {
        if (!concrete[i])
          continue; // undefined on these inputs (division by zero, ...)
        ++checked;
        for (int64_t n : {2, 3, 8, 24, 128, 1024}) {
          Verdict verdict = facts[i].isMultipleOf(n).verdict;
          if (verdict == Verdict::Proven) {
            ++proven;
            ASSERT_EQ(*concrete[i] % n, 0)
                << "value " << i << " is " << facts[i].print()
                << " but computes " << *concrete[i];
          } else if (verdict == Verdict::ProvenNot) {
            ++provenNot;
            ASSERT_NE(*concrete[i] % n, 0)
                << "value " << i << " is " << facts[i].print()
                << " but computes " << *concrete[i];
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 5000);
  EXPECT_GT(proven, 1000);
  EXPECT_GT(provenNot, 100);
}

} // namespace
