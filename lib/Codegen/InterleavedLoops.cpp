//===- InterleavedLoops.cpp - Interleave hints for latency-bound loops ----===//
//
// Finds the innermost loops whose iterations are long independent chains of
// floating-point work and asks the loop vectorizer to interleave them
// (InterleavedLoops.h).
//
//===----------------------------------------------------------------------===//
#include "InterleavedLoops.h"
#include "HalfConversionLoops.h"

#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>

namespace tessel {

namespace {

bool isFloat(const llvm::Value *value) {
  return value->getType()->isFPOrFPVectorTy();
}

/// Whether `loop` computes in vectors already (an emitter's register
/// transposes, vector loads): the vectorizer leaves such loops alone, and
/// interleaving them would only unroll.
bool hasVectors(const llvm::Loop &loop) {
  for (const llvm::BasicBlock *block : loop.blocks())
    for (const llvm::Instruction &instruction : *block)
      if (instruction.getType()->isVectorTy())
        return true;
  return false;
}

/// Whether every load and store of `loop` reads or writes the same address
/// in each iteration or the next element after the last one's: the
/// vectorizer turns such accesses into vector loads and stores. Other
/// accesses (through udiv and urem of the index, gathers) become one
/// scalar access per lane; interleaving those multiplies them, and LLVM
/// 19's vectorizer took minutes on such a loop (its sinkScalarOperands).
bool accessesAreConsecutive(llvm::Loop &loop,
                            llvm::ScalarEvolution &evolution) {
  const llvm::DataLayout &layout =
      loop.getHeader()->getModule()->getDataLayout();
  for (llvm::BasicBlock *block : loop.blocks())
    for (llvm::Instruction &instruction : *block) {
      llvm::Value *pointer = llvm::getLoadStorePointerOperand(&instruction);
      if (!pointer)
        continue;
      const llvm::SCEV *address = evolution.getSCEV(pointer);
      if (evolution.isLoopInvariant(address, &loop))
        continue;
      const auto *recurrence = llvm::dyn_cast<llvm::SCEVAddRecExpr>(address);
      if (!recurrence || recurrence->getLoop() != &loop ||
          !recurrence->isAffine())
        return false;
      const auto *step = llvm::dyn_cast<llvm::SCEVConstant>(
          recurrence->getStepRecurrence(evolution));
      llvm::Type *type = llvm::getLoadStoreType(&instruction);
      if (!step || step->getAPInt().getSExtValue() !=
                       static_cast<int64_t>(
                           layout.getTypeStoreSize(type).getFixedValue()))
        return false;
    }
  return true;
}

/// The floating-point operations of one iteration of `loop`: every
/// instruction other than a load, store or phi that computes a
/// floating-point value or reads one (compares, conversions to integers,
/// bitcasts of floats, calls of math intrinsics).
int floatingPointOps(const llvm::Loop &loop) {
  int ops = 0;
  for (const llvm::BasicBlock *block : loop.blocks())
    for (const llvm::Instruction &instruction : *block) {
      if (llvm::isa<llvm::LoadInst, llvm::StoreInst, llvm::PHINode>(
              instruction))
        continue;
      bool floating =
          isFloat(&instruction) ||
          std::any_of(instruction.op_begin(), instruction.op_end(),
                      [](const llvm::Use &use) { return isFloat(use.get()); });
      ops += floating;
    }
  return ops;
}

} // namespace

int hintInterleavedLoops(llvm::Module &module, unsigned vectorBits,
                         const llvm::StringSet<> &skip) {
  llvm::TargetLibraryInfoImpl libraryInfo{
      llvm::Triple(module.getTargetTriple())};
  int marked = 0;
  for (llvm::Function &function : module) {
    if (function.isDeclaration() || skip.contains(function.getName()))
      continue;
    llvm::DominatorTree dominators(function);
    llvm::LoopInfo loops(dominators);
    if (loops.empty())
      continue;
    llvm::TargetLibraryInfo library(libraryInfo, &function);
    llvm::AssumptionCache assumptions(function);
    llvm::ScalarEvolution evolution(function, library, assumptions, dominators,
                                    loops);
    for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
      if (!loop->isInnermost() || loop->getLoopID() || !loop->getLoopLatch() ||
          hasVectors(*loop) || carriesFloat(*loop))
        continue;
      int ops = floatingPointOps(*loop);
      if (ops < kInterleaveTwoFrom || 2 * ops > kMaxInterleavedOps ||
          !accessesAreConsecutive(*loop, evolution))
        continue;
      // How often the header runs; where it is the exit test, the body
      // runs once less.
      unsigned trips = evolution.getSmallConstantTripCount(loop);
      if (trips > 0 && loop->getExitingBlock() != loop->getLoopLatch())
        --trips;
      unsigned lanes = std::max(1u, vectorBits / widestFloatBits(*loop));
      unsigned count =
          ops >= kInterleaveFourFrom && 4 * ops <= kMaxInterleavedOps ? 4 : 2;
      while (count > 1 && uint64_t(count) * lanes > trips)
        count /= 2;
      if (count < 2)
        continue;
      loop->setLoopID(loopIdWithHint(function.getContext(),
                                     "llvm.loop.interleave.count", count));
      ++marked;
    }
  }
  return marked;
}

} // namespace tessel
